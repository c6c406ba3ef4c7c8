"""The precedent answer is built the fast way and says exactly what the
general decision message says, absent columns and old instants included."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta, timezone

from google.protobuf.timestamp_pb2 import Timestamp

from outrider.v1 import decisions_pb2
from outrider.wire import timestamp_fields
from services.decisions import codec
from services.decisions.rules import similar_summary
from services.decisions.store import DecisionRow

INSTANTS = [
    datetime(2026, 11, 30, 17, 4, 5, 123456, tzinfo=UTC),
    datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
    datetime(1, 1, 1, tzinfo=UTC),
    datetime(9999, 12, 31, 23, 59, 59, 1, tzinfo=timezone(timedelta(hours=7))),
]


def _row(n: int, *, full: bool) -> DecisionRow:
    instant = INSTANTS[n % len(INSTANTS)]
    return DecisionRow(
        id=uuid.UUID(int=n + 1),
        decision_type="stall_response",
        agent_id="EXCEPTION_AGENT",
        subject_id=f"BK-{n}",
        action="reassign",
        confidence=n / 10,
        reasoning="the rider stopped" if full else None,
        model="model-a" if full else None,
        decided_at=instant,
        outcome="success" if full else None,
        outcome_reason="delivered" if full else None,
        judged_at=instant if full else None,
        judged_by="sweeper" if full else None,
        context_json=b'{"stall_minutes": 12}' if full else None,
        similarity=0.25 * n if full else None,
    )


def test_the_answer_equals_the_general_message_for_every_row_shape():
    rows = [_row(n, full=n % 2 == 0) for n in range(8)]
    summary = similar_summary(row.outcome or "" for row in rows)
    answer = codec.similar_to_proto(rows, summary)
    expected = decisions_pb2.FindSimilarResponse(
        items=[codec.decision_to_proto(row) for row in rows], summary=codec.summary_to_proto(summary)
    )
    assert answer.SerializeToString(deterministic=True) == expected.SerializeToString(deterministic=True)
    assert [item.HasField("judged_at") for item in answer.items] == [n % 2 == 0 for n in range(8)]


def test_timestamp_fields_are_those_protobuf_computes():
    for instant in INSTANTS:
        reference = Timestamp()
        reference.FromDatetime(instant)
        assert Timestamp(**timestamp_fields(instant)) == reference, instant
