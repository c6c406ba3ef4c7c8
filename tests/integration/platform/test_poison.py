"""Poison pills: hostile messages interleaved with good ones. Every good one
lands exactly once, every bad one is counted and terminated, and the consumer
is still serving at the end, for each JetStream consumer."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import asyncpg
from grpc_health.v1 import health_pb2, health_pb2_grpc

from outrider.rpc import keyed_channel as channel
from services.outcomes.consumer import DURABLE as FACTS_DURABLE
from services.outcomes.consumer import STREAM as FACTS_STREAM
from services.telemetry.ingest import DURABLE as TASK_DURABLE
from services.telemetry.ingest import STREAM as TASK_STREAM
from tests.harness import INTERNAL_KEY, eventually, running, service_nats
from tests.integration.telemetry.support import counters, execute, run_keys, task

# Bytes a careless or hostile producer sends, each a member of a class that
# once killed a consumer or held its batch.
HOSTILE = [
    b'{"agent_id": ' + b"[" * 5000 + b"]" * 5000 + b"}",
    b'{"agent_id": "A", "task_id": ' + b"9" * 5000 + b"}",
    b'{"subject_id": "b-1", "at": "9999-12-31T23:59:59-23:59", "status": "x"}',
    b'{"subject_id": "b-1", "at": "2026-09-29T10:00:00Z", "status": "lost\\u0000", "cancelled": true}',
    b'{"agent_id": "A\\u0000", "task_id": "t\\u0000", "status": "\\u0000"}',
    b'{"agent_id": "\\ud800", "subject_id": "\\udfff", "at": "\\ud800"}',
    b'{"agent_id": "A", "task_id": NaN, "subject_id": Infinity}',
    b"\xff\xfe\x00{not json",
    b"",
    b"[]",
    b'"just text"',
    b"x" * 200_000,
]
GOOD = 60


async def alive(settings, context: str) -> bool:
    async with channel(settings.addr(context), INTERNAL_KEY) as ch:
        reply = await health_pb2_grpc.HealthStub(ch).Check(health_pb2.HealthCheckRequest(), timeout=2)
    return reply.status == health_pb2.HealthCheckResponse.SERVING


async def settled(js, stream: str, durable: str) -> tuple[int, int]:
    info = await js.consumer_info(stream, durable)
    return info.num_pending, info.num_ack_pending


async def test_task_runs_survive_poison_and_a_run_the_database_refuses(settings, template, database):
    # A run the database itself refuses (a data exception, as a NUL or an
    # oversized key would raise): found by splitting the batch, terminated.
    await execute(
        template,
        database,
        """
        create function telemetry.refuse_poison() returns trigger language plpgsql as $$
        begin
            if new.task_id = 'poison' then raise exception 'refused' using errcode = '22023'; end if;
            return new;
        end $$;
        create trigger refuse_poison before insert on telemetry.runs
        for each row execute function telemetry.refuse_poison();
    """,
    )
    async with running(settings, ["telemetry"]):
        client = await service_nats(settings.nats_url)
        try:
            js = client.jetstream()
            for n in range(GOOD):
                await js.publish("telemetry.task", task("EXCEPTION_AGENT", f"t-{n}"))
                if n % 5 == 0:
                    await js.publish("telemetry.task", HOSTILE[(n // 5) % len(HOSTILE)])
            await js.publish("telemetry.task", task("EXCEPTION_AGENT", "poison"))
            await eventually(
                lambda: settled(js, TASK_STREAM, TASK_DURABLE),
                lambda state: state == (0, 0),
                what="every task message settled",
            )
            seen = await counters(settings)
            assert await alive(settings, "telemetry")
        finally:
            await client.close()
    assert await run_keys(template, database) == sorted(("EXCEPTION_AGENT", f"t-{n}") for n in range(GOOD))
    assert seen["inserted"] == GOOD and seen["duplicates"] == 0
    assert seen["malformed"] == GOOD // 5 + 1
    assert seen["malformed_by_field"]["unstorable"] == 1


async def test_facts_survive_poison_and_an_event_the_database_refuses(settings, template, database):
    conn = await asyncpg.connect(template.raw_dsn(database))
    try:
        await conn.execute("""
            create function outcomes.refuse_poison() returns trigger language plpgsql as $$
            begin
                if new.subject_id = 'poison' then raise exception 'refused' using errcode = '22023'; end if;
                return new;
            end $$;
            create trigger refuse_poison before insert on outcomes.subject_facts
            for each row execute function outcomes.refuse_poison();
        """)
    finally:
        await conn.close()
    at = datetime(2026, 9, 29, 10, tzinfo=UTC)
    async with running(settings, ["outcomes"]):
        client = await service_nats(settings.nats_url)
        try:
            js = client.jetstream()
            for n in range(GOOD):
                event = {"subject_id": f"b-{n}", "at": (at + timedelta(minutes=n)).isoformat(), "status": "created"}
                await js.publish("facts.booking", json.dumps(event).encode())
                if n % 5 == 0:
                    await js.publish("facts.booking", HOSTILE[(n // 5) % len(HOSTILE)])
            await js.publish(
                "facts.booking",
                json.dumps({"subject_id": "poison", "at": at.isoformat(), "status": "created"}).encode(),
            )
            await eventually(
                lambda: settled(js, FACTS_STREAM, FACTS_DURABLE),
                lambda state: state == (0, 0),
                what="every facts message settled",
            )
            assert await alive(settings, "outcomes")
        finally:
            await client.close()
    conn = await asyncpg.connect(template.raw_dsn(database), server_settings={"search_path": "outcomes"})
    try:
        stored = {row["subject_id"] for row in await conn.fetch("select subject_id from subject_facts")}
        rejections = {
            row["field"]: row["count"] for row in await conn.fetch("select field, count from fact_rejections")
        }
        samples = [row["last_payload"] for row in await conn.fetch("select last_payload from fact_rejections")]
    finally:
        await conn.close()
    assert stored == {f"b-{n}" for n in range(GOOD)}
    assert sum(rejections.values()) == GOOD // 5 + 1 and rejections["unstorable"] == 1
    # The rejected payloads, NUL and all, were stored as printable samples.
    assert all("\x00" not in sample for sample in samples)
