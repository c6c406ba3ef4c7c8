"""One pass of the rollout guard, and the loop that runs it after every sweep and on a timer.

A pass lists the running and the paused rollouts, counts every arm of all of
them in one call to the decisions context, adds each arm's episode credit
from this context's own ledger (conversation turns that answered under the
arm), judges each with the pure rule and hands the registry the verdict. A paused rollout is judged too, so harm found
in the share it still serves halts it, but the rule never advances it.

The autonomy guard's pass runs beside it, woken the same way: it weighs each
opted-in autonomous agent's evidence and switches autonomy off where it says
demote (services.outcomes.rules.autonomy_guard).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import Counter
from collections.abc import Sequence
from typing import Protocol

from services.outcomes.guard.clients import ActiveRollout
from services.outcomes.rules import autonomy_guard, rollout_guard
from services.outcomes.rules.autonomy import ExecutionCount
from services.outcomes.rules.autonomy_guard import Demotion, GuardedAgent
from services.outcomes.rules.rollout_guard import ArmCounts, ArmCredit, Judgement, with_credit

_log = logging.getLogger(__name__)


class RegistryApi(Protocol):
    async def list_rollouts(self, state: str) -> list[ActiveRollout]:
        """Every rollout in that state."""

    async def judge(self, rollout_id: str, judgement: Judgement) -> bool:
        """Hand over one verdict; False when refused as stale."""


class ArmsApi(Protocol):
    async def count_rollout_arms(self, rollout_ids: Sequence[str]) -> dict[tuple[str, str], ArmCounts]:
        """Counts by (rollout id, arm)."""


class CreditsApi(Protocol):
    async def tally_rollout_credits(self, rollout_ids: Sequence[str]) -> dict[tuple[str, str], ArmCredit]:
        """Episode credit by (rollout id, arm)."""


class AgentsApi(Protocol):
    async def list_agents(self) -> list[GuardedAgent]:
        """Every agent, with its autonomy and its guard."""

    async def demote(self, agent_id: str) -> bool:
        """Switch its autonomy off; False when refused."""


class ExecutionsApi(Protocol):
    async def count_executions(self, *, agent_id: str, decision_type: str) -> list[ExecutionCount]:
        """Counts by decision type and execution; an empty decision type gives every type."""


async def guard_pass(registry: RegistryApi, decisions: ArmsApi, credits: CreditsApi) -> Counter[str]:
    """Judge every running and paused rollout once; the verdicts taken, by kind."""
    rollouts = [*await registry.list_rollouts("running"), *await registry.list_rollouts("paused")]
    taken: Counter[str] = Counter()
    if not rollouts:
        return taken
    ids = [r.id for r in rollouts]
    counts = await decisions.count_rollout_arms(ids)
    credited = await credits.tally_rollout_credits(ids)

    def arm(rollout_id: str, name: str) -> ArmCounts:
        key = (rollout_id, name)
        return with_credit(counts.get(key, ArmCounts()), credited.get(key, ArmCredit()))

    for rollout in rollouts:
        judgement = rollout_guard.judge(
            control=arm(rollout.id, "control"),
            candidate=arm(rollout.id, "candidate"),
            settings=rollout.guard,
            steps=rollout.steps,
            step=rollout.step,
            running=rollout.running,
        )
        if await registry.judge(rollout.id, judgement):
            taken[judgement.verdict.value] += 1
            if judgement.verdict is not rollout_guard.Verdict.OBSERVE:
                _log.info(
                    "rollout judged",
                    extra={"rollout_id": rollout.id, "verdict": judgement.verdict.value, "reason": judgement.reason},
                )
        else:
            taken["refused"] += 1
    return taken


async def autonomy_pass(registry: AgentsApi, decisions: ExecutionsApi) -> list[Demotion]:
    """Weigh every opted-in autonomous agent once; the demotions the registry took."""
    agents = autonomy_guard.watched(await registry.list_agents())
    counts = {agent.id: await decisions.count_executions(agent_id=agent.id, decision_type="") for agent in agents}
    taken: list[Demotion] = []
    for demotion in autonomy_guard.demotions(agents, counts):
        if await registry.demote(demotion.agent_id):
            taken.append(demotion)
            _log.info(
                "agent autonomy switched off by the autonomy guard",
                extra={
                    "agent_id": demotion.agent_id,
                    "decision_type": demotion.decision_type,
                    "reason": demotion.reason,
                },
            )
    return taken


class Guard:
    """Runs a pass when a sweep finishes (woken, never awaited by the sweep) and at least every interval."""

    def __init__(
        self,
        registry: RegistryApi,
        decisions: ArmsApi,
        credits: CreditsApi,
        *,
        interval_s: float,
        autonomy: tuple[AgentsApi, ExecutionsApi] | None = None,
    ) -> None:
        self._registry = registry
        self._decisions = decisions
        self._credits = credits
        self._interval_s = interval_s
        # The autonomy guard's APIs; None runs rollout passes only.
        self._autonomy = autonomy
        self._wake = asyncio.Event()

    def wake(self) -> None:
        """Ask for a pass soon; several wake-ups before it runs make one pass."""
        self._wake.set()

    async def run(self) -> None:
        """Until cancelled; a failed pass is logged and the next wake-up or tick retries."""
        while True:
            # The interval passing is as good a reason to look as a sweep.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), timeout=self._interval_s)
            self._wake.clear()
            try:
                await guard_pass(self._registry, self._decisions, self._credits)
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 - one failed pass must not end the guard
                _log.exception("rollout guard pass failed; retrying at the next sweep or interval")
            if self._autonomy is None:
                continue
            try:
                await autonomy_pass(*self._autonomy)
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 - nor may a failed autonomy pass, or stop the rollout passes
                _log.exception("autonomy guard pass failed; retrying at the next sweep or interval")
