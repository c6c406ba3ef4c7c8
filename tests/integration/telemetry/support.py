"""Helpers for the telemetry tests: publish engine-shaped messages, read rows,
counters and consumer state, and wait for the ingest to catch up."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import asyncpg
import nats
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
) -> bytes:
    """An engine-shaped run with naive timestamps, `ms` long."""
    seconds, millis = divmod(ms, 1000)
    body: dict[str, Any] = {
        "agent_id": agent_id,
        "task_id": task_id,
        "task_type": task_type,
        "status": status,
        "started_at": "2026-09-29T20:57:00.000",
        "finished_at": f"2026-09-29T20:57:{seconds:02d}.{millis:03d}",
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
