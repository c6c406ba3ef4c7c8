"""Helpers for the OTLP tests: the gateway served over real HTTP (exporters
speak HTTP, not ASGI), an OpenTelemetry SDK pointed at it, OTLP bodies built
by hand, and the rows the spans became."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import asyncpg
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1 import trace_pb2
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from services.common.settings import Settings
from tests.harness import INTERNAL_KEY, Stack, serving_gateway

TRACE = bytes.fromhex("4bf92f3577b34da6a3ce929d0e0e4736")
# Spans start ten minutes before the tests do: inside every insights window,
# which places a run and a model call by their own time.
START = (time.time_ns() // 10**9 - 600) * 10**9


@asynccontextmanager
async def live_gateway(settings: Settings) -> AsyncIterator[str]:
    """The gateway on 127.0.0.1 in this event loop, lifespan and all; yields its base URL."""
    async with serving_gateway(settings) as base:
        yield base


@contextmanager
def tracer_provider(base_url: str, service: str, *, headers: dict[str, str] | None = None) -> Iterator[TracerProvider]:
    """An SDK provider whose every finished span is exported at once, as
    protobuf over HTTP, to the gateway. Use it from a worker thread: the
    export blocks until the gateway answers."""
    exporter = OTLPSpanExporter(
        endpoint=f"{base_url}/v1/traces", headers=headers if headers is not None else {"x-internal-key": INTERNAL_KEY}
    )
    provider = TracerProvider(resource=Resource.create({"service.name": service}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    try:
        yield provider
    finally:
        provider.shutdown()


def attribute(key: str, value: Any) -> KeyValue:
    if isinstance(value, bool):
        return KeyValue(key=key, value=AnyValue(bool_value=value))
    if isinstance(value, int):
        return KeyValue(key=key, value=AnyValue(int_value=value))
    return KeyValue(key=key, value=AnyValue(string_value=value))


def span(
    n: int,
    name: str,
    *,
    parent: int | None = None,
    ms: int = 100,
    trace: bytes = TRACE,
    failed: bool = False,
    **attributes: Any,
) -> trace_pb2.Span:
    """A span of `trace`, id n, `ms` long; attribute names use __ for dots."""
    return trace_pb2.Span(
        trace_id=trace,
        span_id=n.to_bytes(8, "big"),
        parent_span_id=parent.to_bytes(8, "big") if parent else b"",
        name=name,
        start_time_unix_nano=START,
        end_time_unix_nano=START + ms * 1_000_000,
        status=trace_pb2.Status(code=trace_pb2.Status.StatusCode.STATUS_CODE_ERROR if failed else 0),
        attributes=[attribute(key.replace("__", "."), value) for key, value in attributes.items()],
    )


def export(*spans: trace_pb2.Span, service: str | None = "booking-engine") -> ExportTraceServiceRequest:
    request = ExportTraceServiceRequest()
    resource_spans = request.resource_spans.add()
    if service is not None:
        resource_spans.resource.attributes.append(attribute("service.name", service))
    resource_spans.scope_spans.add().spans.extend(spans)
    return request


async def rows(stack: Stack, database: str, sql: str) -> list[dict[str, Any]]:
    conn = await asyncpg.connect(stack.raw_dsn(database), server_settings={"search_path": "telemetry"})
    try:
        return [dict(row) for row in await conn.fetch(sql)]
    finally:
        await conn.close()


async def table_text(stack: Stack, database: str) -> str:
    """Every row of both tables as text, to search for what must not be there."""
    found = await rows(
        stack,
        database,
        "select row_to_json(r)::text as t from runs r union all select row_to_json(m)::text from model_calls m",
    )
    return "\n".join(row["t"] for row in found)


async def register(stack: Stack, database: str, agent_id: str) -> None:
    conn = await asyncpg.connect(stack.raw_dsn(database), server_settings={"search_path": "registry"})
    try:
        await conn.execute("insert into agents (id, name, runtime, status) values ($1, $1, 'engine', 'live')", agent_id)
    finally:
        await conn.close()


@asynccontextmanager
async def published(nc: Any) -> AsyncIterator[list[bytes]]:
    """Every telemetry.otlp message published while the block runs, as the
    stream was handed it: the stream itself keeps a message only until the
    ingest has taken it."""
    seen: list[bytes] = []

    async def note(message: Any) -> None:
        seen.append(message.data)

    subscription = await nc.subscribe("telemetry.otlp", cb=note)
    await nc.flush()
    try:
        yield seen
    finally:
        await subscription.unsubscribe()


def metric_samples(text: str) -> dict[str, float]:
    return {
        line.rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1])
        for line in text.splitlines()
        if line and not line.startswith("#")
    }
