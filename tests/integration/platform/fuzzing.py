"""What the fuzzers share: a well-formed OTLP export to start from, the
search for planted values in everything they saw, and the questions a
barrier asks (has a consumer settled, is a context still live)."""

from __future__ import annotations

import json
import re
import time
from typing import Any

from grpc_health.v1 import health_pb2, health_pb2_grpc
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1 import trace_pb2

from outrider.rpc import keyed_channel
from services.common.runtime import LIVENESS_SERVICE
from services.telemetry.otlp import codec as otlp_codec
from tests.harness import INTERNAL_KEY
from tests.unit.playground.planted import Personal, plain


def shown(values: list[Personal], *texts: str) -> list[tuple[str, str]]:
    """The planted values any of `texts` shows, as (kind, probe): what
    Personal.leaked finds, with each text read plainly once rather than once
    per value, since a fuzzer plants thousands."""
    readings = [reading for text in texts for reading in (text, plain(text))]
    folded = [reading.casefold() for reading in readings]
    found: list[tuple[str, str]] = []
    for value in values:
        for probe in value.probes:
            if value.words:
                if any(probe.casefold() in reading for reading in folded) and any(
                    re.search(rf"(?<![^\W\d_]){re.escape(probe)}(?![^\W\d_])", reading, re.I) for reading in readings
                ):
                    found.append((value.kind, probe))
            elif any(probe in reading for reading in readings):
                found.append((value.kind, probe))
    return found


def intact(value: Personal, data: bytes) -> bool:
    """Whether `data` holds `value` whole, as UTF-8 or as JSON writes it."""
    forms = {value.written, json.dumps(value.written)[1:-1], json.dumps(value.written, ensure_ascii=False)[1:-1]}
    return any(form.encode("utf-8", "surrogatepass") in data for form in forms)


async def settled(js: Any, stream: str, durable: str) -> tuple[int, int]:
    """(messages not yet delivered, delivered but not settled) on a durable consumer."""
    info = await js.consumer_info(stream, durable)
    return info.num_pending, info.num_ack_pending


async def live(address: str) -> bool:
    """Whether the context at `address` says its every job is still running."""
    async with keyed_channel(address, INTERNAL_KEY) as channel:
        reply = await health_pb2_grpc.HealthStub(channel).Check(
            health_pb2.HealthCheckRequest(service=LIVENESS_SERVICE), timeout=5
        )
    return reply.status == health_pb2.HealthCheckResponse.SERVING


def export(trace_id: bytes, planted: str) -> ExportTraceServiceRequest:
    """An export as an OpenTelemetry SDK sends it: one agent invocation that failed."""
    request = ExportTraceServiceRequest()
    resource = request.resource_spans.add()
    resource.resource.attributes.add(key="service.name").value.string_value = "dispatch-engine"
    span = resource.scope_spans.add().spans.add()
    span.trace_id = trace_id
    span.span_id = trace_id[:8]
    span.name = "invoke_agent triage"
    span.end_time_unix_nano = time.time_ns() - 10**9
    span.start_time_unix_nano = span.end_time_unix_nano - 2 * 10**9
    span.status.code = trace_pb2.Status.STATUS_CODE_ERROR
    span.status.message = f"no rider for {planted}"
    span.attributes.extend(
        KeyValue(key=key, value=AnyValue(string_value=value))
        for key, value in (("gen_ai.operation.name", "invoke_agent"), ("gen_ai.agent.name", "EXCEPTION_AGENT"))
    )
    return request


def published(request: ExportTraceServiceRequest) -> ExportTraceServiceRequest:
    """The request as the gateway publishes it on telemetry.otlp: admitted and reduced."""
    admission = otlp_codec.admit(request)
    assert len(admission.messages) == 1, admission.problems
    reduced = ExportTraceServiceRequest()
    reduced.ParseFromString(admission.messages[0])
    return reduced
