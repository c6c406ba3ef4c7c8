"""Decision memory routes (DESIGN.md §4): record, precedent search, outcomes, listing.

Engines reach the /internal paths with the internal key; the console reads
/admin/ai/decisions, which never carries `context` (rider and customer data).
"""

from __future__ import annotations

import asyncio
from datetime import date
from functools import lru_cache
from typing import Annotated, Any, Literal

import grpc
from fastapi import APIRouter, Depends, Path, Query, Request, Response
from google.protobuf.timestamp_pb2 import Timestamp
from pydantic_core import to_json

from gateway.auth import Principal, internal, staff, writer
from gateway.contracts.common import (
    CARRIABLE,
    ENGINE_ERRORS,
    STAFF_ERRORS,
    WRITER_ERRORS,
    Instant,
    errors,
)
from gateway.contracts.decisions import (
    UUID_PATTERN,
    Decision,
    DecisionDetail,
    DecisionIn,
    DecisionPage,
    OutcomeIn,
    RecordReply,
    SimilarIn,
    SimilarReply,
)
from gateway.contracts.paging import PageQuery
from gateway.errors import context_refusal, invalid
from gateway.routing import JsonBodyRoute
from gateway.upstream import stub, timestamp_text
from outrider.precedent_stream import PrecedentSearches, SearchStreamBroken
from outrider.v1 import decisions_pb2, decisions_pb2_grpc
from outrider.wire import json_bytes, timestamp
from services.decisions.rules import MAX_K

router = APIRouter(tags=["decisions"], route_class=JsonBodyRoute)

DecisionId = Annotated[str, Path(pattern=UUID_PATTERN, description="the decision's UUID")]


def _decisions(request: Request) -> decisions_pb2_grpc.DecisionsStub:
    return stub(request, "decisions", decisions_pb2_grpc.DecisionsStub)


def _embedding(request: Request, vector: list[float] | None) -> list[float]:
    if vector is None:
        return []
    dimension = request.app.state.settings.embedding_dimension
    if len(vector) != dimension:
        raise invalid("embedding", f"must have exactly {dimension} dimensions, got {len(vector)}")
    return vector


def decision_json(decision: decisions_pb2.Decision) -> dict[str, Any]:
    """A decision as the console sees it: never with `context`."""
    return {
        "id": decision.id,
        "decision_type": decision.decision_type,
        "agent_id": decision.agent_id,
        "subject_id": decision.subject_id,
        "action": decision.action,
        "confidence": decision.confidence,
        "reasoning": decision.reasoning or None,
        "model": decision.model or None,
        "decided_at": timestamp_text(decision.decided_at),
        "outcome": decision.outcome or None,
        "outcome_reason": decision.outcome_reason or None,
        "judged_at": timestamp_text(decision.judged_at, decision.HasField("judged_at")),
        "judged_by": decision.judged_by or None,
    }


def record_request(body: DecisionIn, embedding: list[float]) -> decisions_pb2.RecordDecisionRequest:
    # Engines written before subjects were general send the booking id, and
    # carry the model inside the context.
    if body.subject_id is None and body.booking_id is None:
        raise invalid("subject_id", "is required")
    subject = body.subject_id if body.subject_id is not None else body.booking_id
    model = body.model
    if model is None and body.context is not None and isinstance(body.context.get("model"), str):
        model = body.context["model"]
    return decisions_pb2.RecordDecisionRequest(
        id=body.id or "",
        decision_type=body.decision_type,
        agent_id=body.agent_id,
        subject_id=subject,
        action=body.decision.action,
        confidence=body.decision.confidence,
        reasoning=body.reasoning or "",
        model=model or "",
        embedding=embedding,
        decided_at=timestamp(body.decided_at),
        context_json=json_bytes(body.context) if body.context is not None else b"",
    )


@router.post(
    "/internal/agent-decisions",
    status_code=201,
    summary="Record an agent's decision",
    response_model=RecordReply,
    responses={
        200: {"model": RecordReply, "description": "this id was recorded before: nothing changed"},
        **errors(401, 409, 422, 503),
    },
)
async def record_decision(body: DecisionIn, request: Request, _: None = Depends(internal)) -> Response:
    reply = await _decisions(request).RecordDecision(record_request(body, _embedding(request, body.embedding)))
    # Printed here, as the response model would print it, without checking
    # again the two fields this line fills. Same id again: the decision
    # exists already, nothing was created.
    return Response(
        to_json({"id": reply.id, "created": reply.created}),
        status_code=201 if reply.created else 200,
        media_type="application/json",
    )


_EPOCH_DAY = date(1970, 1, 1).toordinal()
_SECONDS_A_DAY = 86_400


@lru_cache(maxsize=4096)
def _day_text(days: int) -> str:
    return date.fromordinal(_EPOCH_DAY + days).isoformat()


def _instant_text(stamp: Timestamp, present: bool = True) -> str | None:
    # upstream.timestamp_text's text, for the twenty timestamps of every precedent
    # answer, in half the time of building a datetime to print it: precedents
    # fall on few days, whose text is kept, and the time of day is arithmetic.
    seconds, nanos = stamp.seconds, stamp.nanos
    if not present or (seconds == 0 and nanos == 0):
        return None
    days, second = divmod(seconds, _SECONDS_A_DAY)
    hour, second = divmod(second, 3600)
    minute, second = divmod(second, 60)
    micro = nanos // 1000
    if micro:
        return f"{_day_text(days)}T{hour:02d}:{minute:02d}:{second:02d}.{micro:06d}+00:00"
    return f"{_day_text(days)}T{hour:02d}:{minute:02d}:{second:02d}+00:00"


def similar_body(reply: decisions_pb2.FindSimilarResponse) -> bytes:
    """The SimilarReply document of a FindSimilar answer, as JSON bytes.

    Engines ask on every decision. The response model would validate what
    this function builds from a typed message and then print it; here it is
    printed by the same serializer without the second look, which was a
    third of the route's own time. Each context goes in as the JSON text the
    decisions context sent (Postgres printed it from a stored object), not
    parsed only to be printed again. The fields, their order and their text
    are the model's (tests/unit/decisions/test_similar_answer.py).
    """
    items = []
    for d in reply.items:
        head = to_json(
            {
                "id": d.id,
                "decision_type": d.decision_type,
                "agent_id": d.agent_id,
                "subject_id": d.subject_id,
                "action": d.action,
                "confidence": d.confidence,
                "reasoning": d.reasoning or None,
                "model": d.model or None,
                "decided_at": _instant_text(d.decided_at),
                "outcome": d.outcome or None,
                "outcome_reason": d.outcome_reason or None,
                "judged_at": _instant_text(d.judged_at, d.HasField("judged_at")),
                "judged_by": d.judged_by or None,
            }
        )
        items.append(
            b"".join(
                (head[:-1], b',"context":', d.context_json or b"{}", b',"similarity":', to_json(d.similarity), b"}")
            )
        )
    summary = reply.summary
    tail = to_json(
        {
            "successes": summary.successes,
            "failures": summary.failures,
            "success_rate": summary.success_rate if summary.HasField("success_rate") else None,
        }
    )
    return b"".join((b'{"items":[', b",".join(items), b'],"summary":', tail, b"}"))


@router.post(
    "/internal/agent-decisions/similar",
    summary="Judged precedents nearest to a context",
    response_model=SimilarReply,
    responses=ENGINE_ERRORS,
)
async def find_similar(body: SimilarIn, request: Request, _: None = Depends(internal)) -> Response:
    if body.context is None and body.embedding is None:
        raise invalid("context", "context or embedding is required")
    message = decisions_pb2.FindSimilarRequest(
        decision_type=body.decision_type,
        embedding=_embedding(request, body.embedding),
        k=body.k,
        context_json=json_bytes(body.context) if body.context is not None else b"",
    )
    return Response(similar_body(await _precedents(request, message)), media_type="application/json")


async def _precedents(request: Request, search: decisions_pb2.FindSimilarRequest) -> decisions_pb2.FindSimilarResponse:
    # Over the gateway's precedent streams, answered as a FindSimilar call
    # would be: a refused search, a broken stream and the deadline each
    # become the HTTP error the same failure of a call becomes.
    searches: PrecedentSearches = request.app.state.precedents
    try:
        async with asyncio.timeout(request.app.state.settings.call_timeout_s):
            answer = await searches.search(search)
    except TimeoutError:
        raise context_refusal("decisions", grpc.StatusCode.DEADLINE_EXCEEDED, "the search took too long") from None
    except SearchStreamBroken as broken:
        raise context_refusal("decisions", broken.code or grpc.StatusCode.UNAVAILABLE, str(broken)) from None
    if answer.HasField("refused"):
        refused = answer.refused
        status = grpc.StatusCode.__members__.get(refused.status, grpc.StatusCode.UNKNOWN)
        raise context_refusal("decisions", status, refused.message, refused.code, refused.details_json)
    return answer.found


def _outcome_request(decision_id: str, body: OutcomeIn, judged_by: str) -> decisions_pb2.SetOutcomeRequest:
    # The person behind a human verdict travels as the verified caller.
    return decisions_pb2.SetOutcomeRequest(
        id=decision_id, outcome=body.outcome, reason=body.reason or "", judged_by=judged_by
    )


@router.patch(
    "/internal/agent-decisions/{decision_id}/outcome",
    summary="Judge a pending decision",
    response_model=Decision,
    responses=errors(401, 404, 409, 422, 503),
)
async def set_outcome(
    decision_id: DecisionId, body: OutcomeIn, request: Request, _: None = Depends(internal)
) -> dict[str, Any]:
    reply = await _decisions(request).SetOutcome(_outcome_request(decision_id, body, "api"))
    return decision_json(reply)


@router.patch(
    "/admin/ai/decisions/{decision_id}/outcome",
    summary="A person judges or re-judges a decision",
    response_model=Decision,
    responses=WRITER_ERRORS,
)
async def rejudge(
    decision_id: DecisionId, body: OutcomeIn, request: Request, _: Principal = Depends(writer)
) -> dict[str, Any]:
    reply = await _decisions(request).SetOutcome(_outcome_request(decision_id, body, "human"))
    return decision_json(reply)


@router.get(
    "/admin/ai/decisions",
    summary="Decisions, newest first, without their context",
    response_model=DecisionPage,
    responses=STAFF_ERRORS,
)
async def list_decisions(
    request: Request,
    page: PageQuery,
    decision_type: Annotated[str, Query(max_length=64, pattern=CARRIABLE, description="only this type")] = "",
    outcome: Annotated[
        Literal["success", "failure", "unknown", "pending"] | None,
        Query(description="only decisions with this outcome; pending = not judged yet"),
    ] = None,
    agent_id: Annotated[str, Query(max_length=128, pattern=CARRIABLE, description="only this agent's decisions")] = "",
    model: Annotated[str, Query(max_length=256, pattern=CARRIABLE, description="only decisions this model made")] = "",
    decided_from: Annotated[Instant | None, Query(description="decided at or after (RFC 3339 with offset)")] = None,
    decided_to: Annotated[Instant | None, Query(description="decided before (RFC 3339 with offset)")] = None,
    _: Principal = Depends(staff),
) -> dict[str, Any]:
    message = decisions_pb2.ListDecisionsRequest(
        decision_type=decision_type,
        outcome=outcome or "",
        agent_id=agent_id,
        model=model,
        page=page.proto(),
    )
    if decided_from is not None:
        message.decided_from.CopyFrom(timestamp(decided_from))
    if decided_to is not None:
        message.decided_to.CopyFrom(timestamp(decided_to))
    reply = await _decisions(request).ListDecisions(message)
    return {"items": [decision_json(d) for d in reply.items], "next_cursor": reply.next_cursor or None}


def _change_json(change: decisions_pb2.OutcomeChange) -> dict[str, Any]:
    return {
        "old_outcome": change.old_outcome or None,
        "new_outcome": change.new_outcome,
        "reason": change.reason or None,
        "judged_by": change.judged_by,
        "changed_by": change.changed_by or None,
        "changed_by_email": change.changed_by_email or None,
        "judged_at": timestamp_text(change.judged_at),
    }


@router.get(
    "/admin/ai/decisions/{decision_id}",
    summary="One decision without its context, its outcome history and its nearest judged precedents",
    response_model=DecisionDetail,
    responses={**STAFF_ERRORS, **errors(404)},
)
async def get_decision(
    decision_id: DecisionId,
    request: Request,
    precedents: Annotated[int | None, Query(ge=0, le=MAX_K, description="how many precedents; 5 when left out")] = None,
    _: Principal = Depends(staff),
) -> dict[str, Any]:
    ask = decisions_pb2.GetDecisionRequest(id=decision_id)
    if precedents is not None:
        ask.precedents = precedents
    reply = await _decisions(request).GetDecision(ask)
    summary = reply.summary
    return {
        **decision_json(reply.decision),
        "history": [_change_json(c) for c in reply.history],
        "precedents": [{**decision_json(d), "similarity": d.similarity} for d in reply.precedents],
        "precedent_summary": {
            "successes": summary.successes,
            "failures": summary.failures,
            "success_rate": summary.success_rate if summary.HasField("success_rate") else None,
        },
    }
