"""Keyset paging, one way for every listing: the limit, one row more than the
page, and an opaque cursor naming where the page ended.

Fetching limit + 1 rows tells whether another page exists without a count;
the cursor is the last row's sort key, so a page never shifts when rows are
added in front of it (an offset would repeat or skip them).
"""

from __future__ import annotations

import base64
import binascii
import json
import uuid
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import TypeVar

from services.common.errors import FieldError

DEFAULT_LIMIT = 50
MAX_LIMIT = 200

Row = TypeVar("Row")
Key = TypeVar("Key")


def page_limit(limit: int, *, default: int = DEFAULT_LIMIT, maximum: int = MAX_LIMIT, field: str = "limit") -> int:
    """0 (proto3's unset) means the default; out of range is refused, not clamped."""
    if limit == 0:
        return default
    if not 1 <= limit <= maximum:
        raise FieldError(field, f"must be between 1 and {maximum}, got {limit}")
    return limit


def encode_cursor(*key: object) -> str:
    """The sort key of a page's last row as an opaque, URL-safe token."""
    parts = [part.isoformat() if isinstance(part, datetime) else str(part) for part in key]
    return base64.urlsafe_b64encode(json.dumps(parts).encode()).decode().rstrip("=")


def decode_cursor(cursor: str, parse: Callable[[list[str]], Key], *, field: str = "cursor") -> Key | None:
    """The key a cursor names, read by `parse`; None for the first page.

    Anything this module did not encode (or `parse` cannot read) is refused
    naming the field, never read as some other position.
    """
    if not cursor:
        return None
    try:
        parts = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        if not isinstance(parts, list) or not all(isinstance(part, str) for part in parts):
            raise ValueError("not a list of key parts")
        return parse(parts)
    except (binascii.Error, UnicodeDecodeError, ValueError, TypeError, IndexError):
        raise FieldError(field, "is not a cursor this service issued") from None


def one_page(rows: Sequence[Row], limit: int, key: Callable[[Row], tuple[object, ...]]) -> tuple[list[Row], str]:
    """Rows fetched as limit + 1: the page, and the cursor after it ('' on the last page)."""
    page = list(rows[:limit])
    return page, encode_cursor(*key(page[-1])) if len(rows) > limit else ""


def parse_cursor_instant(text: str) -> datetime:
    """A cursor's timestamp part; one without an offset was not written by encode_cursor."""
    moment = datetime.fromisoformat(text)
    if moment.utcoffset() is None:
        raise ValueError("a cursor instant carries an offset")
    try:
        # The driver shifts every instant it sends to UTC: a forged
        # 0001-01-01T00:00:00+14:00 lies before the calendar's first instant
        # there, and the shift would overflow as a 500, not refuse the cursor.
        moment.astimezone(UTC)
    except OverflowError:
        raise ValueError("a cursor instant lies past the calendar's ends") from None
    return moment


def instant_and_uuid(parts: list[str]) -> tuple[datetime, uuid.UUID]:
    """The key of listings sorted by (time, id)."""
    stamp, ident = parts
    return parse_cursor_instant(stamp), uuid.UUID(ident)
