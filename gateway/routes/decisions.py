"""Decision memory routes (DESIGN.md §4): record, precedent search, outcomes, listing.

Engines reach the /internal paths with the internal key; the console reads
/admin/ai/decisions, which never carries `context` (rider and customer data).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from fastapi import APIRouter, Body, Depends, Query, Request, Response
from google.protobuf.json_format import MessageToDict
from google.protobuf.struct_pb2 import Struct
from pydantic import AwareDatetime

from gateway.auth import Principal, internal, staff, writer
from gateway.errors import ApiError
from gateway.upstream import instant, stub
from outrider.wire import timestamp
from outrider.v1 import common_pb2, decisions_pb2, decisions_pb2_grpc

router = APIRouter(tags=["decisions"])


def _decisions(request: Request) -> decisions_pb2_grpc.DecisionsStub:
    return stub(request, "decisions", decisions_pb2_grpc.DecisionsStub)


def _invalid(field: str, message: str) -> ApiError:
    return ApiError(422, "INVALID_ARGUMENT", f"{field}: {message}", {"field": field})


def _object(body: Any, field: str) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise _invalid(field, "must be a JSON object")
    return body


def _text(body: dict[str, Any], key: str, field: str | None = None) -> str:
    value = body.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise _invalid(field or key, f"must be a string, got {type(value).__name__}")
    return value


def _number(value: Any, field: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _invalid(field, f"must be a number, got {type(value).__name__}")
    return float(value)


_NUMBER_TYPES = frozenset({int, float})


def _vector(body: dict[str, Any]) -> list[float]:
    value = body.get("embedding")
    if value is None:
        return []
    # map() keeps the per-element work in C: a query vector has hundreds of
    # elements and this route is the hot one. bool is its own type here, so
    # true and false are refused like any other non-number.
    if not isinstance(value, list) or not set(map(type, value)) <= _NUMBER_TYPES:
        raise _invalid("embedding", "must be a list of numbers")
    return list(map(float, value))


def _struct(body: dict[str, Any]) -> Struct | None:
    value = body.get("context")
    if value is None:
        return None
    struct = Struct()
    struct.update(_object(value, "context"))
    return struct


def _instant(value: Any, field: str) -> datetime | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise _invalid(field, "must be an RFC 3339 timestamp string")
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise _invalid(field, f"is not an RFC 3339 timestamp: {value!r}") from None
    # A wire Timestamp is an instant; a naive time must be refused here,
    # before it becomes one by guesswork.
    if moment.utcoffset() is None:
        raise _invalid(field, "must carry a UTC offset")
    return moment


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
        "decided_at": instant(decision.decided_at),
        "outcome": decision.outcome or None,
        "outcome_reason": decision.outcome_reason or None,
        "judged_at": instant(decision.judged_at, decision.HasField("judged_at")),
        "judged_by": decision.judged_by or None,
    }


def _record_request(body: dict[str, Any]) -> decisions_pb2.RecordDecisionRequest:
    decision = _object(body.get("decision") or {}, "decision")
    subject = body.get("subject_id")
    if subject is None and isinstance(body.get("booking_id"), int | str) and not isinstance(body["booking_id"], bool):
        # Engines written before subjects were general send the booking id.
        subject = str(body["booking_id"])
    context = body.get("context")
    model = _text(body, "model")
    if not model and isinstance(context, dict) and isinstance(context.get("model"), str):
        # The same engines carry the model inside the context.
        model = context["model"]
    message = decisions_pb2.RecordDecisionRequest(
        id=_text(body, "id"),
        decision_type=_text(body, "decision_type"),
        agent_id=_text(body, "agent_id"),
        subject_id=_text({"subject_id": subject}, "subject_id"),
        action=_text(decision, "action", "decision.action"),
        reasoning=_text(body, "reasoning"),
        model=model,
        embedding=_vector(body),
        decided_at=timestamp(_instant(body.get("decided_at"), "decided_at")),
    )
    if decision.get("confidence") is not None:
        message.confidence = _number(decision["confidence"], "decision.confidence")
    struct = _struct(body)
    if struct is not None:
        message.context.CopyFrom(struct)
    return message


@router.post("/internal/agent-decisions", status_code=201, summary="Record an agent's decision")
async def record_decision(
    request: Request, response: Response, body: Any = Body(...), _: None = Depends(internal)
) -> dict[str, Any]:
    reply = await _decisions(request).RecordDecision(_record_request(_object(body, "body")))
    if not reply.created:
        # Same id again: the decision exists already, nothing was created.
        response.status_code = 200
    return {"id": reply.id, "created": reply.created}


@router.post("/internal/agent-decisions/similar", summary="Judged precedents nearest to a context")
async def find_similar(request: Request, body: Any = Body(...), _: None = Depends(internal)) -> dict[str, Any]:
    body = _object(body, "body")
    k = body.get("k")
    if k is not None and (isinstance(k, bool) or not isinstance(k, int) or not -(2**31) <= k < 2**31):
        # The service judges the range; this only keeps the value inside int32.
        raise _invalid("k", f"must be an integer between 1 and 100, got {k!r}")
    message = decisions_pb2.FindSimilarRequest(
        decision_type=_text(body, "decision_type"), embedding=_vector(body), k=k
    )
    struct = _struct(body)
    if struct is not None:
        message.context.CopyFrom(struct)
    reply = await _decisions(request).FindSimilar(message)
    summary = reply.summary
    return {
        "items": [
            {**decision_json(d), "context": MessageToDict(d.context), "similarity": d.similarity}
            for d in reply.items
        ],
        "summary": {
            "successes": summary.successes,
            "failures": summary.failures,
            "success_rate": summary.success_rate if summary.HasField("success_rate") else None,
        },
    }


def _outcome_request(decision_id: str, body: Any, judged_by: str,
                     who: Principal | None = None) -> decisions_pb2.SetOutcomeRequest:
    body = _object(body, "body")
    message = decisions_pb2.SetOutcomeRequest(
        id=decision_id, outcome=_text(body, "outcome"), reason=_text(body, "reason"), judged_by=judged_by
    )
    if who is not None:
        message.actor.CopyFrom(common_pb2.Actor(sub=who.sub, email=who.email))
    return message


@router.patch("/internal/agent-decisions/{decision_id}/outcome", summary="Judge a pending decision")
async def set_outcome(
    decision_id: str, request: Request, body: Any = Body(...), _: None = Depends(internal)
) -> dict[str, Any]:
    reply = await _decisions(request).SetOutcome(_outcome_request(decision_id, body, "api"))
    return decision_json(reply)


@router.patch("/admin/ai/decisions/{decision_id}/outcome", summary="A person judges or re-judges a decision")
async def rejudge(
    decision_id: str, request: Request, body: Any = Body(...), who: Principal = Depends(writer)
) -> dict[str, Any]:
    reply = await _decisions(request).SetOutcome(_outcome_request(decision_id, body, "human", who))
    return decision_json(reply)


@router.get("/admin/ai/decisions", summary="Decisions, newest first, without their context")
async def list_decisions(
    request: Request,
    decision_type: str = Query(""),
    outcome: str = Query(""),
    agent_id: str = Query(""),
    model: str = Query(""),
    decided_from: AwareDatetime | None = Query(None, description="decided at or after (RFC 3339 with offset)"),
    decided_to: AwareDatetime | None = Query(None, description="decided before (RFC 3339 with offset)"),
    cursor: str = Query(""),
    limit: int = Query(0),
    _: Principal = Depends(staff),
) -> dict[str, Any]:
    if not 0 <= limit < 2**31:
        raise _invalid("limit", f"must be between 1 and 200, got {limit}")
    message = decisions_pb2.ListDecisionsRequest(
        decision_type=decision_type, outcome=outcome, agent_id=agent_id, model=model,
        page=common_pb2.PageRequest(cursor=cursor, limit=limit),
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
        "judged_at": instant(change.judged_at),
    }


@router.get("/admin/ai/decisions/{decision_id}",
            summary="One decision without its context, its outcome history and its nearest judged precedents")
async def get_decision(
    decision_id: str,
    request: Request,
    precedents: int | None = Query(None, ge=0, le=100, description="how many precedents; 5 when left out"),
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

