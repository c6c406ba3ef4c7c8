"""The spans of time the fleet's figures are read over, and the buckets a
chart draws them in.

An operator asks for the last N days or for a range of their own; both end
up as one [start, end) span, so every read below it has a single shape.
Buckets start on whole multiples of their width since the epoch: two reads
an hour apart share their edges, and a chart does not shift under the
operator's eyes, at the cost of the span's two ends falling inside the
first and last buckets.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from services.common.errors import FieldError

# Every figure read over the last N days takes 1 to 30 (7 unset): a month is
# as far back as the charts and counts stay cheap, and a week is what an
# operator compares with first.
MIN_DAYS = 1
MAX_DAYS = 30
DEFAULT_DAYS = 7
# A range narrower than this holds too few runs to read as a figure, and
# hour buckets are the narrowest any chart uses.
MIN_RANGE = timedelta(hours=1)


class InvalidWindow(FieldError):
    """A span no read is made over: days out of bounds, or a range that is not one."""

    default_code = "INVALID_WINDOW"


@dataclass(frozen=True, slots=True)
class Span:
    start: datetime
    end: datetime
    # The days asked for; None when the span is a range of its own.
    days: int | None

    @property
    def read_until(self) -> datetime | None:
        """Where reads of the span stop: a range at its end; the last N days
        nowhere, so a run stamped a little ahead by its engine's clock still
        counts."""
        return None if self.days is not None else self.end


@dataclass(frozen=True, slots=True)
class Buckets:
    start: datetime
    end: datetime
    bucket_seconds: int
    count: int


def asked_span(
    now: datetime,
    *,
    days: int | None,
    start: datetime | None,
    end: datetime | None,
    default_days: int,
    min_days: int,
    max_days: int,
) -> Span:
    """The last `days` days to `now`, or the range [start, end) (end unset
    means now); neither means the last `default_days`.

    Refused rather than clamped, so a typo never shows a different span than
    asked: days and a range together, an end without a start, an end not
    after its start, a range under an hour or over `max_days`.
    """
    if start is None and end is None:
        asked = default_days if days is None else days
        if not min_days <= asked <= max_days:
            raise InvalidWindow("days", f"must be between {min_days} and {max_days}, got {asked}")
        return Span(start=now - timedelta(days=asked), end=now, days=asked)
    if days is not None:
        raise InvalidWindow("days", "give a number of days or a range, not both")
    if start is None:
        raise InvalidWindow("start", "is needed with an end: a range starts somewhere")
    until = now if end is None else end
    if until <= start:
        raise InvalidWindow("end", "must be later than the range's start")
    if until - start < MIN_RANGE:
        raise InvalidWindow("end", "must be at least an hour after the range's start")
    if until - start > timedelta(days=max_days):
        raise InvalidWindow("end", f"must be within {max_days} days of the range's start")
    return Span(start=start, end=until, days=None)


def bucket_width(span: Span, widths: Sequence[int], max_buckets: int) -> int:
    """The narrowest of `widths` (narrowest first) that draws the span in at
    most `max_buckets` buckets; the widest when none does."""
    seconds = (span.end - span.start).total_seconds()
    return next((width for width in widths if seconds / width <= max_buckets), widths[-1])


def buckets(span: Span, width: int) -> Buckets:
    """Epoch-aligned buckets of `width` seconds covering the span: the first
    holds its start, the last its end (an end on an edge opens no bucket of
    its own, as the span stops short of it)."""
    start_epoch = math.floor(span.start.timestamp()) // width * width
    end_epoch = max(math.ceil(span.end.timestamp() / width) * width, start_epoch + width)
    return Buckets(
        start=datetime.fromtimestamp(start_epoch, tz=UTC),
        end=datetime.fromtimestamp(end_epoch, tz=UTC),
        bucket_seconds=width,
        count=(end_epoch - start_epoch) // width,
    )
