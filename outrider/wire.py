"""Conversions between protobuf's well-known types and plain Python values.

One module for every codec, the services' and the client's alike, so that a
timestamp or a JSON object crosses the wire the same way everywhere.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any

from google.protobuf.json_format import MessageToDict
from google.protobuf.struct_pb2 import Struct
from google.protobuf.timestamp_pb2 import Timestamp

# Doubles hold integers exactly up to 2**53; beyond that a whole-looking
# double is not a count anyone wrote.
_EXACT_INTEGER = 2**53


def timestamp(value: datetime | None) -> Timestamp | None:
    """An aware datetime as a Timestamp; None stays None (the field is left unset)."""
    if value is None:
        return None
    if value.tzinfo is None:
        raise ValueError("a timestamp must carry a timezone")
    # Seconds and nanos straight from the instant: a third of what
    # FromDatetime costs, on paths that carry dozens of them.
    return Timestamp(seconds=math.floor(value.timestamp()), nanos=value.microsecond * 1000)


def instant(stamp: Timestamp, present: bool = True) -> datetime | None:
    """A Timestamp field as an aware UTC datetime, or None when it was left unset."""
    if not present or (stamp.seconds == 0 and stamp.nanos == 0):
        return None
    return stamp.ToDatetime(tzinfo=timezone.utc)


def whole_numbers(value: Any) -> Any:
    """Undo Struct's doubles: an engine's 12 arrives as 12.0 and should read back as 12."""
    if isinstance(value, float) and value.is_integer() and abs(value) < _EXACT_INTEGER:
        return int(value)
    if isinstance(value, dict):
        return {key: whole_numbers(item) for key, item in value.items()}
    if isinstance(value, list):
        return [whole_numbers(item) for item in value]
    return value


def struct(values: Mapping[str, Any] | None) -> Struct:
    message = Struct()
    if values:
        message.update(dict(values))
    return message


def plain(message: Struct) -> dict[str, Any]:
    """A Struct as the JSON object it was built from, whole numbers restored."""
    return whole_numbers(MessageToDict(message))
