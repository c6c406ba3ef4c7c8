"""Two guarded rollouts (DESIGN §9) played through the engine client, one per model.

The worse model is rolled out where the better one is the baseline, and the
guard must halt it; the better model is rolled out where the worse one is
the baseline, and the guard must walk it to every subject. The demo acts as
an engine does: it asks the registry client for each subject's settings,
decides with the model they name, and records the decision under the arm
they carry. It then plays the business outcome and sweeps, so the guard
(woken by every sweep) sees the evidence batch by batch.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final, Protocol

import httpx

from outrider.client.decisions import DecisionRecorder
from outrider.client.registry import RegistryClient, RegistrySnapshot

# The platform's defaults ([5, 25, 50, 100] and 50 judged per arm) suit real
# traffic, where 5 % of a day's subjects is still hundreds of decisions. The
# demo plays its rollouts in batches of a few dozen: at 5 % the first step
# alone would need a thousand decisions for 50 judged candidates. Three
# steps from 20 % and 20 judged per arm let the guard halt the worse model
# and walk the better one to 100 % in a few hundred decisions each, within
# the few seconds the rest of the demo takes. max_drop and confidence keep
# the platform's defaults: those are what the evidence is held to.
STEPS: Final = (20, 50, 100)
MIN_JUDGED: Final = 20
# Decisions per running rollout between two sweeps (two looks of the guard).
BATCH: Final = 40
# Simulated (tests/unit/demo), both rollouts end within about 15 batches (median 8).
MAX_BATCHES: Final = 30
# How long one look of the guard, or the snapshot catching up with it, may take.
LOOK_PATIENCE_S: Final = 10.0
TERMINAL: Final = frozenset({"halted", "aborted", "completed"})
ACTIONS: Final = {
    "stall_response": ("reassign", "wait", "notify_customer"),
    "assignment_failure": ("widen_radius", "escalate", "retry_later"),
}


@dataclass(frozen=True)
class RolloutPlan:
    """One rollout the demo starts: on whom, from which model to which."""

    claim: str
    agent_id: str
    decision_type: str
    baseline: str
    candidate: str
    # The verdict the guard must reach.
    expected: str


@dataclass
class RolloutReport:
    plan: RolloutPlan
    rollout_id: str = ""
    state: str = ""
    percent: int = 0
    # The shares the rollout was at, in order (from its history).
    walked: list[int] = field(default_factory=list)
    arms: dict[str, Any] = field(default_factory=dict)
    p_harm: float | None = None
    reason: str = ""
    decisions: int = 0
    # Decisions the demo made with the candidate's settings.
    candidate_decisions: int = 0
    # A running rollout of the demo's own a crashed run left in the way.
    aborted_stale: str = ""


class Driver(Protocol):
    """What the rollouts need of the fleet driving them."""

    http: httpx.AsyncClient
    console: dict[str, str]

    async def _sweep_once(self) -> int: ...


# Publishes what became of a subject: (decision type, subject, decided at, worked out).
Observe = Callable[[str, str, datetime, bool], Awaitable[None]]


class RolloutFailed(Exception):
    """The platform refused the demo's rollout in a way the demo cannot mend."""


class GuardedRollouts:
    def __init__(
        self,
        fleet: Driver,
        *,
        observe: Observe,
        plans: tuple[RolloutPlan, ...],
        recorder: DecisionRecorder,
        registry: RegistryClient,
        success_rate: Mapping[str, float],
        rng: random.Random,
        contexts: Callable[[str], dict[str, Any]],
        instant: Callable[[], datetime],
        subject_prefix: str,
        failures: list[str],
    ) -> None:
        self.fleet, self.observe, self.recorder, self.registry = fleet, observe, recorder, registry
        self.success_rate, self.rng, self.contexts, self.instant = success_rate, rng, contexts, instant
        self.subject_prefix, self.failures = subject_prefix, failures
        self.reports = [RolloutReport(plan) for plan in plans]
        self.recorded = 0

    async def run(self) -> list[RolloutReport]:
        if await self.registry.wait_for_snapshot(LOOK_PATIENCE_S) is None:
            self.failures.append("the registry snapshot never reached the demo's engine client")
            return self.reports
        try:
            for report in self.reports:
                await self._start(report)
        except RolloutFailed as refused:
            self.failures.append(str(refused))
            return self.reports
        await self._in_snapshot(lambda s: all(self._percent(s, r) == STEPS[0] for r in self.reports))
        for _ in range(MAX_BATCHES):
            running = [r for r in self.reports if r.state not in TERMINAL]
            if not running:
                break
            for report in running:
                await self._decide(report)
            if not await self.recorder.flush(60):
                self.failures.append("rollout decisions were still queued after 60 s")
                break
            if not await self._looked(running):
                break
        await self._settle()
        return self.reports

    async def _start(self, report: RolloutReport) -> None:
        plan = report.plan
        await self._pin(plan)
        created = await self._create(plan)
        if created.status_code == 409 and _code(created) == "ROLLOUT_EXISTS":
            # A crashed demo leaves its rollout running, and one running
            # rollout per agent and decision type would refuse every later
            # run. Reusing it would mix that run's evidence, gathered at a
            # share and baseline nobody knows any more, into this one's
            # claims; aborting it puts its subjects back on the baseline
            # (audited, with the reason) and this run starts clean. Only a
            # rollout of the demo's own change is aborted: anyone else's
            # stays, and the demo says what is in the way.
            stale_id = created.json()["error"]["details"]["rollout_id"]
            stale = await self._get(stale_id)
            if stale["change"] != {"model": plan.candidate}:
                raise RolloutFailed(
                    f"rollout {stale_id} ({stale['change']}) already runs for {plan.agent_id}/{plan.decision_type}"
                )
            aborted = await self.fleet.http.post(
                f"/admin/ai/rollouts/{stale_id}/abort",
                json={"reason": "left running by an earlier demo run; this run starts its own"},
                headers=self.fleet.console,
            )
            aborted.raise_for_status()
            report.aborted_stale = stale_id
            created = await self._create(plan)
        if created.status_code != 201:
            raise RolloutFailed(
                f"the rollout of {plan.candidate} for {plan.agent_id}/{plan.decision_type} was refused:"
                f" {created.status_code} {created.text}"
            )
        self._update(report, created.json())

    async def _pin(self, plan: RolloutPlan) -> None:
        # The baseline is pinned every run: a completed rollout made its
        # candidate the agent's baseline, and a second run would otherwise
        # roll the better model out over itself.
        reply = await self.fleet.http.patch(
            f"/admin/ai/agents/{plan.agent_id}", json={"model": plan.baseline}, headers=self.fleet.console
        )
        reply.raise_for_status()

    async def _create(self, plan: RolloutPlan) -> httpx.Response:
        return await self.fleet.http.post(
            "/admin/ai/rollouts",
            json={
                "agent_id": plan.agent_id,
                "decision_type": plan.decision_type,
                "change": {"model": plan.candidate},
                "steps": list(STEPS),
                "guard": {"min_judged": MIN_JUDGED},
            },
            headers=self.fleet.console,
        )

    async def _get(self, rollout_id: str) -> dict[str, Any]:
        reply = await self.fleet.http.get(f"/admin/ai/rollouts/{rollout_id}", headers=self.fleet.console)
        reply.raise_for_status()
        body: dict[str, Any] = reply.json()
        return body

    async def _decide(self, report: RolloutReport) -> None:
        """One batch of decisions on the rollout's subjects, each with the model its arm gives.

        The recorder stamps each with its arm from the same snapshot, as it
        does for any engine given the registry client.
        """
        plan = report.plan
        facts = []
        for _ in range(BATCH):
            subject = f"{self.subject_prefix}-{plan.decision_type}-{self.recorded}"
            self.recorded += 1
            settings = self.registry.for_subject(plan.agent_id, plan.decision_type, subject)
            model = settings.model or ""
            decided_at = self.instant()
            self.recorder.record(
                decision_type=plan.decision_type,
                agent_id=plan.agent_id,
                subject_id=subject,
                action=self.rng.choice(ACTIONS[plan.decision_type]),
                confidence=round(self.rng.uniform(0.55, 0.95), 2),
                context=self.contexts(plan.decision_type),
                model=model,
                reasoning="simulated",
                decided_at=decided_at,
            )
            report.decisions += 1
            if settings.assignment is not None and settings.assignment.arm == "candidate":
                report.candidate_decisions += 1
            works = self.rng.random() < self.success_rate[model]
            facts.append(self.observe(plan.decision_type, subject, decided_at, works))
        await asyncio.gather(*facts)

    async def _looked(self, running: list[RolloutReport]) -> bool:
        """Sweep until the guard has counted every decision of this batch (or moved the rollout on).

        The facts reach the platform through the stream, so the first sweep
        may come before some of them: each sweep judges what has landed and
        wakes the guard again.
        """
        deadline = time.monotonic() + LOOK_PATIENCE_S
        waiting = list(running)
        while waiting:
            # A batch is far below the 500 one sweep judges.
            await self.fleet._sweep_once()
            await asyncio.sleep(0.05)
            for report in list(waiting):
                self._update(report, await self._get(report.rollout_id))
                if report.state in TERMINAL or _counted(report) >= report.decisions:
                    waiting.remove(report)
            if waiting and time.monotonic() > deadline:
                self.failures += [
                    f"the guard did not count rollout {r.rollout_id}'s decisions within {LOOK_PATIENCE_S:g} s"
                    f" ({_counted(r)} of {r.decisions} counted)"
                    for r in waiting
                ]
                return False
        return await self._in_step(running)

    async def _in_step(self, running: list[RolloutReport]) -> bool:
        """Wait until the engine client's snapshot holds each rollout's share as the registry has it.

        The next batch must be decided at the share the guard has set. Read
        again on every try: a sweep's extra wake-up may have let the guard
        move a rollout on since it was last read.
        """
        deadline = time.monotonic() + LOOK_PATIENCE_S
        while True:
            snapshot = self.registry.snapshot
            for report in running:
                self._update(report, await self._get(report.rollout_id))
            if snapshot is not None and all(self._percent(snapshot, r) == self._share(r) for r in running):
                return True
            left = deadline - time.monotonic()
            if left <= 0:
                self.failures.append(f"the engine client's snapshot did not catch up within {LOOK_PATIENCE_S:g} s")
                return False
            await self.registry.wait_for_change(snapshot.etag if snapshot else None, timeout=min(left, 0.2))

    async def _settle(self) -> None:
        """After the batches: wait (bounded) for each rollout to reach its end, and say so if it does not."""
        for report in self.reports:
            if not report.rollout_id:
                continue
            deadline = time.monotonic() + LOOK_PATIENCE_S
            while report.state not in TERMINAL and time.monotonic() < deadline:
                await asyncio.sleep(0.2)
                self._update(report, await self._get(report.rollout_id))
            if report.state not in TERMINAL:
                self.failures.append(
                    f"rollout {report.rollout_id} of {report.plan.candidate} was still {report.state} at"
                    f" {report.percent} % after {report.decisions} decisions: {report.reason}"
                )
        completed = [r.plan for r in self.reports if r.state == "completed"]
        # A completed rollout's change is the agent's baseline now.
        await self._in_snapshot(lambda s: all(s.model(plan.agent_id) == plan.candidate for plan in completed))

    async def _in_snapshot(self, ready: Callable[[RegistrySnapshot], bool]) -> bool:
        deadline = time.monotonic() + LOOK_PATIENCE_S
        while True:
            snapshot = self.registry.snapshot
            if snapshot is not None and ready(snapshot):
                return True
            left = deadline - time.monotonic()
            if left <= 0:
                self.failures.append(f"the engine client's snapshot did not catch up within {LOOK_PATIENCE_S:g} s")
                return False
            await self.registry.wait_for_change(snapshot.etag if snapshot else None, timeout=left)

    def _percent(self, snapshot: RegistrySnapshot, report: RolloutReport) -> int | float:
        rollout = snapshot.rollouts.get((report.plan.agent_id, report.plan.decision_type))
        return 0 if rollout is None or rollout.id != report.rollout_id else rollout.percent

    @staticmethod
    def _share(report: RolloutReport) -> int:
        # The snapshot lists running and paused rollouts only.
        return 0 if report.state in TERMINAL else report.percent

    def _update(self, report: RolloutReport, rollout: Mapping[str, Any]) -> None:
        report.rollout_id = rollout["id"]
        report.state = rollout["state"]
        report.percent = rollout["percent"]
        report.arms = rollout["arms"]
        report.p_harm = rollout["p_harm"]
        report.reason = rollout["reason"]
        history = rollout.get("history") or []
        walked = [event["percent"] for event in history if event["event"] in ("started", "advanced")]
        report.walked = walked or report.walked or [rollout["percent"]]


def _counted(report: RolloutReport) -> int:
    return sum(int(arm["judged"]) + int(arm["unknown"]) for arm in report.arms.values())


def _code(reply: httpx.Response) -> str:
    try:
        return str(reply.json()["error"]["code"])
    except (ValueError, KeyError, TypeError):
        return ""
