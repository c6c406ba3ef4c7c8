"""The spans figures are read over, and their buckets: the last N days or a
range of one's own, each held to its bounds, and buckets that always cover
the span on epoch-aligned edges."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from services.common import windows

NOW = datetime(2026, 9, 29, 15, 42, 10, 250_000, tzinfo=UTC)
WIDTHS = (3600, 3 * 3600, 6 * 3600, 12 * 3600, 86400)


def asked(*, days=None, start=None, end=None, now=NOW) -> windows.Span:
    return windows.asked_span(now, days=days, start=start, end=end, default_days=7, min_days=1, max_days=30)


def test_neither_days_nor_a_range_is_the_default_days_to_now():
    assert asked() == windows.Span(start=NOW - timedelta(days=7), end=NOW, days=7)


def test_a_range_without_an_end_runs_to_now_and_keeps_no_days():
    start = NOW - timedelta(days=2)
    assert asked(start=start) == windows.Span(start=start, end=NOW, days=None)


@pytest.mark.parametrize(
    ("ask", "field"),
    [
        ({"days": 0}, "days"),
        ({"days": 31}, "days"),
        ({"days": 3, "start": NOW - timedelta(days=1)}, "days"),
        ({"end": NOW - timedelta(days=1)}, "start"),
        ({"start": NOW - timedelta(days=1), "end": NOW - timedelta(days=1)}, "end"),
        ({"start": NOW - timedelta(days=1), "end": NOW - timedelta(days=2)}, "end"),
        ({"start": NOW - timedelta(minutes=59)}, "end"),
        ({"start": NOW - timedelta(days=30, seconds=1)}, "end"),
    ],
)
def test_spans_no_read_is_made_over_are_refused_by_field(ask, field):
    with pytest.raises(windows.InvalidWindow) as caught:
        asked(**ask)
    assert caught.value.field == field
    assert caught.value.code == "INVALID_WINDOW"


def test_a_range_of_exactly_an_hour_and_of_exactly_thirty_days_are_read():
    assert asked(start=NOW - timedelta(hours=1)).end == NOW
    assert asked(start=NOW - timedelta(days=31), end=NOW - timedelta(days=1)).days is None


def test_only_a_range_bounds_its_reads():
    assert asked(days=7).read_until is None
    assert asked(start=NOW - timedelta(days=2), end=NOW - timedelta(days=1)).read_until == NOW - timedelta(days=1)


INSTANTS = st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(UTC))
LENGTHS = st.timedeltas(min_value=timedelta(hours=1), max_value=timedelta(days=30))


@given(INSTANTS, LENGTHS, st.sampled_from(WIDTHS))
def test_buckets_cover_the_span_on_aligned_edges_and_no_more(start, length, width):
    span = windows.Span(start=start, end=start + length, days=None)
    drawn = windows.buckets(span, width)
    step = timedelta(seconds=width)
    assert drawn.start.timestamp() % width == 0
    assert drawn.start <= span.start < drawn.start + step
    assert drawn.end - step < span.end <= drawn.end
    assert drawn.end - drawn.start == drawn.count * step


@given(INSTANTS, LENGTHS)
def test_the_width_is_the_narrowest_that_keeps_the_span_readable(start, length):
    span = windows.Span(start=start, end=start + length, days=None)
    width = windows.bucket_width(span, WIDTHS, 48)
    seconds = length.total_seconds()
    assert seconds / width <= 48 or width == WIDTHS[-1]
    assert all(seconds / narrower > 48 for narrower in WIDTHS if narrower < width)
