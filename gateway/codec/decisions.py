"""Decision messages to the gateway's JSON and back: records, precedents, outcomes, listings.

The console's shapes never carry a decision's `context` (rider and customer
data); only an engine's precedent answer does.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import date, datetime
from functools import lru_cache
from typing import Any

from google.protobuf.timestamp_pb2 import Timestamp
from pydantic_core import to_json

from gateway.codec.common import page_request, timestamp_text
from gateway.contracts.decisions import DecisionFilters, DecisionIn, OutcomeIn, SimilarIn
from gateway.contracts.paging import PageRequest
from gateway.errors import invalid
from outrider.v1 import common_pb2, decisions_pb2
from outrider.wire import json_bytes, timestamp

# ─── Out ───────────────────────────────────────────────────────────────────


def listed_decision_json(decision: decisions_pb2.Decision) -> dict[str, Any]:
    """A decision as the listing, its detail and a verdict's answer show it: with its rollout arm,
    its model's propensity and how its action was carried out."""
    arm = decision.rollout
    return {
        **decision_json(decision),
        "rollout": {"id": arm.id, "arm": arm.arm} if decision.HasField("rollout") else None,
        "model_propensity": decision.model_propensity if decision.HasField("model_propensity") else None,
        "execution": decision.execution or None,
    }


def decision_context_json(reply: decisions_pb2.DecisionContext) -> dict[str, Any]:
    return {
        "decision_id": reply.decision_id,
        "context": json.loads(reply.context_json),
        "redacted": dict(sorted(reply.redacted.items())),
        "erased_at": timestamp_text(reply.erased_at, reply.HasField("erased_at")),
    }


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


def recorded_body(reply: decisions_pb2.RecordDecisionResponse) -> bytes:
    # Printed here, as the response model would print it, without checking
    # again the two fields this line fills.
    return to_json({"id": reply.id, "created": reply.created})


# The export's columns, in order: the listing's fields, the rollout arm spread
# over two columns so a spreadsheet can filter on it.
EXPORT_COLUMNS = (
    "id",
    "decided_at",
    "decision_type",
    "agent_id",
    "subject_id",
    "action",
    "confidence",
    "model",
    "model_propensity",
    "execution",
    "rollout_id",
    "rollout_arm",
    "outcome",
    "outcome_reason",
    "judged_at",
    "judged_by",
    "reasoning",
)


def export_record(decision: Mapping[str, Any]) -> dict[str, Any]:
    """A listed decision spread over the export's columns."""
    rollout = decision.get("rollout") or {}
    return {**decision, "rollout_id": rollout.get("id"), "rollout_arm": rollout.get("arm")}


def decision_page_json(reply: decisions_pb2.ListDecisionsResponse) -> dict[str, Any]:
    return {"items": [listed_decision_json(d) for d in reply.items], "next_cursor": reply.next_cursor or None}


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


def decision_detail_json(reply: decisions_pb2.DecisionDetail) -> dict[str, Any]:
    summary = reply.summary
    return {
        **listed_decision_json(reply.decision),
        "history": [_change_json(c) for c in reply.history],
        "precedents": [{**decision_json(d), "similarity": d.similarity} for d in reply.precedents],
        "precedent_summary": {
            "successes": summary.successes,
            "failures": summary.failures,
            "success_rate": summary.success_rate if summary.HasField("success_rate") else None,
        },
    }


_EPOCH_DAY = date(1970, 1, 1).toordinal()
_SECONDS_A_DAY = 86_400


@lru_cache(maxsize=4096)
def _day_text(days: int) -> str:
    return date.fromordinal(_EPOCH_DAY + days).isoformat()


def _timestamp_text(stamp: Timestamp, present: bool = True) -> str | None:
    # common.timestamp_text's text, for the twenty timestamps of every
    # precedent answer, in half the time of building a datetime to print it:
    # precedents fall on few days, whose text is kept, and the time of day is
    # arithmetic.
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
                "decided_at": _timestamp_text(d.decided_at),
                "outcome": d.outcome or None,
                "outcome_reason": d.outcome_reason or None,
                "judged_at": _timestamp_text(d.judged_at, d.HasField("judged_at")),
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


# ─── In ────────────────────────────────────────────────────────────────────


def _embedding(vector: list[float] | None, dimension: int) -> list[float]:
    if vector is None:
        return []
    if len(vector) != dimension:
        raise invalid("embedding", f"must have exactly {dimension} dimensions, got {len(vector)}")
    return vector


def record_request(body: DecisionIn, *, dimension: int) -> decisions_pb2.RecordDecisionRequest:
    embedding = _embedding(body.embedding, dimension)
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
        rollout=common_pb2.RolloutArm(id=body.rollout.id, arm=body.rollout.arm) if body.rollout else None,
        model_propensity=body.model_propensity,
        execution=body.execution or "",
    )


def similar_request(body: SimilarIn, *, dimension: int) -> decisions_pb2.FindSimilarRequest:
    if body.context is None and body.embedding is None:
        raise invalid("context", "context or embedding is required")
    return decisions_pb2.FindSimilarRequest(
        decision_type=body.decision_type,
        embedding=_embedding(body.embedding, dimension),
        k=body.k,
        context_json=json_bytes(body.context) if body.context is not None else b"",
    )


def outcome_request(decision_id: str, body: OutcomeIn) -> decisions_pb2.SetOutcomeRequest:
    # Who judges travels as the verified caller (the engine whose key the
    # gateway checked, or the signed-in person), never as a field.
    return decisions_pb2.SetOutcomeRequest(id=decision_id, outcome=body.outcome, reason=body.reason or "")


def list_request(filters: DecisionFilters, page: PageRequest) -> decisions_pb2.ListDecisionsRequest:
    # An instant left out stays an unset field: no bound, not the epoch.
    return decisions_pb2.ListDecisionsRequest(
        decision_type=filters.decision_type,
        outcome=filters.outcome,
        agent_id=filters.agent_id,
        model=filters.model,
        decided_from=timestamp(filters.decided_from),
        decided_to=timestamp(filters.decided_to),
        page=page_request(page),
        subject_id=filters.subject_id,
        rollout_id=filters.rollout_id,
        model_contains=filters.model_contains,
    )


def context_request(decision_id: str) -> decisions_pb2.GetDecisionContextRequest:
    return decisions_pb2.GetDecisionContextRequest(id=decision_id)


def detail_request(decision_id: str, precedents: int | None) -> decisions_pb2.GetDecisionRequest:
    message = decisions_pb2.GetDecisionRequest(id=decision_id)
    if precedents is not None:
        message.precedents = precedents
    return message


def facets_request(days: int | None) -> decisions_pb2.ListDecisionFacetsRequest:
    # Days left out stay an unset field: the context's default window, not zero.
    if days is None:
        return decisions_pb2.ListDecisionFacetsRequest()
    return decisions_pb2.ListDecisionFacetsRequest(days=days)


def facets_json(reply: decisions_pb2.DecisionFacets) -> dict[str, Any]:
    return {
        "window_days": reply.window_days,
        "decision_types": list(reply.decision_types),
        "agent_ids": list(reply.agent_ids),
        "models": list(reply.models),
    }


def outcome_series_request(
    *, days: int | None, start: datetime | None, end: datetime | None, decision_type: str
) -> decisions_pb2.CountOutcomeSeriesRequest:
    # Left out, a field stays unset: the context's default window, not zero.
    return decisions_pb2.CountOutcomeSeriesRequest(
        days=days, start=timestamp(start), end=timestamp(end), decision_type=decision_type
    )


def outcome_series_json(reply: decisions_pb2.OutcomeSeries) -> dict[str, Any]:
    return {
        "window_days": reply.window_days,
        "bucket_seconds": reply.bucket_seconds,
        "start": timestamp_text(reply.start),
        "end": timestamp_text(reply.end),
        "types": [
            {
                "decision_type": series.decision_type,
                "buckets": [
                    {
                        "start": timestamp_text(b.start),
                        "successes": b.successes,
                        "failures": b.failures,
                        "unknown": b.unknown,
                        "pending": b.pending,
                    }
                    for b in series.buckets
                ],
            }
            for series in reply.types
        ],
    }
