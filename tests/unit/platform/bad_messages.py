"""Bad messages for every NATS subject, each carrying a planted personal
value: in the field that fails (so the refusal quotes it), beside a field
that fails, under a personal key, in JSON cut short, in bytes that are no
JSON at all, in a span the OTLP mapping refuses.

Drawn from a random.Random, so hypothesis drives them in the unit tests and
a seeded sample feeds the live consumers in the integration test.
"""

from __future__ import annotations

import json
import random

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

from tests.unit.playground.planted import PERSONAL, Personal, obfuscated

SUBJECTS = ("telemetry.task", "telemetry.agent", "facts.booking", "telemetry.otlp")

# The fields each subject's events have, with a value that reads well.
_FIELDS: dict[str, dict[str, object]] = {
    "telemetry.task": {
        "agent_id": "EXCEPTION_AGENT",
        "task_id": "t-1",
        "task_type": "triage",
        "status": "succeeded",
        "started_at": "2026-09-29T10:00:00Z",
        "finished_at": "2026-09-29T10:00:05Z",
        "error": "",
    },
    "telemetry.agent": {"agent_id": "EXCEPTION_AGENT", "state": "idle", "at": "2026-09-29T10:00:00Z"},
    "facts.booking": {"subject_id": "b-1", "at": "2026-09-29T10:00:00Z", "status": "created"},
}
# The field each subject refuses when it holds free text, and what breaks
# a message whatever else it holds.
_QUOTING = {
    "telemetry.task": ("started_at", "finished_at", "status"),
    "telemetry.agent": ("at", "state"),
    "facts.booking": ("at", "assigned_at", "delivered_at", "status"),
}
_BREAKING = {
    "telemetry.task": ("agent_id", 7),
    "telemetry.agent": ("at", 7),
    "facts.booking": ("at", 7),
}
_KEYS = ("customer_phone", "customer_name", "note", "contact", "payload", "x", "drop_address", "meta")


def planted_value(rng: random.Random) -> Personal:
    """A personal value of any kind a text can hold, written plainly or to walk around a pattern."""
    value = rng.choice([make for make in PERSONAL if make(random.Random(0)).loose])(rng)
    return obfuscated(rng, value) if rng.random() < 0.5 else value


def bad_message(rng: random.Random, subject: str, value: Personal) -> bytes:
    if subject == "telemetry.otlp":
        return _bad_otlp(rng, value)
    event = dict(_FIELDS[subject])
    form = rng.randrange(5)
    if form == 0:
        # The refused field holds the value, and its refusal quotes it.
        event[rng.choice(_QUOTING[subject])] = value.written
    elif form == 1:
        # The value sits under its own key beside a field that fails.
        key, broken = _BREAKING[subject]
        event[key] = broken
        event[rng.choice(_KEYS)] = value.written
    elif form == 2:
        # Nested deeper, with the event's required field gone.
        event.pop(next(iter(event)))
        event["meta"] = {"who": [value.written, {rng.choice(_KEYS): value.written}]}
    elif form == 3:
        # JSON cut short right after the value.
        ascii_only = rng.random() < 0.5
        event[rng.choice(_KEYS)] = value.written
        text = json.dumps(event, ensure_ascii=ascii_only)
        quoted = json.dumps(value.written, ensure_ascii=ascii_only)
        end = text.index(quoted) + len(quoted) - rng.randrange(0, 2)
        return text[:end].encode("utf-8", "surrogatepass")
    else:
        # Not JSON at all.
        noise = rng.choice((b"\xff\xfe", b"<xml>", b"\x00\x01", b"not json: "))
        return noise + value.written.encode("utf-8", "surrogatepass") + rng.choice((b"", b"\x00", b" }"))
    return json.dumps(event, ensure_ascii=rng.random() < 0.5).encode("utf-8", "surrogatepass")


def _bad_otlp(rng: random.Random, value: Personal) -> bytes:
    if rng.random() < 0.3:
        # Not a protobuf message: the parser's complaint, and the bytes.
        return b"\x0a\xff" + value.written.encode("utf-8", "surrogatepass") + b"\x12"
    # A span the mapping refuses (it ends before it starts), the value in its text.
    request = ExportTraceServiceRequest()
    span = request.resource_spans.add().scope_spans.add().spans.add()
    span.trace_id = bytes(range(1, 17))
    span.span_id = bytes(range(1, 9))
    span.name = rng.choice(("invoke_agent triage", "chat", value.written))
    span.start_time_unix_nano = 1_790_000_000_000_000_000
    span.end_time_unix_nano = span.start_time_unix_nano - rng.randrange(1, 10**9)
    span.status.message = value.written
    attributes = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "EXCEPTION_AGENT"}
    attributes[rng.choice(("gen_ai.agent.name", "gen_ai.request.model", "error.type"))] = value.written
    span.attributes.extend(KeyValue(key=key, value=AnyValue(string_value=text)) for key, text in attributes.items())
    return request.SerializeToString()
