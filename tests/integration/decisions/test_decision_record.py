"""Recording decisions: validation, idempotent retries, embeddings."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta, timezone

import grpc
import pytest

from outrider.v1 import decisions_pb2, decisions_pb2_grpc
from outrider.wire import json_bytes
from services.decisions.embedding import StructuredContextEmbedder
from services.decisions.queries import MAX_RECORD_BATCH
from tests.harness import engine_channel, gateway_client, internal_headers, running
from tests.integration.decisions.memory_support import DIMENSION, connect, unit_vector

ENGINE_PAYLOAD = {
    "decision_type": "stall_response",
    "agent_id": "EXCEPTION_AGENT",
    "subject_id": "booking-4411",
    "context": {"facts": {"stall_minutes": 12, "zone": "north"}, "rider": {"phone": "+91-98450-00000"}},
    "decision": {"action": "reassign", "confidence": 0.82},
    "reasoning": "rider idle for 12 minutes",
    "model": "claude-sonnet-4-5",
}


async def test_record_stores_the_decision_and_embeds_its_context(settings, template, database):
    async with running(settings, ["decisions"]), gateway_client(settings) as client:
        reply = await client.post("/internal/agent-decisions", json=ENGINE_PAYLOAD, headers=internal_headers())
    assert reply.status_code == 201, reply.text
    body = reply.json()
    assert body["created"] is True
    conn = await connect(template, database)
    try:
        row = await conn.fetchrow(
            "select *, embedding::text as vector from decisions where id = $1", uuid.UUID(body["id"])
        )
    finally:
        await conn.close()
    assert row["decision_type"] == "stall_response"
    assert row["subject_id"] == "booking-4411"
    assert row["action"] == "reassign"
    assert row["confidence"] == 0.82
    assert row["model"] == "claude-sonnet-4-5"
    assert row["outcome"] is None and row["judged_by"] is None
    # Whole numbers come back whole, not as the doubles Struct carried.
    assert '"stall_minutes": 12,' in row["context"] or '"stall_minutes": 12}' in row["context"]
    expected = StructuredContextEmbedder(DIMENSION).embed(ENGINE_PAYLOAD["context"])
    stored = [float(x) for x in row["vector"].strip("[]").split(",")]
    assert len(stored) == DIMENSION
    assert max(abs(a - b) for a, b in zip(stored, expected, strict=False)) < 1e-6
    assert abs((row["decided_at"] - datetime.now(UTC)).total_seconds()) < 30


async def test_a_retry_with_the_same_id_records_nothing_new(settings, template, database):
    decision_id = str(uuid.uuid4())
    payload = {**ENGINE_PAYLOAD, "id": decision_id}
    async with running(settings, ["decisions"]), gateway_client(settings) as client:
        first = await client.post("/internal/agent-decisions", json=payload, headers=internal_headers())
        again = await client.post("/internal/agent-decisions", json=payload, headers=internal_headers())
        reused = await client.post(
            "/internal/agent-decisions",
            json={**payload, "decision": {"action": "escalate", "confidence": 0.4}},
            headers=internal_headers(),
        )
    assert first.status_code == 201 and first.json() == {"id": decision_id, "created": True}
    assert again.status_code == 200 and again.json() == {"id": decision_id, "created": False}
    assert reused.status_code == 409
    assert reused.json()["error"]["code"] == "DECISION_ID_REUSED"
    conn = await connect(template, database)
    try:
        rows = await conn.fetch("select action from decisions")
    finally:
        await conn.close()
    assert [r["action"] for r in rows] == ["reassign"]


async def test_a_vector_of_the_wrong_size_is_refused_naming_both_sizes(settings, template, database):
    async with running(settings, ["decisions"]), gateway_client(settings) as client:
        wrong = await client.post(
            "/internal/agent-decisions",
            json={**ENGINE_PAYLOAD, "embedding": unit_vector(1, 1536)},
            headers=internal_headers(),
        )
        similar = await client.post(
            "/internal/agent-decisions/similar",
            json={"decision_type": "stall_response", "embedding": unit_vector(2, 8)},
            headers=internal_headers(),
        )
        right = await client.post(
            "/internal/agent-decisions",
            json={**ENGINE_PAYLOAD, "embedding": unit_vector(3)},
            headers=internal_headers(),
        )
    assert wrong.status_code == 422
    error = wrong.json()["error"]
    assert next(iter(error["details"]["fields"])) == "embedding"
    assert "384" in error["message"] and "1536" in error["message"]
    assert similar.status_code == 422
    assert next(iter(similar.json()["error"]["details"]["fields"])) == "embedding"
    assert "384" in similar.json()["error"]["message"] and "got 8" in similar.json()["error"]["message"]
    assert right.status_code == 201
    conn = await connect(template, database)
    try:
        assert await conn.fetchval("select count(*) from decisions") == 1
    finally:
        await conn.close()


async def test_bad_fields_are_refused_by_name_and_store_nothing(settings, template, database):
    future = (datetime.now(UTC) + timedelta(hours=1)).isoformat()
    cases = {
        "decision.confidence": {**ENGINE_PAYLOAD, "decision": {"action": "reassign", "confidence": 1.5}},
        "decision.confidence ": {**ENGINE_PAYLOAD, "decision": {"action": "reassign"}},
        "decision.action": {**ENGINE_PAYLOAD, "decision": {"confidence": 0.5}},
        "decision_type": {**ENGINE_PAYLOAD, "decision_type": "Stall-Response"},
        "decided_at": {**ENGINE_PAYLOAD, "decided_at": future},
        "id": {**ENGINE_PAYLOAD, "id": "not-a-uuid"},
        "context": {**ENGINE_PAYLOAD, "context": ["not", "an", "object"]},
    }
    async with running(settings, ["decisions"]), gateway_client(settings) as client:
        replies = {
            name: await client.post("/internal/agent-decisions", json=body, headers=internal_headers())
            for name, body in cases.items()
        }
        naive = await client.post(
            "/internal/agent-decisions",
            json={**ENGINE_PAYLOAD, "decided_at": "2026-09-29T20:57:00"},
            headers=internal_headers(),
        )
        unauthenticated = await client.post("/internal/agent-decisions", json=ENGINE_PAYLOAD)
    for name, reply in replies.items():
        assert reply.status_code == 422, (name, reply.text)
        error = reply.json()["error"]
        assert error["code"] == "INVALID_ARGUMENT"
        assert [*error["details"]["fields"]] == [name.strip()], (name, error)
    assert replies["decided_at"].json()["error"]["message"].startswith("decided_at: is in the future")
    assert naive.status_code == 422 and "UTC offset" in naive.json()["error"]["message"]
    assert unauthenticated.status_code == 401
    conn = await connect(template, database)
    try:
        assert await conn.fetchval("select count(*) from decisions") == 0
    finally:
        await conn.close()


async def test_a_late_record_keeps_its_decided_at_and_a_skewed_one_is_never_in_the_future(settings, template, database):
    decided = datetime(2026, 9, 29, 15, 27, 5, 123456, tzinfo=timezone(timedelta(hours=5, minutes=30)))
    legacy = {
        "decision_type": "assignment_failure",
        "booking_id": 4411,
        "context": {"facts": {"candidates": 0}, "model": "claude-opus-4-8"},
        "decision": {"action": "widen_radius", "confidence": 0.6},
        "reasoning": "no rider within 3 km",
        "agent_id": "DISPATCH_AGENT",
        "decided_at": decided.isoformat(),
    }
    ahead = (datetime.now(UTC) + timedelta(seconds=60)).isoformat()
    async with running(settings, ["decisions"]), gateway_client(settings) as client:
        reply = await client.post("/internal/agent-decisions", json=legacy, headers=internal_headers())
        skewed = await client.post(
            "/internal/agent-decisions", json={**ENGINE_PAYLOAD, "decided_at": ahead}, headers=internal_headers()
        )
    assert reply.status_code == 201, reply.text
    assert skewed.status_code == 201, skewed.text
    conn = await connect(template, database)
    try:
        row = await conn.fetchrow("select * from decisions where id = $1", uuid.UUID(reply.json()["id"]))
        skewed_at = await conn.fetchval(
            "select decided_at from decisions where id = $1", uuid.UUID(skewed.json()["id"])
        )
        now = await conn.fetchval("select now()")
    finally:
        await conn.close()
    assert row["subject_id"] == "4411"
    assert row["model"] == "claude-opus-4-8"
    assert row["decided_at"] == decided
    # An engine clock a minute ahead is tolerated, but nothing is stored as
    # decided in the future.
    assert skewed_at <= now


async def test_a_batch_records_each_decision_once_and_answers_each_on_its_own(settings, template, database):
    new_id, retried_id, reused_id = (str(uuid.uuid4()) for _ in range(3))

    def decision(decision_id: str, **overrides) -> decisions_pb2.RecordDecisionRequest:
        fields = {
            "id": decision_id,
            "decision_type": "stall_response",
            "agent_id": "EXCEPTION_AGENT",
            "subject_id": "booking-4411",
            "action": "reassign",
            "confidence": 0.8,
            "context_json": json_bytes({"facts": {"stall_minutes": 12}}),
        }
        fields.update(overrides)
        return decisions_pb2.RecordDecisionRequest(**fields)

    async with running(settings, ["decisions"]):
        async with engine_channel(settings, "decisions") as ch:
            stub = decisions_pb2_grpc.DecisionsStub(ch)
            await stub.RecordDecision(decision(retried_id))
            await stub.RecordDecision(decision(reused_id))
            reply = await stub.RecordDecisions(
                decisions_pb2.RecordDecisionsRequest(
                    decisions=[
                        decision(new_id),
                        decision(retried_id),
                        decision(reused_id, action="escalate"),
                        decision("", subject_id="booking-without-id"),
                        decision(str(uuid.uuid4()), confidence=1.7),
                        decision(new_id),
                        decision(new_id, action="wait"),
                    ]
                )
            )
            with pytest.raises(grpc.aio.AioRpcError) as too_many:
                await stub.RecordDecisions(
                    decisions_pb2.RecordDecisionsRequest(
                        decisions=[decision(str(uuid.uuid4())) for _ in range(MAX_RECORD_BATCH + 1)]
                    )
                )
    results = [(r.id, r.created, r.error_code) for r in reply.results]
    generated = results[3][0]
    assert results[:3] == [(new_id, True, ""), (retried_id, False, ""), (reused_id, False, "DECISION_ID_REUSED")]
    assert uuid.UUID(generated) and results[3][1:] == (True, "")
    assert results[4][1:] == (False, "INVALID_ARGUMENT") and "confidence" in reply.results[4].error_message
    # The same id twice in one call: stored once, the copy is a retry, and a
    # different decision under it is refused like any reused id.
    assert results[5:] == [(new_id, False, ""), (new_id, False, "DECISION_ID_REUSED")]
    assert too_many.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    conn = await connect(template, database)
    try:
        rows = await conn.fetch("select id::text, action, subject_id, context::text from decisions order by subject_id")
    finally:
        await conn.close()
    stored = {r["id"]: r["action"] for r in rows}
    assert stored == {new_id: "reassign", retried_id: "reassign", reused_id: "reassign", generated: "reassign"}
    assert all(r["context"] == '{"facts": {"stall_minutes": 12}}' for r in rows)
