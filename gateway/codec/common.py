"""What every context's codec shares: timestamps as text, and the page a listing asks for."""

from __future__ import annotations

from google.protobuf.timestamp_pb2 import Timestamp

from gateway.contracts.paging import PageRequest
from outrider.v1 import common_pb2
from outrider.wire import timestamp_datetime


def timestamp_text(stamp: Timestamp, present: bool = True) -> str | None:
    """RFC 3339 with an explicit UTC offset, or None for an unset timestamp."""
    value = timestamp_datetime(stamp, present)
    return value.isoformat() if value else None


def page_request(page: PageRequest) -> common_pb2.PageRequest:
    return common_pb2.PageRequest(cursor=page.cursor, limit=page.limit)
