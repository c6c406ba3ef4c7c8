"""Outcomes over time: the window asked for is checked, its buckets sit on
whole multiples of their width and cover now, and sparse counts fold into
every bucket of every type with pending, unknown and failure kept apart."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from services.common.errors import FieldError
from services.decisions import rules
from services.decisions.rules import InvalidDecision, OutcomeBucket

NOW = datetime(2026, 11, 20, 14, 37, 12, tzinfo=UTC)


def asked(
    days: int | None = None, bucket_seconds: int | None = None, decision_type: str = ""
) -> rules.OutcomeSeriesAsked:
    return rules.outcome_series_asked(days=days, bucket_seconds=bucket_seconds, decision_type=decision_type)


def test_unset_asks_for_a_week_of_every_type():
    assert rules.outcome_window(NOW, asked()).days == 7
    assert asked() == rules.OutcomeSeriesAsked(days=None, bucket_seconds=None, decision_type=None)
    assert asked(decision_type="stall_response").decision_type == "stall_response"


@pytest.mark.parametrize(
    ("days", "bucket_seconds", "field"),
    [
        (0, None, "days"),
        (31, None, "days"),
        (7, 1800, "bucket_seconds"),
        (7, 7200, "bucket_seconds"),
        (31, 3600, "days"),
    ],
)
def test_a_window_out_of_range_names_the_field(days, bucket_seconds, field):
    with pytest.raises(FieldError) as refused:
        rules.outcome_window(NOW, asked(days, bucket_seconds))
    assert refused.value.field == field


def test_a_range_of_its_own_is_bucketed_by_its_length_and_a_month_in_hours_at_most():
    start = NOW - timedelta(days=10)
    window = rules.outcome_window(
        NOW,
        rules.outcome_series_asked(
            days=None, bucket_seconds=None, decision_type="", start=start, end=start + timedelta(days=2)
        ),
    )
    assert (window.days, window.bucket_seconds, window.buckets) == (None, 3600, 49)
    assert window.start <= start < window.start + timedelta(hours=1)
    with pytest.raises(FieldError) as refused:
        rules.outcome_window(
            NOW,
            rules.outcome_series_asked(
                days=None, bucket_seconds=3600, decision_type="", start=NOW - timedelta(days=30, hours=1)
            ),
        )
    assert refused.value.field == "end"


def test_a_month_in_hours_is_the_finest_allowed():
    assert asked(30, 3600).bucket_seconds == 3600
    assert rules.outcome_window(NOW, asked(30, 3600)).buckets == 721


def test_a_bad_decision_type_is_refused():
    with pytest.raises(InvalidDecision) as refused:
        asked(decision_type="Stall Response")
    assert refused.value.field == "decision_type"


@pytest.mark.parametrize(
    ("days", "width", "buckets"), [(1, 3600, 25), (7, 6 * 3600, 29), (14, 12 * 3600, 29), (30, 86400, 31)]
)
def test_the_default_width_is_the_narrowest_within_48_buckets(days, width, buckets):
    window = rules.outcome_window(NOW, asked(days))
    assert (window.bucket_seconds, window.buckets) == (width, buckets)
    assert window.start.timestamp() % width == 0 and window.end.timestamp() % width == 0
    # The first bucket holds the window's far end, the last one holds now.
    assert window.start <= NOW - timedelta(days=days) < window.start + timedelta(seconds=width)
    assert window.end - timedelta(seconds=width) <= NOW < window.end


def test_an_asked_width_is_kept():
    window = rules.outcome_window(NOW, asked(2, 3 * 3600))
    assert window.bucket_seconds == 3 * 3600 and window.buckets == 17


def test_counts_fold_into_every_bucket_of_each_type_in_order():
    window = rules.outcome_window(NOW, asked(1))
    series = rules.outcome_series(
        window,
        [
            ("stall_response", 3, "success", 4),
            ("stall_response", 3, "failure", 1),
            ("stall_response", 3, "unknown", 2),
            ("stall_response", 3, None, 5),
            ("stall_response", 24, "success", 1),
            ("assignment_failure", 0, None, 7),
            # Outside the window: dropped, not folded into an end bucket.
            ("stall_response", -1, "success", 9),
            ("stall_response", 25, "failure", 9),
        ],
    )
    assert [s.decision_type for s in series] == ["assignment_failure", "stall_response"]
    stall = series[1].buckets
    assert len(stall) == window.buckets
    assert [b.start for b in stall] == [window.start + timedelta(hours=i) for i in range(window.buckets)]
    assert stall[3] == OutcomeBucket(stall[3].start, successes=4, failures=1, unknown=2, pending=5)
    assert stall[24].successes == 1
    assert sum(b.successes + b.failures + b.unknown + b.pending for b in stall) == 13
    assert series[0].buckets[0].pending == 7 and series[0].buckets[0].failures == 0


def test_a_type_with_rows_only_outside_the_window_is_absent():
    window = rules.outcome_window(NOW, asked(1))
    assert rules.outcome_series(window, [("stall_response", 99, "success", 1)]) == []
