"""The gateway writes the precedent answer as JSON itself; it must be the
document the response model describes, to the field."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from gateway.codec.decisions import decision_json, similar_body
from gateway.contracts.decisions import Precedent, SimilarReply
from outrider.v1 import decisions_pb2
from outrider.wire import json_value, timestamp

JUDGED = datetime(2026, 9, 29, 15, 27, 3, 120450, tzinfo=UTC)


def reply(success_rate: float | None) -> decisions_pb2.FindSimilarResponse:
    full = decisions_pb2.Decision(
        id="7f0c3f4e-8a7c-4b8e-9d7a-1c2b3a4d5e6f",
        decision_type="stall_response",
        agent_id="EXCEPTION_AGENT",
        subject_id="BK-1",
        action="reassign",
        confidence=0.57,
        reasoning="idle 12 min, «north»",
        model="claude-sonnet-4-5",
        decided_at=timestamp(datetime(2026, 9, 29, 15, 0, tzinfo=UTC)),
        outcome="success",
        outcome_reason="delivered",
        judged_at=timestamp(JUDGED),
        judged_by="sweeper",
        similarity=0.9312345,
        context_json='{"facts": {"zone": "Kōramangala", "stall_minutes": 12, "big": 12345678901234567890}}'.encode(),
    )
    bare = decisions_pb2.Decision(
        id="00000000-0000-4000-8000-000000000001",
        decision_type="stall_response",
        agent_id="A",
        subject_id="BK-2",
        action="wait",
        confidence=1.0,
        decided_at=timestamp(datetime(1999, 12, 31, 23, 59, 59, tzinfo=UTC)),
        outcome="failure",
        judged_at=timestamp(JUDGED),
        judged_by="human",
        similarity=-0.25,
    )
    summary = decisions_pb2.SimilarSummary(successes=1, failures=1)
    if success_rate is not None:
        summary.success_rate = success_rate
    return decisions_pb2.FindSimilarResponse(items=[full, bare], summary=summary)


def through_the_model(answer: decisions_pb2.FindSimilarResponse) -> dict:
    """What the route answered when the response model validated and printed dicts."""
    summary = answer.summary
    content = {
        "items": [
            {**decision_json(d), "context": json_value(d.context_json) or {}, "similarity": d.similarity}
            for d in answer.items
        ],
        "summary": {
            "successes": summary.successes,
            "failures": summary.failures,
            "success_rate": summary.success_rate if summary.HasField("success_rate") else None,
        },
    }
    return json.loads(SimilarReply.model_validate(content).model_dump_json())


def test_the_answer_is_the_response_model_document_to_the_field():
    for answer in (reply(0.5), reply(None), decisions_pb2.FindSimilarResponse()):
        body = similar_body(answer)
        SimilarReply.model_validate_json(body)
        assert json.loads(body) == through_the_model(answer)


def test_fields_come_in_the_model_order_and_a_context_keeps_its_integers():
    body = json.loads(similar_body(reply(0.5)))
    assert list(body) == ["items", "summary"]
    assert [list(item) for item in body["items"]] == [list(Precedent.model_fields)] * 2
    assert body["items"][0]["context"]["facts"]["big"] == 12345678901234567890
    assert body["items"][1]["context"] == {}
    assert body["items"][0]["judged_at"] == "2026-09-29T15:27:03.120450+00:00"
