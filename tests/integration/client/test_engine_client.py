"""The engine client never slows or breaks its caller: with Outrider down it
answers at once, bounds its memory and counts what it dropped; when Outrider
comes back, retries land each decision exactly once."""

from __future__ import annotations

import time
import uuid
from datetime import UTC, datetime, timedelta

import asyncpg
import grpc
import pytest

from outrider.client.decisions import DecisionRecorder, PrecedentClient
from outrider.client.subjects import LeaseRefused, SubjectGate
from outrider.client.telemetry import TelemetryPublisher
from outrider.v1 import decisions_pb2, decisions_pb2_grpc
from outrider.wire import timestamp
from tests.harness import INTERNAL_KEY, NATS_ENGINE, eventually, reserved_port, running, service_channel
from tests.integration.telemetry.support import counters, run_keys

CONTEXT = {"stall_minutes": 14, "zone": "hsr"}


def record(recorder: DecisionRecorder, **overrides) -> str:
    fields = {
        "decision_type": "stall_response",
        "agent_id": "EXCEPTION_AGENT",
        "subject_id": "BK-1",
        "action": "reassign",
        "confidence": 0.8,
        "context": CONTEXT,
        "model": "claude-sonnet-4-5",
    }
    fields.update(overrides)
    return recorder.record(**fields)


async def count_decisions(dsn: str) -> int:
    conn = await asyncpg.connect(dsn, server_settings={"search_path": "decisions"})
    try:
        return await conn.fetchval("select count(*) from decisions")
    finally:
        await conn.close()


async def test_recorder_with_outrider_down_never_blocks_and_bounds_memory():
    recorder = DecisionRecorder(
        f"127.0.0.1:{reserved_port()}",
        INTERNAL_KEY,
        max_queue=10,
        max_attempts=2,
        backoff_s=(0.01, 0.02),
        call_timeout_s=0.2,
    )
    started = time.monotonic()
    ids = [record(recorder, subject_id=f"BK-{i}") for i in range(200)]
    elapsed = time.monotonic() - started
    assert len(set(ids)) == 200
    assert elapsed < 1.0, "record() must only enqueue"
    assert recorder.counters.dropped["queue_full"] >= 189
    await recorder.close(timeout_s=5)
    dropped = recorder.counters.dropped
    assert recorder.counters.sent == 0
    assert sum(dropped.values()) == 200
    assert dropped["retries_exhausted"] + dropped["shutdown"] + dropped["queue_full"] == 200
    assert record(recorder) and recorder.counters.dropped["closed"] == 1


async def test_retries_after_an_outage_record_each_decision_once(settings, template, database):
    recorder = DecisionRecorder(
        settings.addr("decisions"), INTERNAL_KEY, max_attempts=40, backoff_s=(0.05, 0.2), call_timeout_s=0.5
    )
    first = record(recorder, subject_id="BK-outage-1")
    second = record(recorder, subject_id="BK-outage-2")

    # Once a call to the context that is down has failed, to be retried,
    # none of the decisions counts as sent.
    async def retried() -> int:
        return recorder.counters.retried

    await eventually(retried, what="a call to the decisions context that is down failed")
    assert recorder.counters.sent == 0
    async with running(settings, ["decisions"]):
        assert await recorder.flush(timeout_s=30)
        again = record(recorder, subject_id="BK-outage-1", decision_id=first)
        assert await recorder.flush(timeout_s=10)
        await recorder.close()
        assert again == first
        assert recorder.counters.retried >= 1
        assert recorder.counters.sent == 3
        assert await count_decisions(template.raw_dsn(database)) == 2
    assert second != first


async def test_a_refused_decision_is_dropped_not_retried(settings):
    async with running(settings, ["decisions"]):
        recorder = DecisionRecorder(settings.addr("decisions"), INTERNAL_KEY)
        record(recorder, confidence=1.7)
        record(recorder, decided_at=datetime.now(UTC) + timedelta(hours=2))
        await recorder.close()
    assert recorder.counters.dropped["rejected"] == 2
    assert recorder.counters.retried == 0


async def test_precedents_answer_safely_when_outrider_is_down():
    client = PrecedentClient(f"127.0.0.1:{reserved_port()}", INTERNAL_KEY, timeout_s=0.3)
    answer = await client.precedents("stall_response", CONTEXT, k=5)
    await client.close()
    assert answer.available is False
    assert answer.items == ()
    assert client.unavailable == 1


async def test_precedents_return_judged_decisions_only(settings):
    async with running(settings, ["decisions"]):
        recorder = DecisionRecorder(settings.addr("decisions"), INTERNAL_KEY)
        ids = [record(recorder, subject_id=f"BK-{i}", context={**CONTEXT, "stall_minutes": 10 + i}) for i in range(4)]
        await recorder.close()
        async with service_channel(settings, "decisions") as ch:
            stub = decisions_pb2_grpc.DecisionsStub(ch)
            await stub.SetOutcomes(
                decisions_pb2.SetOutcomesRequest(
                    verdicts=[
                        decisions_pb2.OutcomeVerdict(id=ids[0], outcome="success"),
                        decisions_pb2.OutcomeVerdict(id=ids[1], outcome="failure"),
                        decisions_pb2.OutcomeVerdict(id=ids[2], outcome="unknown"),
                    ],
                    judged_by="sweeper",
                )
            )
        client = PrecedentClient(settings.addr("decisions"), INTERNAL_KEY, timeout_s=5)
        answer = await client.precedents("stall_response", CONTEXT, k=10)
        await client.close()
    assert answer.available
    assert {p.id for p in answer.items} == {ids[0], ids[1]}
    assert (answer.successes, answer.failures, answer.success_rate) == (1, 1, 0.5)


async def test_lease_refuses_when_the_subject_is_unknown(settings):
    async with running(settings, ["decisions"]):
        gate = SubjectGate(settings.addr("decisions"), INTERNAL_KEY)
        try:
            with pytest.raises(LeaseRefused) as refused:
                await gate.lease(f"never-registered-{uuid.uuid4().hex[:6]}")
        finally:
            await gate.close()
    assert (refused.value.status, refused.value.code) == (grpc.StatusCode.NOT_FOUND, "SUBJECT_NOT_FOUND")


async def test_a_republished_task_run_is_one_row_and_heartbeats_reach_the_bucket(settings, template, database):
    started = datetime.now(UTC) - timedelta(seconds=3)
    async with running(settings, ["telemetry"]):
        publisher = await TelemetryPublisher.connect(
            settings.nats_url, user=NATS_ENGINE.name, password=NATS_ENGINE.password
        )
        try:
            for _ in range(2):
                # A publish retried after a lost ack: same agent and task.
                await publisher.task_run(
                    agent_id="EXCEPTION_AGENT",
                    task_id="t-1",
                    task_type="stall_check",
                    status="succeeded",
                    started_at=started,
                    finished_at=started + timedelta(seconds=1),
                )
            await publisher.task_run(
                agent_id="EXCEPTION_AGENT",
                task_id="t-2",
                task_type="stall_check",
                status="failed",
                started_at=started,
                finished_at=started + timedelta(seconds=2),
                error="upstream timeout",
            )
            await publisher.heartbeat(agent_id="EXCEPTION_AGENT", state="watching stalls")
        finally:
            await publisher.close()
        await eventually(lambda: _landed(settings), what="two runs and one heartbeat")
        seen = await counters(settings)
    assert await run_keys(template, database) == [("EXCEPTION_AGENT", "t-1"), ("EXCEPTION_AGENT", "t-2")]
    assert seen["duplicates"] == 0, "the stream de-duplicates by message id before the consumer"
    assert seen["received"] == 2


async def _landed(settings) -> bool:
    seen = await counters(settings)
    return seen["inserted"] == 2 and seen["heartbeats"] == 1


async def test_the_human_gate_answers_newest_intent_last(settings):
    async with running(settings, ["decisions"]):
        async with service_channel(settings, "decisions") as ch:
            stub = decisions_pb2_grpc.DecisionsStub(ch)
            await stub.RegisterSubject(decisions_pb2.RegisterSubjectRequest(id="BK-77", plan_ref="plan-3"))
            now = datetime.now(UTC)
            for n, body in enumerate(("hold until the customer calls back", "outrider verify step-2")):
                # Written after the plan was accepted: a verify binds to the
                # plan in force when the person wrote it.
                at = timestamp(now + timedelta(seconds=n))
                await stub.RecordHumanInput(
                    decisions_pb2.RecordHumanInputRequest(
                        provider="tracker:ops/bookings",
                        external_id=f"c-{n}",
                        subject_id="BK-77",
                        author="ops@example.com",
                        at=at,
                        body=body,
                    )
                )
        gate = SubjectGate(settings.addr("decisions"), INTERNAL_KEY)
        lease = await gate.lease("BK-77")
        await gate.close()
    assert [d.kind for d in lease.human_decisions] == ["operator_instruction", "plan_step_approval"]
    assert lease.human_decisions[0].body == "hold until the customer calls back"
    assert (lease.human_decisions[1].plan_ref, lease.human_decisions[1].step) == ("plan-3", "step-2")


async def test_ten_thousand_decisions_through_the_recorder_land_exactly_once(settings, template, database):
    async with running(settings, ["decisions"]):
        recorder = DecisionRecorder(settings.addr("decisions"), INTERNAL_KEY, max_queue=10_000, call_timeout_s=30)
        ids = [
            record(recorder, subject_id=f"BK-{i}", context={**CONTEXT, "stall_minutes": i % 90}) for i in range(10_000)
        ]
        assert await recorder.flush(timeout_s=120)
        # The engine retrying a tenth of them by id (a restart that replays
        # its log) changes nothing in decision memory.
        for i in range(0, 10_000, 10):
            record(recorder, subject_id=f"BK-{i}", context={**CONTEXT, "stall_minutes": i % 90}, decision_id=ids[i])
        await recorder.close(timeout_s=60)
    assert recorder.counters.sent == 11_000
    assert not recorder.counters.dropped
    conn = await asyncpg.connect(template.raw_dsn(database), server_settings={"search_path": "decisions"})
    try:
        stored = await conn.fetch("select id::text as id, subject_id from decisions")
    finally:
        await conn.close()
    assert len(stored) == 10_000
    assert {row["id"] for row in stored} == set(ids)
    assert {row["subject_id"] for row in stored} == {f"BK-{i}" for i in range(10_000)}


async def test_one_refused_decision_in_a_batch_leaves_the_others_recorded(settings, template, database):
    async with running(settings, ["decisions"]):
        recorder = DecisionRecorder(settings.addr("decisions"), INTERNAL_KEY)
        kept = [record(recorder, subject_id=f"BK-{i}") for i in range(3)]
        record(recorder, subject_id="BK-bad", confidence=1.7)
        kept.append(record(recorder, subject_id="BK-4"))
        await recorder.close()
    assert recorder.counters.sent == 4
    assert recorder.counters.dropped == {"rejected": 1}
    assert recorder.counters.retried == 0
    conn = await asyncpg.connect(template.raw_dsn(database), server_settings={"search_path": "decisions"})
    try:
        stored = {row[0] for row in await conn.fetch("select id::text from decisions")}
    finally:
        await conn.close()
    assert stored == set(kept)
