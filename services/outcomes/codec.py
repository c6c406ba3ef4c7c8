"""Outcomes records to and from protobuf: the only module that sees wire types,
its own context's and the decisions context's it calls."""

from __future__ import annotations

import asyncio
import json
import logging
import random
from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime
from typing import TypeVar

import grpc

from outrider.v1 import decisions_pb2, decisions_pb2_grpc, outcomes_pb2
from outrider.wire import timestamp, timestamp_datetime
from services.common.clients import ContextCallError
from services.common.errors import InvalidArgument
from services.outcomes.advice import Advice, OutcomeCount
from services.outcomes.credit import Conversation, ConversationMetrics, TurnCredit
from services.outcomes.credit import parse_conversation as parse_conversation_payload
from services.outcomes.facts import SubjectFacts
from services.outcomes.ledger import Route
from services.outcomes.sweeper import PendingDecision, SweepReport, Verdict

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
        request = decisions_pb2.ListPendingRequest(decided_before=timestamp(before), after_cursor=cursor, limit=limit)
        reply = await retrying(lambda: self._stub.ListPending(request), what="ListPending")
        items = [
            PendingDecision(
                id=item.id,
                decision_type=item.decision_type,
                subject_id=item.subject_id,
                decided_at=timestamp_datetime(item.decided_at),
                model=item.model or None,
            )
            for item in reply.items
        ]
        return items, reply.next_cursor

    async def set_outcomes(self, verdicts: Sequence[Verdict], *, judged_by: str) -> set[str]:
        request = decisions_pb2.SetOutcomesRequest(
            verdicts=[
                decisions_pb2.OutcomeVerdict(id=v.decision_id, outcome=v.outcome.value, reason=v.reason)
                for v in verdicts
            ],
            judged_by=judged_by,
        )
        reply = await retrying(lambda: self._stub.SetOutcomes(request), what="SetOutcomes")
        return set(reply.judged_ids)

    async def count_outcomes(self) -> list[OutcomeCount]:
        reply = await self._stub.CountOutcomes(decisions_pb2.CountOutcomesRequest())
        return [
            OutcomeCount(decision_type=i.decision_type, outcome=i.outcome, model=i.model, count=i.count)
            for i in reply.items
        ]


# ─── Facts and the sweep ─────────────────────────────────────────────────────


def facts_response(facts: SubjectFacts, *, changed: bool) -> outcomes_pb2.RecordFactsResponse:
    return outcomes_pb2.RecordFactsResponse(
        subject_id=facts.subject_id,
        facts=json.dumps(facts.to_json(), sort_keys=True).encode(),
        changed=changed,
    )


def sweep_response(report: SweepReport) -> outcomes_pb2.SweepResponse:
    return outcomes_pb2.SweepResponse(judged=report.judged, by_outcome=report.as_counts(), scanned=report.scanned)


# ─── Conversations, credits and metrics ──────────────────────────────────────


def _optional(message: object, name: str) -> str | None:
    # A blank trace id or model identifies nothing; reading it as absent keeps
    # a client that writes "" for "none" from binding a decision to "".
    if not message.HasField(name):  # type: ignore[attr-defined]
        return None
    value = getattr(message, name).strip()
    return value or None


def _storable(field: str, value: str | None) -> None:
    # Postgres text cannot hold NUL; refusing it here names the field instead
    # of failing the whole booking inside the database.
    if value is not None and "\x00" in value:
        raise InvalidArgument(f"{field}: contains a NUL character", field=field, code="MALFORMED_CONVERSATION")


def conversation_from_proto(request: outcomes_pb2.SubmitConversationRequest) -> tuple[Conversation, Route]:
    _storable("conversation_id", request.conversation_id)
    for field in ("skill", "decision_type"):
        _storable(field, getattr(request, field))
    for index, turn in enumerate(request.turns):
        for field in ("ref", "model", "trace_id"):
            _storable(f"turns[{index}].{field}", getattr(turn, field))
    payload = {
        "conversation_id": request.conversation_id,
        "turns": [
            {
                "role": turn.role,
                "text": turn.text,
                "ref": turn.ref,
                "model": _optional(turn, "model"),
                "trace_id": _optional(turn, "trace_id"),
            }
            for turn in request.turns
        ],
    }
    conversation = parse_conversation_payload(payload)
    route = Route(skill=_optional(request, "skill"), decision_type=_optional(request, "decision_type"))
    return conversation, route


def credit_to_proto(credit: TurnCredit) -> outcomes_pb2.TurnCredit:
    message = outcomes_pb2.TurnCredit(
        turn_ref=credit.turn_ref,
        credit=credit.credit.value,
        confidence=credit.confidence,
        episode_id=credit.episode_id,
        resolution=credit.resolution.value,
    )
    if credit.model is not None:
        message.model = credit.model
    if credit.trace_id is not None:
        message.trace_id = credit.trace_id
    return message


def metrics_to_proto(metrics: ConversationMetrics, *, model: str | None) -> outcomes_pb2.ConversationMetrics:
    message = outcomes_pb2.ConversationMetrics(
        episodes=metrics.episodes,
        resolved=metrics.resolved,
        abandoned=metrics.abandoned,
        ambiguous=metrics.ambiguous,
        ongoing=metrics.ongoing,
        first_turn_resolutions=metrics.first_turn_resolutions,
        first_turn_resolution_rate=metrics.first_turn_resolution_rate,
        avg_turns_to_resolution=metrics.avg_turns_to_resolution,
        churn_rate=metrics.churn_rate,
        pending=metrics.pending,
    )
    if model is not None:
        message.model = model
    return message


def metrics_model(request: outcomes_pb2.GetConversationMetricsRequest) -> str | None:
    return _optional(request, "model")


# ─── Routing ─────────────────────────────────────────────────────────────────


def seed_of(request: outcomes_pb2.GetRoutingRequest | outcomes_pb2.RecommendModelRequest) -> int | None:
    return request.seed if request.HasField("seed") else None


def _arms(advice: Advice) -> list[outcomes_pb2.ModelArm]:
    return [
        outcomes_pb2.ModelArm(
            model=arm.model,
            successes=arm.posterior.successes,
            failures=arm.posterior.failures,
            alpha=arm.posterior.alpha,
            beta=arm.posterior.beta,
            posterior_mean=arm.posterior.mean,
            pick_probability=arm.pick_probability,
            credit_successes=arm.credit.successes,
            credit_failures=arm.credit.failures,
            decision_successes=arm.decisions.successes,
            decision_failures=arm.decisions.failures,
        )
        for arm in advice.arms
    ]


def routing_to_proto(advice: Advice) -> outcomes_pb2.Routing:
    return outcomes_pb2.Routing(key=advice.key.label, arms=_arms(advice), pick=advice.pick or "", seed=advice.seed)


def recommendation_to_proto(advice: Advice) -> outcomes_pb2.RecommendModelResponse:
    return outcomes_pb2.RecommendModelResponse(
        model=advice.pick or "", arms=_arms(advice), seed=advice.seed, key=advice.key.label
    )
