"""Decision memory records to and from protobuf: the only module of the
decision-memory half that sees wire types."""

from __future__ import annotations

import json
import struct
from collections.abc import Sequence
from typing import Any

from outrider.v1 import decisions_pb2
from outrider.wire import MalformedJson, json_object, timestamp, timestamp_fields
from services.common.errors import DomainError, InvalidArgument
from services.common.grpc_server import status_of
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


def embedding_from_proto(values: Sequence[float]) -> tuple[float, ...]:
    """A repeated float field (an embedding) as a tuple of floats.

    Iterating the field makes each float through the protobuf runtime, one
    call per value: a tenth of a millisecond for 384 of them, on every
    search. Serialized on its own, the field is one packed run of
    little-endian float32s (proto3's encoding of repeated scalars), which
    struct reads in a single call.
    """
    count = len(values)
    if not count:
        return ()
    alone = decisions_pb2.FindSimilarRequest()
    alone.embedding.extend(values)
    data = alone.SerializeToString()
    return struct.unpack_from(f"<{count}f", data, len(data) - 4 * count)


def record_results_to_proto(
    results: Sequence[tuple[str, bool] | tuple[str, DomainError]],
) -> decisions_pb2.RecordDecisionsResponse:
    """(id, created) for a recorded decision, (id, error) for a refused one."""
    items = []
    for decision_id, outcome in results:
        if isinstance(outcome, DomainError):
            items.append(
                decisions_pb2.RecordDecisionResult(
                    id=decision_id, error_code=outcome.code, error_message=outcome.message
                )
            )
        else:
            items.append(decisions_pb2.RecordDecisionResult(id=decision_id, created=outcome))
    return decisions_pb2.RecordDecisionsResponse(results=items)


def _decision_fields(row: DecisionRow) -> dict[str, Any]:
    return {
        "id": str(row.id),
        "decision_type": row.decision_type,
        "agent_id": row.agent_id,
        "subject_id": row.subject_id,
        "action": row.action,
        "confidence": row.confidence,
        "reasoning": row.reasoning or "",
        "model": row.model or "",
        "decided_at": timestamp(row.decided_at),
        "outcome": row.outcome or "",
        "outcome_reason": row.outcome_reason or "",
        "judged_at": timestamp(row.judged_at),
        "judged_by": row.judged_by or "",
        "similarity": row.similarity or 0.0,
        "context_json": row.context_json or b"",
    }


def decision_to_proto(row: DecisionRow) -> decisions_pb2.Decision:
    return decisions_pb2.Decision(**_decision_fields(row))


def similar_to_proto(rows: Sequence[DecisionRow], summary: SimilarSummary) -> decisions_pb2.FindSimilarResponse:
    # Every search builds ten of these; this is decision_to_proto's message
    # in two thirds of its time. Each decision is built in place (a list of
    # messages handed to the constructor would be copied in one by one), its
    # timestamps as plain fields, and an absent column as None, which a
    # message constructor takes as "left unset", the "" or 0 it stands for.
    message = decisions_pb2.FindSimilarResponse(summary=summary_to_proto(summary))
    add = message.items.add
    for row in rows:
        add(
            id=str(row.id),
            decision_type=row.decision_type,
            agent_id=row.agent_id,
            subject_id=row.subject_id,
            action=row.action,
            confidence=row.confidence,
            reasoning=row.reasoning,
            model=row.model,
            decided_at=timestamp_fields(row.decided_at),
            outcome=row.outcome,
            outcome_reason=row.outcome_reason,
            judged_at=timestamp_fields(row.judged_at),
            judged_by=row.judged_by,
            similarity=row.similarity,
            context_json=row.context_json,
        )
    return message


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


def precedent_refusal(tag: int, error: DomainError | None) -> decisions_pb2.PrecedentAnswer:
    """One failed search of a stream, as a FindSimilar call would have failed;
    None is an unexpected failure, answered without its text."""
    if error is None:
        refusal = decisions_pb2.SearchRefusal(status="INTERNAL", code="INTERNAL", message="internal error")
    else:
        refusal = decisions_pb2.SearchRefusal(
            status=status_of(error).name,
            code=error.code,
            message=error.message,
            details_json=json.dumps(error.details, default=str).encode(),
        )
    return decisions_pb2.PrecedentAnswer(tag=tag, refused=refusal)
