"""Stream alerts end to end: the outcomes context's own alert job reads the
streams' state from the telemetry context (which reads NATS), fires
`stream_full` for a stream past 80 % of its limit and `ingest_lag` for a
consumer that stopped taking runs while they keep arriving, and resolves
each once the consumer reads again. The consumer is stopped by pausing it
on the NATS server: the telemetry context keeps running and answering."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from nats.js import JetStreamContext

from outrider.v1 import telemetry_pb2, telemetry_pb2_grpc
from services.common.errors import Unavailable
from services.common.settings import Settings
from services.telemetry import ingest_state
from services.telemetry.ingest import DURABLE, STREAM
from tests.harness import bearer, eventually, gateway_client, running, service_channel, service_nats, with_env
from tests.integration.telemetry.support import broker, task


def paused_for(minutes: int = 10) -> str:
    return (datetime.now(UTC) + timedelta(minutes=minutes)).strftime("%Y-%m-%dT%H:%M:%SZ")


async def alerts_of(client: httpx.AsyncClient, rule: str, state: str) -> list[dict[str, Any]]:
    reply = await client.get(f"/admin/ai/alerts?state={state}", headers=bearer(role=1))
    assert reply.status_code == 200, reply.text
    return [alert for alert in reply.json()["items"] if alert["rule"] == rule]


async def ingest_reading(settings: Settings) -> telemetry_pb2.IngestState:
    async with service_channel(settings, "telemetry") as channel:
        return await telemetry_pb2_grpc.TelemetryStub(channel).GetIngestState(telemetry_pb2.GetIngestStateRequest())


def consumer_of(reply: telemetry_pb2.IngestState, stream: str, name: str) -> telemetry_pb2.ConsumerIngest:
    [found] = [c for s in reply.streams if s.name == stream for c in s.consumers if c.name == name]
    return found


@contextlib.asynccontextmanager
async def arriving(js: JetStreamContext, every_s: float = 0.2) -> AsyncIterator[list[int]]:
    """Runs published one every `every_s` for the block; yields how many so far."""
    sent = [0]

    async def publish() -> None:
        while True:
            await js.publish("telemetry.task", task("DISPATCH_AGENT", f"steady-{sent[0]}"))
            sent[0] += 1
            await asyncio.sleep(every_s)

    publisher = asyncio.create_task(publish())
    try:
        yield sent
    finally:
        publisher.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await publisher


async def test_a_stream_past_80_percent_fires_stream_full_and_resolves_once_drained(settings):
    small = with_env(settings, stream_max_msgs_per_subject=100, alert_interval_s=1.0, telemetry_batch_wait_ms=100)
    async with running(small, ["telemetry", "outcomes"]), broker(small) as (_, js), gateway_client(small) as client:
        await js.pause_consumer(STREAM, DURABLE, paused_for())
        for n in range(85):
            await js.publish("telemetry.task", task("DISPATCH_AGENT", f"t-{n}"))
        held = await ingest_reading(small)
        [firing] = await eventually(
            lambda: alerts_of(client, "stream_full", "firing"), timeout=30, what="stream_full firing"
        )
        await js.resume_consumer(STREAM, DURABLE)
        [resolved] = await eventually(
            lambda: alerts_of(client, "stream_full", "resolved"), timeout=30, what="stream_full resolved"
        )
        still_firing = await alerts_of(client, "stream_full", "firing")
        drained = await ingest_reading(small)
    [telemetry] = [s for s in held.streams if s.name == "TELEMETRY"]
    assert telemetry.fullness == pytest.approx(0.85)
    assert telemetry.measure == "85 of 100 messages on telemetry.task"
    assert consumer_of(held, "TELEMETRY", DURABLE).pending == 85
    assert firing["summary"] == "TELEMETRY is 85% of its limit (85 of 100 messages on telemetry.task)"
    assert (firing["value"], firing["threshold"]) == (pytest.approx(0.85), 0.8)
    assert resolved["id"] == firing["id"] and resolved["resolved_at"] is not None
    assert still_firing == []
    assert [(s.name, s.fullness) for s in drained.streams] == [("TELEMETRY", 0.0), ("FACTS", 0.0)]


async def test_a_consumer_stopped_while_runs_keep_arriving_fires_ingest_lag_and_resolves_once_it_reads(settings):
    small = with_env(settings, alert_ingest_lag_s=3, alert_interval_s=1.0, telemetry_batch_wait_ms=100)
    async with running(small, ["telemetry", "outcomes"]), broker(small) as (_, js), gateway_client(small) as client:
        async with arriving(js) as sent:
            # Taken as they come while the consumer reads.
            reading = await eventually(
                lambda: ingest_reading(small),
                lambda reply: sent[0] >= 5 and consumer_of(reply, "TELEMETRY", DURABLE).pending == 0,
                what="the ingest keeping up",
            )
            keeping_up = consumer_of(reading, "TELEMETRY", DURABLE)
            stopped_at = time.monotonic()
            await js.pause_consumer(STREAM, DURABLE, paused_for())
            [firing] = await eventually(
                lambda: alerts_of(client, "ingest_lag", "firing"), timeout=30, what="ingest_lag firing"
            )
            behind = consumer_of(await ingest_reading(small), "TELEMETRY", DURABLE)
            stopped_for = time.monotonic() - stopped_at
            await js.resume_consumer(STREAM, DURABLE)
            [resolved] = await eventually(
                lambda: alerts_of(client, "ingest_lag", "resolved"), timeout=30, what="ingest_lag resolved"
            )
            caught_up = consumer_of(await ingest_reading(small), "TELEMETRY", DURABLE)
    assert keeping_up.seconds_behind == 0.0
    assert firing["summary"].startswith("consumer TELEMETRY/telemetry-ingest is ")
    assert firing["value"] >= 3 and firing["threshold"] == 3
    # The oldest run it was not handed arrived after it stopped: never more
    # behind than the time since, and at least the threshold by now.
    assert 3 <= behind.seconds_behind <= stopped_for + 0.5
    assert behind.pending > 0
    assert resolved["id"] == firing["id"]
    # Runs still arrive, and the consumer takes each within a pull or two.
    assert caught_up.seconds_behind < 3


async def test_seconds_behind_is_the_age_of_the_oldest_run_not_yet_delivered(settings):
    async with running(settings, ["telemetry"]), broker(settings) as (_, js):
        await js.pause_consumer(STREAM, DURABLE, paused_for())
        before = time.monotonic()
        await js.publish("telemetry.task", task("DISPATCH_AGENT", "first"))
        after = time.monotonic()
        await asyncio.sleep(1.0)
        await js.publish("telemetry.task", task("DISPATCH_AGENT", "second"))
        read_from = time.monotonic()
        reply = await ingest_reading(settings)
        read_until = time.monotonic()
    behind = consumer_of(reply, "TELEMETRY", DURABLE)
    assert behind.pending == 2
    # Stamped by the NATS server's clock, on this same machine: within the
    # instants around the first publish, give or take the read.
    assert read_from - after - 0.05 <= behind.seconds_behind <= read_until - before + 0.05
    assert consumer_of(reply, "TELEMETRY", "telemetry-otlp-ingest").seconds_behind == 0.0
    assert reply.pending_limit == settings.ingest_lag_max


async def test_a_nats_that_does_not_answer_is_unavailable(settings):
    client = await service_nats(settings.nats_url)
    js = client.jetstream()
    await client.close()
    with pytest.raises(Unavailable) as refused:
        await ingest_state.read(js, clock=lambda: datetime.now(UTC))
    assert refused.value.code == "NATS_UNREACHABLE"
