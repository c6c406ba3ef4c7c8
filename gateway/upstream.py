"""How routes reach the contexts: one stub per context and class, made once."""

from __future__ import annotations

from typing import Any, TypeVar

from fastapi import Request
from google.protobuf.timestamp_pb2 import Timestamp

from outrider import wire

Stub = TypeVar("Stub")


def stub(request: Request, context: str, stub_class: type[Stub]) -> Stub:
    cache: dict[Any, Any] = request.app.state.stubs
    key = (context, stub_class)
    if key not in cache:
        cache[key] = request.app.state.clients.stub(context, stub_class)
    return cache[key]


def timestamp_text(ts: Timestamp, present: bool = True) -> str | None:
    """RFC 3339 with an explicit UTC offset, or None for an unset timestamp."""
    value = wire.timestamp_datetime(ts, present)
    return value.isoformat() if value else None
