"""Helpers for the telemetry tests: publish engine-shaped messages, read rows,
counters and consumer state, and wait for the ingest to catch up."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg
import nats
from nats.aio.msg import Msg
from nats.js import JetStreamContext

from outrider.v1 import telemetry_pb2, telemetry_pb2_grpc
from services.common.settings import Settings
from services.telemetry.ingest import DURABLE, STREAM
from tests.harness import Stack, service_channel, service_nats


def task(
    agent_id: str,
    task_id: str,
    *,
    status: str = "succeeded",
    ms: int = 1000,
    task_type: str = "stall_response",
    error: str | None = None,
    started: datetime | None = None,
) -> bytes:
    """An engine-shaped run with naive timestamps (read as UTC), `ms` long,
    started when `started` says or else a minute ago: inside every window and
    every retention period."""
    begun = (started or datetime.now(UTC) - timedelta(minutes=1)).astimezone(UTC).replace(tzinfo=None)
    body: dict[str, Any] = {
        "agent_id": agent_id,
        "task_id": task_id,
        "task_type": task_type,
        "status": status,
        "started_at": begun.isoformat(timespec="milliseconds"),
        "finished_at": (begun + timedelta(milliseconds=ms)).isoformat(timespec="milliseconds"),
    }
    if error is not None:
        body["error"] = error
    return json.dumps(body).encode()


def heartbeat(agent_id: str, state: str) -> bytes:
    return json.dumps({"agent_id": agent_id, "state": state, "at": "2026-09-29T20:57:00"}).encode()


@asynccontextmanager
async def broker(settings: Settings) -> AsyncIterator[tuple[nats.NATS, JetStreamContext]]:
    client = await service_nats(settings.nats_url)
    try:
        yield client, client.jetstream()
    finally:
        await client.close()


async def counters(settings: Settings) -> dict[str, Any]:
    async with service_channel(settings, "telemetry") as ch:
        reply = await telemetry_pb2_grpc.TelemetryStub(ch).GetCounters(telemetry_pb2.GetCountersRequest())
    seen: dict[str, Any] = {
        field.name: getattr(reply, field.name) for field in telemetry_pb2.Counters.DESCRIPTOR.fields
    }
    seen["malformed_by_field"] = dict(reply.malformed_by_field)
    seen["agent_refusals"] = dict(reply.agent_refusals)
    return seen


async def run_keys(stack: Stack, database: str) -> list[tuple[str, str]]:
    conn = await asyncpg.connect(stack.raw_dsn(database), server_settings={"search_path": "telemetry"})
    try:
        rows = await conn.fetch("select agent_id, task_id from runs")
    finally:
        await conn.close()
    return sorted((r["agent_id"], r["task_id"]) for r in rows)


async def execute(stack: Stack, database: str, sql: str, *args: Any) -> None:
    conn = await asyncpg.connect(stack.raw_dsn(database), server_settings={"search_path": "telemetry,public"})
    try:
        await conn.execute(sql, *args)
    finally:
        await conn.close()


async def consumer_state(js: JetStreamContext) -> tuple[int, int]:
    """(messages not yet delivered, delivered but not acked) on the shared consumer."""
    info = await js.consumer_info(STREAM, DURABLE)
    return info.num_pending, info.num_ack_pending


# A JetStream acknowledgement's body: empty or +ACK (and +NXT, ack and pull
# again) take the message off the stream's hands; -NAK gives it back, +TERM
# drops it, +WPI asks for more time.
ACKNOWLEDGING = frozenset({"", "+ACK", "+NXT"})


class Answers:
    """What a consumer's readers answered for each message delivered, as the
    server hears it: every answer is published to the message's ack subject,
    $JS.ACK.<stream>.<consumer>.<delivered>.<stream seq>.<consumer seq>.<time>.<pending>,
    which any connection of the account may listen to."""

    def __init__(self) -> None:
        self.heard: list[tuple[int, str]] = []

    async def note(self, msg: Msg) -> None:
        answer = msg.data.split(b" ", 1)[0].decode()
        self.heard.append((int(msg.subject.split(".")[5]), answer))

    def after(self, stream_seq: int) -> list[str]:
        """The answers given, so far, for messages the stream stored after `stream_seq`."""
        return [answer for seq, answer in self.heard if seq > stream_seq]


@asynccontextmanager
async def answers(nc: nats.NATS, durable: str) -> AsyncIterator[Answers]:
    """Every answer given on `durable` of the TELEMETRY stream while the block runs."""
    heard = Answers()
    subscription = await nc.subscribe(f"$JS.ACK.{STREAM}.{durable}.>", cb=heard.note)
    # A request sent after the subscription is answered once the server holds
    # it; a flush is not (nats-py writes its PING ahead of waiting commands).
    await nc.jetstream().stream_info(STREAM)
    try:
        yield heard
    finally:
        await subscription.unsubscribe()
