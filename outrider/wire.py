"""Conversions between protobuf's well-known types and plain Python values.

One module for every codec, the services' and the client's alike, so that a
timestamp or a JSON object crosses the wire the same way everywhere.
"""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from typing import Any

from google.protobuf.timestamp_pb2 import Timestamp


def timestamp(value: datetime | None) -> Timestamp | None:
    """An aware datetime as a Timestamp; None stays None (the field is left unset)."""
    fields = timestamp_fields(value)
    return None if fields is None else Timestamp(**fields)


def timestamp_fields(value: datetime | None) -> dict[str, int] | None:
    """An aware datetime as a Timestamp's fields, which a message's
    constructor takes in place of a Timestamp without building one first;
    None stays None (the field is left unset)."""
    if value is None:
        return None
    if value.tzinfo is None:
        raise ValueError("a timestamp must carry a timezone")
    # Seconds and nanos straight from the instant: a third of what
    # FromDatetime costs, on paths that carry dozens of them.
    return {"seconds": math.floor(value.timestamp()), "nanos": value.microsecond * 1000}


def timestamp_datetime(stamp: Timestamp, present: bool = True) -> datetime | None:
    """A Timestamp field as an aware UTC datetime, or None when it was left unset."""
    if not present or (stamp.seconds == 0 and stamp.nanos == 0):
        return None
    return stamp.ToDatetime(tzinfo=UTC)


class MalformedJson(ValueError):
    """Bytes that are not the UTF-8 JSON a field promises."""


def json_bytes(value: Any) -> bytes:
    """A JSON value as the compact UTF-8 bytes a `*_json` field carries.

    JSON text, not google.protobuf.Struct: a Struct holds every number as a
    double, so an engine's 18 came back as 18.0 and an integer past 2**53 came
    back as a different integer. Text carries what was written.
    """
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()
    except (TypeError, ValueError, UnicodeEncodeError, RecursionError) as exc:
        raise MalformedJson(f"not representable as JSON: {type(exc).__name__}") from None


def json_value(data: bytes) -> Any:
    """The value a `*_json` field carries; None when the field is empty (not sent)."""
    if not data:
        return None
    try:
        return json.loads(data, parse_constant=_refuse_constant)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise MalformedJson(f"not UTF-8 JSON: {type(exc).__name__}") from None


def json_object(data: bytes) -> dict[str, Any] | None:
    """Like json_value, but the value must be an object."""
    value = json_value(data)
    if value is not None and not isinstance(value, dict):
        raise MalformedJson(f"must be a JSON object, got {type(value).__name__}")
    return value


def _refuse_constant(name: str) -> Any:
    # NaN and Infinity are Python's extension, not JSON: no other reader
    # would accept them back.
    raise ValueError(f"{name} is not JSON")
