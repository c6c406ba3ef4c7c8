"""Ingest against real JetStream and Postgres: exactly-once rows, counters,
heartbeats in the bucket, and no loss while the database is away."""

from __future__ import annotations

import asyncio
import json

import pytest
from nats.js.errors import BadRequestError, KeyNotFoundError, NoKeysError

from services.common.nats import HEARTBEAT_BUCKET, StreamLimits, ensure_topology
from services.telemetry.ingest import (
    DURABLE,
    STREAM,
    BatchPuller,
    IngestConfig,
    ensure_consumer,
)
from tests.harness import bearer, database_away, engine_nats, eventually, gateway_client, running, with_env
from tests.integration.telemetry.support import (
    ACKNOWLEDGING,
    answers,
    broker,
    consumer_state,
    counters,
    heartbeat,
    run_keys,
    task,
)


async def test_six_messages_make_three_rows_one_duplicate_one_malformed_one_heartbeat(settings, template, database):
    # The defaults (200 runs or 2 s) on purpose: a quiet stream still lands.
    assert (settings.telemetry_batch_size, settings.telemetry_batch_wait_ms) == (200, 2000)
    async with broker(settings) as (nc, js):
        await ensure_topology(js, StreamLimits(max_age_s=3600, max_bytes=2**20))
        await js.publish("telemetry.task", task("EXCEPTION_AGENT", "t-1"))
        # Another replica takes the first run and gives it back unwritten (as
        # one does when its database call fails): the service then receives
        # it as a JetStream redelivery.
        await ensure_consumer(js, IngestConfig.from_settings(settings))
        other_replica = BatchPuller(nc, stream=STREAM, durable=DURABLE)
        await other_replica.start()
        taken = await other_replica.fetch(1, 1.0)
        assert [json.loads(m.data)["task_id"] for m in taken] == ["t-1"]
        await taken[0].nak()
        await other_replica.stop()

        async with running(settings, ["telemetry"]):
            await js.publish("telemetry.task", task("EXCEPTION_AGENT", "t-2", status="failed", error="timeout"))
            await js.publish("telemetry.task", task("DISPATCH_AGENT", "t-1"))
            # The engine sending the same run again (no shared msg id, so the
            # stream keeps both and the table has to refuse the second).
            await js.publish("telemetry.task", task("EXCEPTION_AGENT", "t-1"))
            await js.publish("telemetry.task", json.dumps({"agent_id": "EXCEPTION_AGENT", "task_id": "t-9"}).encode())
            await nc.publish("telemetry.agent", heartbeat("EXCEPTION_AGENT", "busy"))
            await nc.flush()

            # Deliveries are counted before their batch commits; wait for the whole tally.
            expected = {
                "received": 5,
                "inserted": 3,
                "duplicates": 1,
                "malformed": 1,
                "redelivered": 1,
                "heartbeats": 1,
                "dead_lettered": 0,
                "malformed_by_field": {"task_type": 1},
                "agent_refusals": {},
            }
            await eventually(
                lambda: counters(settings),
                lambda seen: seen == {**dict.fromkeys(seen, 0), **expected},
                what="five task deliveries written or terminated, and one heartbeat",
            )
            assert await run_keys(template, database) == [
                ("DISPATCH_AGENT", "t-1"),
                ("EXCEPTION_AGENT", "t-1"),
                ("EXCEPTION_AGENT", "t-2"),
            ]
            # Everything acked or terminated: nothing waits, nothing is held.
            await eventually(lambda: _drained(js), what="consumer drained")
            bucket = await js.key_value(HEARTBEAT_BUCKET)
            entry = await bucket.get("EXCEPTION_AGENT")
            assert json.loads(entry.value) == {"state": "busy", "at": "2026-09-29T20:57:00"}
            with pytest.raises(KeyNotFoundError):
                await bucket.get("DISPATCH_AGENT")


async def _drained(js) -> bool:
    return await consumer_state(js) == (0, 0)


async def test_a_malformed_heartbeat_is_counted_and_not_stored(settings):
    async with running(settings, ["telemetry"]), broker(settings) as (nc, js):
        await nc.publish("telemetry.agent", b'{"agent_id": "has space", "state": "idle", "at": "2026-09-29T20:57:00"}')
        await nc.publish("telemetry.agent", heartbeat("DISPATCH_AGENT", "idle"))
        await nc.flush()

        async def handled() -> bool:
            seen = await counters(settings)
            return seen["heartbeats"] == 1 and seen["malformed"] == 1

        await eventually(handled, what="one good and one bad heartbeat handled")
        bucket = await js.key_value(HEARTBEAT_BUCKET)
        assert sorted(await bucket.keys()) == ["DISPATCH_AGENT"]


async def test_a_heartbeat_published_through_jetstream_gets_a_clear_refusal_not_a_timeout(settings):
    # Published as an engine does, so the answer goes to the engine's own inbox.
    async with running(settings, ["telemetry"]), broker(settings) as (nc, _):
        engine = await engine_nats(settings.nats_url)
        try:
            js = engine.jetstream(timeout=10)
            started = asyncio.get_running_loop().time()
            with pytest.raises(BadRequestError) as refused:
                await js.publish("telemetry.agent", heartbeat("DISPATCH_AGENT", "idle"))
            waited = asyncio.get_running_loop().time() - started
        finally:
            await engine.close()
        bucket = await nc.jetstream().key_value(HEARTBEAT_BUCKET)
        with pytest.raises(NoKeysError):
            await bucket.keys()
    assert "core NATS" in refused.value.description and "TelemetryPublisher" in refused.value.description
    # Refused at once: the publish did not sit out its 10 s ack wait.
    assert waited < 5


async def test_runs_published_while_the_database_is_away_land_once_when_it_returns(settings, template, database):
    fast = with_env(settings, telemetry_batch_size=20, telemetry_batch_wait_ms=100, telemetry_ack_wait_s=5)
    published: set[tuple[str, str]] = set()

    async with running(fast, ["telemetry"]), broker(fast) as (nc, js), answers(nc, DURABLE) as answered:

        async def publish(first: int, last: int) -> None:
            for n in range(first, last):
                agent = f"AGENT_{n % 3}"
                await js.publish("telemetry.task", task(agent, f"t-{n}", ms=100 + n))
                published.add((agent, f"t-{n}"))
                await asyncio.sleep(0.002)

        await publish(0, 60)
        await eventually(lambda: _rows_are(template, database, published), what="first runs landed")
        landed = (await js.stream_info(STREAM)).state.last_seq
        async with database_away(template, database):
            await publish(60, 200)
            # A run the engine sent twice, across the outage.
            await js.publish("telemetry.task", task("AGENT_0", "t-3", ms=103))

            # Until the ingest has answered for runs it took in the outage,
            # whatever it answered: then not one of those answers was an ack.
            async def answered_in_the_outage() -> list[str]:
                return answered.after(landed)

            given = await eventually(answered_in_the_outage, what="the ingest answered for runs sent in the outage")
            assert ACKNOWLEDGING.isdisjoint(given), f"runs were acked while the database was away: {given}"
            async with gateway_client(fast) as client:
                reply = await client.get("/admin/ai/insights", headers=bearer(role=3))
            assert reply.status_code == 503
            assert reply.json()["error"]["code"] == "DATABASE_UNAVAILABLE"
        await publish(200, 240)

        await eventually(
            lambda: _rows_are(template, database, published),
            timeout=30,
            what="every run landed after the database returned",
        )
        await eventually(lambda: _drained(js), what="consumer drained")
        seen = await counters(fast)
        assert seen["inserted"] == len(published) == 240
        assert seen["malformed"] == 0
        # The runs given back during the outage came round again, and the
        # re-sent run was refused by the table, not written twice.
        assert seen["redelivered"] >= 1
        assert seen["duplicates"] == 1
        assert seen["received"] > seen["inserted"] + seen["duplicates"]


async def _rows_are(stack, database, expected) -> bool:
    try:
        return set(await run_keys(stack, database)) == expected
    except Exception:  # noqa: BLE001 - the database may still be refusing connections
        return False
