"""The calls the rollout guard makes: the registry's rollouts and agents, and
the decisions context's counts, all with the service credential; and the
episode credit it reads from this context's own ledger."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

import grpc
from sqlalchemy.ext.asyncio import AsyncEngine

from outrider.rpc import refusal_metadata
from outrider.v1 import common_pb2, registry_pb2, registry_pb2_grpc
from services.common import callers
from services.common.clients import ContextCallError
from services.outcomes import store
from services.outcomes.clients import retrying
from services.outcomes.rules.autonomy_guard import GuardedAgent
from services.outcomes.rules.rollout_guard import ArmCredit, ArmEvidence, GuardSettings, Judgement

_log = logging.getLogger(__name__)

PAGE = 200


@dataclass(frozen=True, slots=True)
class ActiveRollout:
    id: str
    steps: tuple[int, ...]
    step: int
    running: bool
    guard: GuardSettings


class CreditLedger:
    """Each rollout arm's episode credit, as booked in this context's ledger."""

    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine

    async def tally_rollout_credits(self, rollout_ids: Sequence[str]) -> dict[tuple[str, str], ArmCredit]:
        async with self._engine.connect() as conn:
            return await store.tally_rollout_credits(conn, rollout_ids=rollout_ids)


class RegistryClient:
    """The registry's rollouts as the guard reads and judges them."""

    def __init__(self, stub: registry_pb2_grpc.RegistryStub) -> None:
        self._stub = stub

    async def list_rollouts(self, state: str) -> list[ActiveRollout]:
        found: list[ActiveRollout] = []
        cursor = ""
        while True:
            reply = await self._page(state, cursor)
            found.extend(_active(item) for item in reply.items)
            if not reply.next_cursor or not reply.items:
                return found
            cursor = reply.next_cursor

    async def _page(self, state: str, cursor: str) -> registry_pb2.ListRolloutsResponse:
        request = registry_pb2.ListRolloutsRequest(state=state, page=common_pb2.PageRequest(cursor=cursor, limit=PAGE))
        reply: registry_pb2.ListRolloutsResponse = await retrying(
            lambda: self._stub.ListRollouts(request), what="ListRollouts"
        )
        return reply

    async def judge(self, rollout_id: str, judgement: Judgement) -> bool:
        """Hand the registry one verdict; False when it refused it as stale
        (the rollout moved since it was counted), which the next pass judges again."""
        request = registry_pb2.JudgeRolloutRequest(
            id=rollout_id,
            verdict=judgement.verdict.value,
            step=judgement.step,
            control=_evidence(judgement.control),
            candidate=_evidence(judgement.candidate),
            p_harm=judgement.p_harm,
            reason=judgement.reason,
        )
        # The registry takes a verdict only from the platform acting for nobody.
        acting_for = callers.current.set(None)
        try:
            await self._stub.JudgeRollout(request)
        except ContextCallError as error:
            if error.status is not grpc.StatusCode.FAILED_PRECONDITION:
                raise
            code, _ = refusal_metadata(error.error)
            _log.info(
                "rollout verdict refused; the rollout moved since it was counted",
                extra={"rollout_id": rollout_id, "verdict": judgement.verdict.value, "error_code": code},
            )
            return False
        finally:
            callers.current.reset(acting_for)
        return True

    async def list_agents(self) -> list[GuardedAgent]:
        reply: registry_pb2.ListAgentsResponse = await retrying(
            lambda: self._stub.ListAgents(registry_pb2.ListAgentsRequest()), what="ListAgents"
        )
        return [GuardedAgent(a.id, autonomous=a.autonomous, autonomy_guard=a.autonomy_guard) for a in reply.items]

    async def demote(self, agent_id: str) -> bool:
        """Switch the agent's autonomy off; False when the registry refused it
        (a person took the guard off, or the agent away, since it was listed)."""
        request = registry_pb2.UpdateAgentRequest(id=agent_id, autonomous=False)
        # The registry audits it as autonomy-guard only from the platform acting for nobody.
        acting_for = callers.current.set(None)
        try:
            await self._stub.UpdateAgent(request)
        except ContextCallError as error:
            if error.status not in (grpc.StatusCode.PERMISSION_DENIED, grpc.StatusCode.NOT_FOUND):
                raise
            code, _ = refusal_metadata(error.error)
            _log.info("autonomy demotion refused", extra={"agent_id": agent_id, "error_code": code})
            return False
        finally:
            callers.current.reset(acting_for)
        return True


def _active(item: registry_pb2.Rollout) -> ActiveRollout:
    return ActiveRollout(
        id=item.id,
        steps=tuple(item.steps),
        step=item.step,
        running=item.state == "running",
        guard=GuardSettings(
            max_drop=item.guard.max_drop, confidence=item.guard.confidence, min_judged=item.guard.min_judged
        ),
    )


def _evidence(arm: ArmEvidence) -> registry_pb2.ArmEvidence:
    return registry_pb2.ArmEvidence(
        judged=arm.judged,
        successes=arm.successes,
        failures=arm.failures,
        unknown=arm.unknown,
        pending=arm.pending,
        mean=arm.mean,
        low=arm.low,
        high=arm.high,
    )
