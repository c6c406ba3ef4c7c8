"""Mutations of well-formed messages, for the fuzzers of the NATS subjects
and of /v1/traces.

Each mutation starts from a message a real producer sends and breaks it in
one of the ways a careless or hostile one does: bytes flipped or cut, a
field of another JSON type, numbers past every width, instants at and past
the calendar's ends, text no identifier may hold (NUL, lone surrogates,
zero widths, bidi controls, look-alike letters), nesting deep enough to
exhaust a recursive parser, and sizes past each cap. Everything is drawn
from a random.Random, so a seed replays a run exactly.
"""

from __future__ import annotations

import gzip
import json
import random
from collections.abc import Mapping
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

# Values of every JSON type, for a field whose type is swapped.
SWAPPED_TYPES: tuple[Any, ...] = (None, True, False, 0, -1, 1.5, "", "x", [], {}, [1, "a"], {"a": {"b": 1}})
# JSON number literals no 64-bit integer or finite double holds, and the
# smallest ones beside them; spelled as text, since json.dumps refuses some.
EXTREME_NUMBERS = (
    "1" + "0" * 4000,
    "-" + "9" * 400,
    "9223372036854775808",
    "-9223372036854775809",
    "18446744073709551616",
    "1e308",
    "1e400",
    "-1e400",
    "5e-324",
    "-0",
    "NaN",
    "Infinity",
    "-Infinity",
)
# Instants at and past the calendar's ends, the epoch, impossible dates and
# offsets, and other ways to write "not a time".
EXTREME_INSTANTS: tuple[Any, ...] = (
    "0001-01-01T00:00:00+14:00",
    "0001-01-01T00:00:00Z",
    "9999-12-31T23:59:59-14:00",
    "9999-12-31T23:59:59.999999999Z",
    "1970-01-01T00:00:00Z",
    "1999-12-31T23:59:59Z",
    "2999-01-01T00:00:00Z",
    "2026-02-30T10:00:00Z",
    "2026-09-29T24:00:00Z",
    "2026-09-29T23:59:60Z",
    "2026-09-29T10:00:00+24:00",
    "2026-09-29T10:00:00+14:01",
    "2026-09-29T10:00:00-23:59",
    "+2026-09-29T10:00:00Z",
    "2026-09-29",
    "2026-W40-2T10:00:00Z",
    # The same instant in Devanagari and in full-width digits.
    "\u0968\u0966\u0968\u096c-\u0966\u096f-\u0968\u096fT\u0967\u0966:\u0966\u0966:\u0966\u0966Z",
    "\uff12\uff10\uff12\uff16-\uff10\uff19-\uff12\uff19T\uff11\uff10:\uff10\uff10:\uff10\uff10Z",
    "now",
    "",
    1_790_000_000,
    1_790_000_000_000_000_000,
)
# Text an identifier or a stored text must not hold, or holds only once
# normalised: each is spliced into a field's own value.
HOSTILE_TEXT = (
    "\x00",
    "\ud800",
    "\udfff",
    "\u200b",
    "\u200d",
    "\u2060",
    "\ufeff",
    "\u202e",
    "\u2066",
    "\u061c",
    "\u0415",  # Cyrillic capital IE, drawn as the Latin E
    "\u0410",  # Cyrillic capital A
    "\uff25\uff38",  # full-width "EX"
    "\u0301\u0301\u0301",
    "\x1b[31m",
    "\r\n",
    "\u2028",
    "\U0001f600",
    "\U000e0041",
    "\ufffd",
)
# What of it a protobuf string can carry: the library encodes every string
# as UTF-8, which a lone surrogate is not (byte flips send invalid UTF-8).
PROTOBUF_TEXT = tuple(text for text in HOSTILE_TEXT if not any(0xD800 <= ord(char) <= 0xDFFF for char in text))
DEPTHS = (64, 1_000, 100_000)
# Sizes around the caps: a telemetry or facts message's 64 KiB, the OTLP
# message's 256 KiB, and past NATS's own 1 MiB payload limit.
OVERSIZES = (64 * 1024 - 64, 64 * 1024 + 1, 256 * 1024 + 1, 900 * 1024, 1024 * 1024 + 1)

_MARKER = "\u2603mutated\u2603"


def flip_bytes(rng: random.Random, data: bytes) -> bytes:
    buffer = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        if buffer:
            buffer[rng.randrange(len(buffer))] ^= 1 << rng.randrange(8)
    return bytes(buffer)


def truncated(rng: random.Random, data: bytes) -> bytes:
    return data[: rng.randrange(len(data))] if data else data


def _encoded(event: Mapping[str, Any], rng: random.Random, literal: str | None = None) -> bytes:
    """The event as JSON, with the marker value replaced by `literal`'s text when given."""
    text = json.dumps(event, ensure_ascii=rng.random() < 0.5)
    if literal is not None:
        text = text.replace(json.dumps(_MARKER, ensure_ascii=True), literal)
        text = text.replace(json.dumps(_MARKER, ensure_ascii=False), literal)
    return text.encode("utf-8", "surrogatepass")


def _nested(rng: random.Random) -> str:
    depth = rng.choice(DEPTHS)
    if rng.random() < 0.5:
        return "[" * depth + "]" * depth
    return '{"a":' * depth + "1" + "}" * depth


def mutated_json(rng: random.Random, event: Mapping[str, Any], instants: tuple[str, ...]) -> bytes:
    """One mutation of a well-formed JSON event; `instants` names its time fields."""
    event = dict(event)
    field = rng.choice(sorted(event))
    form = rng.randrange(12)
    if form == 0:
        return flip_bytes(rng, _encoded(event, rng))
    if form == 1:
        return truncated(rng, _encoded(event, rng))
    if form == 2:
        event[field] = rng.choice(SWAPPED_TYPES)
    elif form == 3:
        event[field] = _MARKER
        return _encoded(event, rng, rng.choice(EXTREME_NUMBERS))
    elif form == 4:
        event[rng.choice(instants)] = rng.choice(EXTREME_INSTANTS)
    elif form == 5:
        value = str(event[field])
        cut = rng.randint(0, len(value))
        event[field] = value[:cut] + rng.choice(HOSTILE_TEXT) + value[cut:]
    elif form == 6:
        event[field] = _MARKER
        return _encoded(event, rng, _nested(rng))
    elif form == 7:
        event[rng.choice((field, "padding"))] = "x" * rng.choice(OVERSIZES)
    elif form == 8:
        # The same key twice: parsers disagree on which one wins.
        text = _encoded(event, rng).decode("utf-8", "surrogatepass")
        duplicate = json.dumps({field: rng.choice(SWAPPED_TYPES)})[1:-1]
        return (text[:-1] + ", " + duplicate + "}").encode("utf-8", "surrogatepass")
    elif form == 9:
        del event[field]
    elif form == 10:
        return rng.choice((b"[]", b"null", b"1", b'"text"', b"\xef\xbb\xbf{}", b"\xff\xfe{}", b"", b"{", b"}"))
    else:
        # Valid in shape, every field mutated at once.
        for name in event:
            event[name] = rng.choice((*SWAPPED_TYPES, *EXTREME_INSTANTS, *HOSTILE_TEXT))
    return _encoded(event, rng)


# ─── OTLP ──────────────────────────────────────────────────────────────────

# Byte lengths an id may wrongly have: empty, one short, one long, and far off.
ID_LENGTHS = (0, 1, 7, 9, 15, 17, 32, 1000)
# Nanoseconds since the epoch: unset, the first, just before 2000, the year
# 2500, and the largest int64 and uint64 (the years 2262 and 2554).
NANOS = (0, 1, 946_684_799 * 10**9, 16_725_225_600 * 10**9, 2**63 - 1, 2**64 - 1)


def _any(rng: random.Random) -> AnyValue:
    pick = rng.randrange(6)
    if pick == 0:
        return AnyValue(int_value=rng.choice((0, -1, 2**63 - 1, -(2**63))))
    if pick == 1:
        return AnyValue(double_value=rng.choice((float("nan"), float("inf"), -0.0, 1e308)))
    if pick == 2:
        return AnyValue(bool_value=True)
    if pick == 3:
        return AnyValue(bytes_value=bytes(rng.randrange(256) for _ in range(rng.randrange(40))))
    if pick == 4:
        value = AnyValue()
        value.array_value.values.add().string_value = rng.choice(PROTOBUF_TEXT)
        return value
    return AnyValue(string_value="EXCEPTION_AGENT" + rng.choice(PROTOBUF_TEXT))


def mutated_spans(rng: random.Random, request: ExportTraceServiceRequest) -> ExportTraceServiceRequest:
    """The request with one span broken in one field, by the field's meaning."""
    broken = ExportTraceServiceRequest()
    broken.CopyFrom(request)
    span = broken.resource_spans[0].scope_spans[0].spans[0]
    form = rng.randrange(8)
    if form == 0:
        length = rng.choice(ID_LENGTHS)
        setattr(span, rng.choice(("trace_id", "span_id", "parent_span_id")), rng.randbytes(length))
    elif form == 1:
        setattr(span, rng.choice(("start_time_unix_nano", "end_time_unix_nano")), rng.choice(NANOS))
    elif form == 2:
        span.name = rng.choice(("", "x" * 100_000, "invoke_agent" + rng.choice(PROTOBUF_TEXT)))
    elif form == 3:
        # Every attribute the mapping reads, of a wrong type or text.
        for attribute in span.attributes:
            attribute.value.CopyFrom(_any(rng))
    elif form == 4:
        span.attributes.extend(
            KeyValue(key=f"k{n}", value=AnyValue(int_value=n)) for n in range(rng.choice((1_000, 20_000)))
        )
    elif form == 5:
        span.status.code = rng.choice((1, 2, 7, 2**31 - 1))
        span.status.message = rng.choice(PROTOBUF_TEXT) * rng.choice((1, 10_000))
    elif form == 6:
        # The same span many times over, and spans with nothing set.
        for _ in range(rng.choice((100, 2_000))):
            broken.resource_spans[0].scope_spans[0].spans.add().CopyFrom(span)
        broken.resource_spans[0].scope_spans[0].spans.add()
    else:
        key = rng.choice(("gen_ai.agent.name", "service.name"))
        attributes = broken.resource_spans[0].resource.attributes if key == "service.name" else span.attributes
        attributes.add(key=key).value.CopyFrom(_any(rng))
    return broken


def mutated_protobuf(rng: random.Random, request: ExportTraceServiceRequest) -> bytes:
    """One mutation of a well-formed export, as the bytes on the wire."""
    form = rng.randrange(4)
    data = request.SerializeToString()
    if form == 0:
        return flip_bytes(rng, data)
    if form == 1:
        return truncated(rng, data)
    if form == 2:
        # A field number or wire type the message does not have, or a length past the end.
        return data + rng.choice((b"\x0a\xff\xff\xff\xff\x0f", b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", b"\x0b"))
    return mutated_spans(rng, request).SerializeToString()


def gzip_bomb(size: int) -> bytes:
    """`size` zero bytes, gzipped: a few kilobytes that inflate past a cap."""
    return gzip.compress(b"\x00" * size, compresslevel=9)
