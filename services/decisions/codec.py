"""Decision memory records to and from protobuf: the only module of the
decision-memory half that sees wire types."""

from __future__ import annotations

from typing import Any

from outrider.v1 import decisions_pb2
from outrider.wire import MalformedJson, json_bytes, json_object, timestamp

from services.common.errors import InvalidArgument
from services.decisions.rules import MAX_CONTEXT_BYTES, InvalidDecision, SimilarSummary
from services.decisions.store import DecisionRow, OutcomeChangeRow, OutcomeCountRow, PendingRow


def context_from_proto(data: bytes) -> dict[str, Any] | None:
    """A request's context object; None when none was sent."""
    if len(data) > MAX_CONTEXT_BYTES:
        raise InvalidDecision("context", f"must be at most {MAX_CONTEXT_BYTES:,} bytes of JSON, got {len(data):,}")
    try:
        return json_object(data)
    except MalformedJson as error:
        raise InvalidArgument(f"context: {error}", field="context") from None


def decision_to_proto(row: DecisionRow) -> decisions_pb2.Decision:
    return decisions_pb2.Decision(
        id=str(row.id),
        decision_type=row.decision_type,
        agent_id=row.agent_id,
        subject_id=row.subject_id,
        action=row.action,
        confidence=row.confidence,
        reasoning=row.reasoning or "",
        model=row.model or "",
        decided_at=timestamp(row.decided_at),
        outcome=row.outcome or "",
        outcome_reason=row.outcome_reason or "",
        judged_at=timestamp(row.judged_at),
        judged_by=row.judged_by or "",
        similarity=row.similarity or 0.0,
        context_json=json_bytes(row.context) if row.context is not None else b"",
    )


def summary_to_proto(summary: SimilarSummary) -> decisions_pb2.SimilarSummary:
    message = decisions_pb2.SimilarSummary(successes=summary.successes, failures=summary.failures)
    if summary.success_rate is not None:
        message.success_rate = summary.success_rate
    return message


def pending_to_proto(row: PendingRow) -> decisions_pb2.PendingDecision:
    return decisions_pb2.PendingDecision(
        id=str(row.id),
        decision_type=row.decision_type,
        subject_id=row.subject_id,
        decided_at=timestamp(row.decided_at),
        model=row.model or "",
    )


def count_to_proto(row: OutcomeCountRow) -> decisions_pb2.OutcomeCount:
    return decisions_pb2.OutcomeCount(
        decision_type=row.decision_type, outcome=row.outcome or "", count=row.count, model=row.model or ""
    )


def change_to_proto(row: OutcomeChangeRow) -> decisions_pb2.OutcomeChange:
    return decisions_pb2.OutcomeChange(
        old_outcome=row.old_outcome or "",
        new_outcome=row.new_outcome,
        reason=row.reason or "",
        judged_by=row.judged_by,
        changed_by=row.changed_by,
        changed_by_email=row.changed_by_email,
        judged_at=timestamp(row.judged_at),
    )
