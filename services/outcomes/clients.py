"""The calls the outcomes context makes to another context: the decisions
context's API, as the sweeper and the router use it."""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime
from typing import TypeVar

import grpc

from outrider.v1 import decisions_pb2, decisions_pb2_grpc
from services.common import callers
from services.common.clients import ContextCallError
from services.outcomes import codec
from services.outcomes.rules.advice import OutcomeCount
from services.outcomes.rules.autonomy import ExecutionCount
from services.outcomes.rules.evaluation import DecisionWeights
from services.outcomes.rules.sweep import PendingDecision, Verdict

_log = logging.getLogger(__name__)

Reply = TypeVar("Reply")

# Both calls the sweep makes are safe to repeat: a listing reads, and a
# verdict lands only on a decision still pending. So a failed call is retried
# a few times before the sweep gives up, instead of one transient failure (a
# dropped connection, a decisions replica restarting) failing the sweep.
RETRY_ATTEMPTS = 4
RETRY_BASE_S = 0.05
_RETRYABLE = frozenset({grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.ABORTED})


async def retrying(call: Callable[[], Awaitable[Reply]], *, what: str) -> Reply:
    attempt = 1
    while True:
        try:
            return await call()
        except ContextCallError as error:
            if error.status not in _RETRYABLE or attempt == RETRY_ATTEMPTS:
                raise
            _log.warning(
                "decisions call failed; retrying",
                extra={"call": what, "attempt": attempt, "grpc_code": error.status.name},
            )
        await asyncio.sleep(RETRY_BASE_S * 2**attempt * (1 + random.random()))
        attempt += 1


class DecisionsClient:
    """The decisions context's API as the sweeper and the router use it."""

    def __init__(self, stub: decisions_pb2_grpc.DecisionsStub) -> None:
        self._stub = stub

    async def list_pending(self, *, before: datetime, cursor: str, limit: int) -> tuple[list[PendingDecision], str]:
        request = codec.list_pending_request(before=before, cursor=cursor, limit=limit)
        reply: decisions_pb2.ListPendingResponse = await retrying(
            lambda: self._stub.ListPending(request), what="ListPending"
        )
        return codec.pending_from_proto(reply)

    async def set_outcomes(self, verdicts: Sequence[Verdict]) -> set[str]:
        request = codec.set_outcomes_request(verdicts)
        # The decisions context signs a batch of verdicts as the sweeper's
        # only when it comes from the platform itself, acting for nobody. A
        # sweep an engine asked for (POST /internal/outcomes/sweep) runs in
        # that engine's call, whose identity would otherwise travel with
        # these verdicts and have them refused as the engine's.
        acting_for = callers.current.set(None)
        try:
            reply: decisions_pb2.SetOutcomesResponse = await retrying(
                lambda: self._stub.SetOutcomes(request), what="SetOutcomes"
            )
        finally:
            callers.current.reset(acting_for)
        return set(reply.judged_ids)

    async def count_outcomes(self) -> list[OutcomeCount]:
        reply = await self._stub.CountOutcomes(decisions_pb2.CountOutcomesRequest())
        return codec.outcome_counts_from_proto(reply)

    async def weigh_decisions(self, *, decision_type: str, model: str) -> DecisionWeights:
        request = codec.weigh_decisions_request(decision_type=decision_type, model=model)
        reply: decisions_pb2.DecisionWeights = await retrying(
            lambda: self._stub.WeighDecisions(request), what="WeighDecisions"
        )
        return codec.weights_from_proto(reply)

    async def count_executions(self, *, agent_id: str, decision_type: str) -> list[ExecutionCount]:
        request = codec.count_executions_request(agent_id=agent_id, decision_type=decision_type)
        reply: decisions_pb2.CountExecutionsResponse = await retrying(
            lambda: self._stub.CountExecutions(request), what="CountExecutions"
        )
        return codec.execution_counts_from_proto(reply)
