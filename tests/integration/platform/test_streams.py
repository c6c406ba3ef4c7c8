"""The streams against a real NATS and Postgres: work queues that hold only
what is still owed, with the properties the consumers had before (ack after
commit, redelivery, dead-letter at the last delivery, the dedupe window, one
durable shared by replicas), limits as a backstop that refuses a flood to its
flooder, and the migration of streams earlier releases made."""

from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import replace

import asyncpg
import pytest
from nats.js.api import (
    AckPolicy,
    ConsumerConfig,
    DiscardPolicy,
    RetentionPolicy,
    StorageType,
    StreamConfig,
)
from nats.js.errors import BadRequestError, NoStreamResponseError, ServiceUnavailableError

from outrider.publishing import publish_once
from services.common.db import context_engine
from services.common.nats import (
    STREAMS,
    TOPOLOGY_BUCKET,
    StreamLimits,
    ensure_topology,
)
from services.common.runtime import ContextServer
from services.common.stream_state import read_stream
from services.outcomes.consumer import DURABLE as FACTS_DURABLE
from services.outcomes.consumer import FactsConsumer
from services.telemetry.counters import Counters
from services.telemetry.ingest import DURABLE as TASK_DURABLE
from services.telemetry.ingest import Ingest, IngestConfig, ensure_consumer
from services.telemetry.otlp import codec as otlp_codec
from tests.harness import (
    database_away,
    engine_nats,
    eventually,
    running,
    service_nats,
    with_env,
)
from tests.integration.platform.test_nats_access import Refusals
from tests.integration.telemetry.otlp_support import export, span
from tests.integration.telemetry.support import broker, counters, task

LIMITS = StreamLimits(max_age_s=7200.0, max_bytes=64 * 2**20)
# A failed run's error text makes a run about 1 KiB, so a few thousand of
# them are megabytes.
ERROR = "connection reset by peer; " * 30


def booking(n: int) -> bytes:
    return json.dumps({"subject_id": f"BK-{n}", "at": "2026-09-29T10:00:00+00:00", "status": "assigned"}).encode()


async def run_count(settings) -> int:
    conn = await asyncpg.connect(settings.database_url.replace("postgresql+asyncpg://", "postgresql://"))
    try:
        return await conn.fetchval("select count(*) from telemetry.runs")
    finally:
        await conn.close()


async def booked(settings) -> set[str]:
    conn = await asyncpg.connect(settings.database_url.replace("postgresql+asyncpg://", "postgresql://"))
    try:
        return {row["subject_id"] for row in await conn.fetch("select subject_id from outcomes.subject_facts")}
    finally:
        await conn.close()


async def held(js, stream: str) -> tuple[int, int, int]:
    """(messages the stream holds, and across its consumers those pending and awaiting an ack)."""
    state = await read_stream(js, stream)
    return (
        state.messages,
        sum(c.pending for c in state.consumers),
        sum(c.ack_pending for c in state.consumers),
    )


async def test_new_streams_are_work_queues_with_every_backstop_and_a_second_start_changes_nothing(template):
    client = await service_nats(template.nats_url)
    try:
        js = client.jetstream()
        for info in await js.streams_info():
            await js.delete_stream(info.config.name)
        await ensure_topology(js, replace(LIMITS, max_msgs_per_subject=5000))
        for spec in STREAMS:
            config = (await js.stream_info(spec.name)).config
            assert config.retention == RetentionPolicy.WORK_QUEUE
            assert (config.max_age, config.max_bytes, config.discard) == (7200.0, 64 * 2**20, DiscardPolicy.NEW)
            assert (config.max_msgs_per_subject, config.discard_new_per_subject) == (5000, True)
            assert config.max_msg_size == spec.max_message_bytes
        assert (await js.stream_info("FACTS")).config.subjects == ["facts.booking", "facts.booking.*"]
        # A second start (or a second replica) changes nothing.
        await ensure_topology(js, LIMITS)
        assert (await js.stream_info("FACTS")).config.max_msgs_per_subject == 5000
        assert TOPOLOGY_BUCKET not in {info.config.name.removeprefix("KV_") for info in await js.streams_info()}
    finally:
        await client.close()


async def test_an_operators_limits_survive_a_start_and_missing_subjects_are_added(template):
    client = await service_nats(template.nats_url)
    try:
        js = client.jetstream()
        for info in await js.streams_info():
            await js.delete_stream(info.config.name)
        # An operator made FACTS by hand, bigger, with an extra subject of theirs and without ours.
        await js.add_stream(
            StreamConfig(
                name="FACTS",
                subjects=["ops.manual"],
                storage=StorageType.FILE,
                max_age=86_400.0 * 30,
                max_bytes=10 * 2**30,
            )
        )
        await ensure_topology(js, LIMITS)
        config = (await js.stream_info("FACTS")).config
        assert (config.max_age, config.max_bytes) == (86_400.0 * 30, 10 * 2**30)
        assert set(config.subjects) == {"ops.manual", "facts.booking", "facts.booking.*"}
    finally:
        await client.close()


async def test_a_two_mib_stream_carries_four_mib_of_consumed_runs_refusing_none(settings):
    small = with_env(settings, stream_max_mb=2, telemetry_batch_wait_ms=100)
    refused: list[str] = []
    published = 0
    async with running(small, ["telemetry"]), broker(small) as (_, js):
        engine = await engine_nats(small.nats_url)
        try:
            engine_js = engine.jetstream(timeout=5)

            async def publish(n: int) -> None:
                nonlocal published
                body = task("EXCEPTION_AGENT", f"t-{n}", status="failed", error=ERROR)
                try:
                    await engine_js.publish("telemetry.task", body, headers={"Nats-Msg-Id": f"EXCEPTION_AGENT:t-{n}"})
                except Exception as error:  # noqa: BLE001 - every refusal is what this test counts
                    refused.append(f"{type(error).__name__}: {error}")
                    return
                published += len(body)

            runs = 4400
            for first in range(0, runs, 50):
                await asyncio.gather(*(publish(n) for n in range(first, first + 50)))
        finally:
            await engine.close()
        await eventually(lambda: run_count(small), lambda count: count == runs, timeout=60, what="every run written")
        left = await eventually(lambda: held(js, "TELEMETRY"), lambda h: h == (0, 0, 0), what="stream emptied")
        max_bytes = (await js.stream_info("TELEMETRY")).config.max_bytes
    assert refused == []
    assert max_bytes == 2 * 2**20 and published > 2 * max_bytes
    assert left == (0, 0, 0)


async def test_runs_and_facts_the_database_refused_land_after_the_outage_and_leave_the_stream(
    settings, template, database
):
    fast = with_env(settings, telemetry_batch_size=20, telemetry_batch_wait_ms=100, telemetry_ack_wait_s=5)
    async with running(fast, ["telemetry", "outcomes"]), broker(fast) as (_, js):
        async with database_away(template, database):
            for n in range(30):
                await js.publish("telemetry.task", task("DISPATCH_AGENT", f"t-{n}"), headers={"Nats-Msg-Id": f"t-{n}"})
                await js.publish("facts.booking", booking(n), headers={"Nats-Msg-Id": f"BK-{n}"})
            # The consumers took messages and could not write them: none was
            # acked, so the streams still hold them all.
            await eventually(lambda: counters(fast), lambda c: c["received"] > 0, what="runs delivered")
            await eventually(
                lambda: js.consumer_info("FACTS", FACTS_DURABLE),
                lambda info: info.num_redelivered > 0,
                what="facts delivered again",
            )
            assert (await held(js, "TELEMETRY"))[0] == 30
            assert (await held(js, "FACTS"))[0] == 30
        await eventually(lambda: run_count(fast), lambda count: count == 30, timeout=30, what="every run written")
        await eventually(lambda: booked(fast), lambda seen: len(seen) == 30, timeout=30, what="every fact merged")
        for stream in ("TELEMETRY", "FACTS"):
            await eventually(lambda s=stream: held(js, s), lambda h: h == (0, 0, 0), what=f"{stream} emptied")


async def test_what_is_given_up_on_at_its_last_delivery_is_counted_and_leaves_the_stream(settings, template, database):
    # One delivery allowed: the first failure is the last.
    last = with_env(settings, max_deliver=1, telemetry_batch_wait_ms=100)
    [spans] = otlp_codec.admit(export(span(1, "handle_booking"))).messages
    async with running(last, ["telemetry", "outcomes"]), broker(last) as (_, js):
        async with database_away(template, database):
            for n in range(3):
                await js.publish("telemetry.task", task("DISPATCH_AGENT", f"t-{n}"))
            await js.publish(otlp_codec.SUBJECT, spans)
            await js.publish("facts.booking", booking(1))
            seen = await eventually(
                lambda: counters(last), lambda c: c["dead_lettered"] == 4, timeout=30, what="runs and spans given up on"
            )
            for stream in ("TELEMETRY", "FACTS"):
                # Left behind, they would sit in the work queue until their age
                # limit, no consumer ever delivering them again.
                await eventually(lambda s=stream: held(js, s), lambda h: h == (0, 0, 0), what=f"{stream} emptied")
    assert seen["inserted"] == 0


async def test_a_resent_message_is_dropped_after_the_original_left_the_stream(settings):
    fast = with_env(settings, telemetry_batch_wait_ms=100)
    async with running(fast, ["telemetry"]), broker(fast) as (_, js):
        first = await js.publish("telemetry.task", task("DISPATCH_AGENT", "t-1"), headers={"Nats-Msg-Id": "run-1"})
        await eventually(lambda: held(js, "TELEMETRY"), lambda h: h == (0, 0, 0), what="the original consumed")
        again = await js.publish("telemetry.task", task("DISPATCH_AGENT", "t-1"), headers={"Nats-Msg-Id": "run-1"})
        info = await js.stream_info("TELEMETRY")
        seen = await counters(fast)
    # Inside the window the stream still knows the id, though the message is gone.
    assert again.duplicate and again.seq == first.seq
    assert (info.state.messages, info.state.last_seq) == (0, first.seq)
    assert (seen["received"], seen["inserted"]) == (1, 1)


async def test_replicas_share_one_consumer_and_a_second_consumer_on_a_subject_is_refused(settings):
    fast = with_env(settings, telemetry_batch_wait_ms=100)
    async with running(fast, ["telemetry"]), broker(fast) as (_, js):
        second = ContextServer("telemetry", fast)
        await second.start("127.0.0.1:0")
        try:
            for n in range(200):
                await js.publish("telemetry.task", task(f"AGENT_{n % 4}", f"t-{n}"))
            await eventually(lambda: run_count(fast), lambda count: count == 200, what="every run written once")
            await eventually(lambda: held(js, "TELEMETRY"), lambda h: h == (0, 0, 0), what="stream emptied")
            with pytest.raises(BadRequestError) as refused:
                await js.add_consumer(
                    "TELEMETRY",
                    ConsumerConfig(
                        durable_name="another", filter_subject="telemetry.task", ack_policy=AckPolicy.EXPLICIT
                    ),
                )
            consumers = sorted(info.name for info in await js.consumers_info("TELEMETRY"))
        finally:
            await second.stop(grace=0.5)
    assert refused.value.err_code == 10100  # filtered consumer not unique on workqueue stream
    assert consumers == ["telemetry-ingest", "telemetry-otlp-ingest"]


async def test_a_flood_on_an_unread_subject_is_refused_and_bookings_go_on(settings):
    refusals = Refusals()
    async with running(settings, ["outcomes"]), broker(settings) as (_, js):
        engine = await engine_nats(settings.nats_url, error_cb=refusals.note)
        try:
            junk = b"x" * 4096
            for _ in range(2000):
                await engine.publish("facts.invoice", junk)
            await engine.flush()
            ack = await publish_once(engine.jetstream(timeout=5), "facts.booking", booking(7), msg_id="BK-7")
        finally:
            await engine.close()
        await eventually(lambda: booked(settings), lambda seen: seen == {"BK-7"}, what="the booking merged")
        # Nor does the services' credential store it: no stream takes the subject.
        with pytest.raises(NoStreamResponseError):
            await js.publish("facts.invoice", b"{}", timeout=2)
        info = await js.stream_info("FACTS")
    assert ack.stream == "FACTS" and info.state.last_seq == 1
    assert refusals.mention("facts.invoice")


async def test_a_full_subject_refuses_its_own_publishes_and_no_others(settings):
    capped = with_env(settings, stream_max_msgs_per_subject=10)
    [spans] = otlp_codec.admit(export(span(1, "handle_booking"))).messages
    async with broker(capped) as (_, js):
        await ensure_topology(js, StreamLimits.of(capped))
        # Nobody consumes: the stream keeps what it is sent, up to its caps.
        for n in range(10):
            await js.publish("telemetry.task", task("FLOODER", f"t-{n}"))
        with pytest.raises(ServiceUnavailableError) as refused:
            await js.publish("telemetry.task", task("FLOODER", "t-10"))
        await js.publish(otlp_codec.SUBJECT, spans)
        await js.publish("facts.booking", booking(1))
        with pytest.raises(BadRequestError) as too_big:
            await js.publish("facts.booking", b"{" + b" " * 300_000 + b"}")
        subjects = (await js.stream_info("TELEMETRY", subjects_filter=">")).state.subjects
    assert "maximum messages per subject exceeded" in refused.value.description
    assert "message size exceeds maximum" in too_big.value.description
    assert subjects == {"telemetry.task": 10, otlp_codec.SUBJECT: 1}


# ─── Migrating the streams of earlier releases ─────────────────────────────


async def old_streams(js) -> None:
    """The streams as releases before work queues made them, with their consumers."""
    for info in await js.streams_info():
        await js.delete_stream(info.config.name)
    for name, subjects in (("TELEMETRY", ["telemetry.task", "telemetry.otlp"]), ("FACTS", ["facts.>"])):
        await js.add_stream(
            StreamConfig(
                name=name,
                subjects=subjects,
                storage=StorageType.FILE,
                max_age=7 * 86_400.0,
                max_bytes=3 * 2**30,
                discard=DiscardPolicy.NEW,
                duplicate_window=120.0,
            )
        )
    await ensure_consumer(js, IngestConfig(), durable=TASK_DURABLE, subjects=("telemetry.task",))
    await js.add_consumer(
        "FACTS",
        ConsumerConfig(durable_name=FACTS_DURABLE, filter_subject="facts.booking", ack_policy=AckPolicy.EXPLICIT),
    )


async def consume_all(js, stream: str, durable: str, count: int) -> None:
    subscription = await js.pull_subscribe_bind(durable, stream)
    taken = 0
    while taken < count:
        for message in await subscription.fetch(count - taken, timeout=5):
            await message.ack_sync()
            taken += 1
    await subscription.unsubscribe()


async def test_an_old_stream_that_owes_nothing_becomes_a_work_queue_keeping_its_limits(settings, caplog):
    async with broker(settings) as (_, js):
        await old_streams(js)
        for n in range(5):
            await js.publish("telemetry.task", task("DISPATCH_AGENT", f"t-{n}"))
            await js.publish("facts.booking", booking(n))
        # A subject nobody ever read, which no release will read again.
        await js.publish("facts.invoice", b"{}")
        await consume_all(js, "TELEMETRY", TASK_DURABLE, 5)
        await consume_all(js, "FACTS", FACTS_DURABLE, 5)
        with caplog.at_level(logging.INFO, logger="services.common.nats"):
            await ensure_topology(js, StreamLimits.of(settings))
        configs = {spec.name: (await js.stream_info(spec.name)).config for spec in STREAMS}
        states = {name: await held(js, name) for name in configs}
    for config in configs.values():
        assert config.retention == RetentionPolicy.WORK_QUEUE
        assert config.max_bytes == 3 * 2**30, "the limit it had is kept"
        assert (config.max_msgs_per_subject, config.discard_new_per_subject) == (
            settings.stream_max_msgs_per_subject,
            True,
        )
    assert configs["FACTS"].subjects == ["facts.booking", "facts.booking.*"]
    assert states == {"TELEMETRY": (0, 0, 0), "FACTS": (0, 0, 0)}
    recreated = [r.__dict__["stream"] for r in caplog.records if r.getMessage().startswith("stream recreated")]
    assert sorted(recreated) == ["FACTS", "TELEMETRY"]


async def test_an_old_stream_that_still_owes_is_left_and_migrated_once_it_is_caught_up(settings, caplog):
    async with broker(settings) as (_, js):
        await old_streams(js)
        for n in range(3):
            await js.publish("facts.booking", booking(n))
        with caplog.at_level(logging.ERROR, logger="services.common.nats"):
            await ensure_topology(js, StreamLimits.of(settings))
        left = await js.stream_info("FACTS")
        owed = [r for r in caplog.records if r.name == "services.common.nats"]
        # The outcomes context takes what was owed; the next start migrates.
        async with running(settings, ["outcomes"]):
            await eventually(lambda: booked(settings), lambda seen: len(seen) == 3, what="the owed facts merged")
            await ensure_topology(js, StreamLimits.of(settings))
            migrated = await js.stream_info("FACTS")
            # The running consumer makes its durable again and takes what follows.
            await publish_once(js, "facts.booking", booking(9), msg_id="BK-9")
            await eventually(lambda: booked(settings), lambda seen: "BK-9" in seen, what="a fact after the migration")
    assert left.config.retention == RetentionPolicy.LIMITS and left.state.messages == 3
    # It no longer stores subjects nobody reads, even before it is migrated.
    assert left.config.subjects == ["facts.booking", "facts.booking.*"]
    assert [(record.__dict__["stream"], record.__dict__["owed"]) for record in owed] == [
        ("FACTS", ["consumer outcomes-facts: 3 not yet delivered, 0 awaiting an ack"])
    ]
    assert migrated.config.retention == RetentionPolicy.WORK_QUEUE


async def test_replicas_starting_together_migrate_once_under_traffic_and_lose_nothing(settings):
    fast = with_env(settings, telemetry_batch_wait_ms=100)
    async with broker(fast) as (nc, js):
        await old_streams(js)
        # The release before, still running while the new one starts: one
        # consumer of each stream, pulling.
        telemetry_db = context_engine(fast.database_url, "telemetry")
        outcomes_db = context_engine(fast.database_url, "outcomes")
        ingest = Ingest(nc, js, telemetry_db, Counters(), IngestConfig(batch_wait_s=0.1))
        await ingest.start()
        facts = FactsConsumer(js, outcomes_db)
        before = [
            asyncio.create_task(ingest.run()),
            asyncio.create_task(facts.consume(await facts.subscribe())),
        ]
        publisher = await engine_nats(fast.nats_url)
        engine_js = publisher.jetstream(timeout=2)
        sent = 0
        stop = asyncio.Event()

        async def traffic() -> None:
            nonlocal sent
            while not stop.is_set():
                await publish_once(engine_js, "telemetry.task", task("DISPATCH_AGENT", f"t-{sent}"), msg_id=f"t-{sent}")
                await publish_once(engine_js, "facts.booking", booking(sent), msg_id=f"BK-{sent}")
                sent += 1
                await asyncio.sleep(0.005)

        publishing = asyncio.create_task(traffic())
        servers = [ContextServer(name, fast) for name in ("telemetry", "telemetry", "outcomes", "outcomes")]
        try:
            await eventually(lambda: _value(sent), lambda n: n >= 20, what="traffic flowing")
            await asyncio.gather(*(server.start("127.0.0.1:0") for server in servers))
            await eventually(
                lambda: js.stream_info("FACTS"),
                lambda info: info.config.retention == RetentionPolicy.WORK_QUEUE,
                what="FACTS migrated",
            )
            await asyncio.sleep(0.5)
            stop.set()
            await publishing
            await eventually(lambda: run_count(fast), lambda n: n == sent, timeout=60, what="every run written")
            await eventually(lambda: booked(fast), lambda seen: len(seen) == sent, timeout=60, what="every fact")
            configs = [(await js.stream_info(spec.name)).config for spec in STREAMS]
        finally:
            stop.set()
            await publisher.close()
            for job in before:
                job.cancel()
            await asyncio.gather(*before, return_exceptions=True)
            await asyncio.gather(*(server.stop(grace=0.5) for server in servers), return_exceptions=True)
            await telemetry_db.dispose()
            await outcomes_db.dispose()
    assert [config.retention for config in configs] == [RetentionPolicy.WORK_QUEUE] * 2
    assert await run_count(fast) == sent and len(await booked(fast)) == sent


async def _value(value: int) -> int:
    return value
