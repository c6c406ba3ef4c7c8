"""The run series' buckets: width from the window, edges on whole multiples,
every bucket present, counts outside the window ignored."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from services.telemetry import rules

NOW = datetime(2026, 9, 29, 15, 42, 10, tzinfo=UTC)


@pytest.mark.parametrize(
    ("days", "width", "buckets"),
    [
        (1, 3600, 25),
        (2, 3600, 49),
        (3, 3 * 3600, 25),
        (7, 6 * 3600, 29),
        (14, 12 * 3600, 29),
        (30, 86400, 31),
    ],
)
def test_the_narrowest_width_that_keeps_the_window_readable(days, width, buckets):
    window = rules.series_window(NOW, days)
    assert (window.bucket_seconds, window.buckets) == (width, buckets)
    assert window.end - window.start == timedelta(seconds=width * buckets)
    assert window.start <= NOW - timedelta(days=days) < window.start + timedelta(seconds=width)


def test_edges_fall_on_whole_multiples_so_two_reads_share_them():
    early, late = rules.series_window(NOW, 1), rules.series_window(NOW + timedelta(minutes=10), 1)
    assert early == late
    assert early.end == datetime(2026, 9, 29, 16, 0, tzinfo=UTC)
    assert int(early.start.timestamp()) % 3600 == 0


def test_dense_series_fills_every_bucket_and_drops_strays():
    window = rules.series_window(NOW, 1)
    series = rules.dense_series(
        window,
        [
            ("EXCEPTION_AGENT", 23, 5, 1),
            ("EXCEPTION_AGENT", 0, 2, 0),
            ("DISPATCH_AGENT", 10, 1, 1),
            ("EXCEPTION_AGENT", 25, 9, 9),
            ("EXCEPTION_AGENT", -1, 9, 9),
        ],
    )
    assert list(series) == ["DISPATCH_AGENT", "EXCEPTION_AGENT"]
    points = series["EXCEPTION_AGENT"]
    assert len(points) == 25 and points[0].start == window.start
    assert [(p.runs, p.failures) for p in points if p.runs] == [(2, 0), (5, 1)]
    assert points[24].start == window.end - timedelta(hours=1)
    assert sum(p.runs for p in series["DISPATCH_AGENT"]) == 1


def test_no_runs_means_no_series():
    assert rules.dense_series(rules.series_window(NOW, 7), []) == {}
