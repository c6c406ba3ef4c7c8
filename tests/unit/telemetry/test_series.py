"""The run series' buckets: width from the window, edges on whole multiples,
every bucket present, counts outside the window ignored; which buckets
have ended, and which a write makes stale."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from services.common.settings import DEFAULT_MODEL_PRICES
from services.telemetry import rules

NOW = datetime(2026, 9, 29, 15, 42, 10, tzinfo=UTC)


def last_days(days: int, now: datetime = NOW) -> rules.SeriesWindow:
    return rules.series_window(rules.AskedWindow(days=days).span(now))


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
    window = last_days(days)
    assert (window.bucket_seconds, window.buckets) == (width, buckets)
    assert window.end - window.start == timedelta(seconds=width * buckets)
    assert window.start <= NOW - timedelta(days=days) < window.start + timedelta(seconds=width)


def test_edges_fall_on_whole_multiples_so_two_reads_share_them():
    early, late = last_days(1), last_days(1, NOW + timedelta(minutes=10))
    assert early == late
    assert early.end == datetime(2026, 9, 29, 16, 0, tzinfo=UTC)
    assert int(early.start.timestamp()) % 3600 == 0


def runs(agent_id: str, bucket: int, count: int, failures: int, p50: float = 1.0, p95: float = 2.0) -> rules.BucketRuns:
    return rules.BucketRuns(agent_id, bucket, count, failures, p50, p95)


def test_dense_series_fills_every_bucket_and_drops_strays():
    window = last_days(1)
    series = rules.dense_series(
        window,
        [
            runs("EXCEPTION_AGENT", 23, 5, 1, p50=120.0, p95=480.0),
            runs("EXCEPTION_AGENT", 0, 2, 0),
            runs("DISPATCH_AGENT", 10, 1, 1),
            runs("EXCEPTION_AGENT", 25, 9, 9),
            runs("EXCEPTION_AGENT", -1, 9, 9),
        ],
    )
    assert list(series) == ["DISPATCH_AGENT", "EXCEPTION_AGENT"]
    points = series["EXCEPTION_AGENT"]
    assert len(points) == 25 and points[0].start == window.start
    assert [(p.runs, p.failures) for p in points if p.runs] == [(2, 0), (5, 1)]
    assert (points[23].p50_ms, points[23].p95_ms) == (120.0, 480.0)
    assert points[24].start == window.end - timedelta(hours=1)
    assert sum(p.runs for p in series["DISPATCH_AGENT"]) == 1


def test_a_bucket_without_runs_has_no_latency_rather_than_zero():
    window = last_days(1)
    points = rules.dense_series(window, [runs("A", 3, 1, 0, p50=40.0, p95=40.0)])["A"]
    assert [(p.p50_ms, p.p95_ms) for p in points[2:5]] == [(None, None), (40.0, 40.0), (None, None)]


PRICES = {"claude-sonnet-4-5*": rules.Price(3.0, 15.0), "claude-*": rules.Price(1.0, 5.0)}


def calls(agent_id: str, model: str, bucket: int, n: int, reported: int, tokens_in: int, tokens_out: int):
    return rules.BucketCalls(agent_id, model, bucket, n, reported, tokens_in, tokens_out)


def test_usage_is_folded_per_agent_and_per_model_and_priced_by_the_longest_glob():
    window = last_days(1)
    usage = rules.usage_series(
        window,
        [
            calls("A", "claude-sonnet-4-5-20250929", 4, 3, 3, 1_000_000, 100_000),
            calls("B", "claude-sonnet-4-5-20250929", 4, 1, 1, 500_000, 0),
            calls("A", "claude-haiku-4-5", 4, 2, 2, 200_000, 20_000),
            calls("A", "claude-haiku-4-5", 30, 9, 9, 9, 9),
        ],
        PRICES,
    )
    assert list(usage.by_agent) == ["A", "B"]
    assert list(usage.by_model) == ["claude-haiku-4-5", "claude-sonnet-4-5-20250929"]
    sonnet = usage.by_model["claude-sonnet-4-5-20250929"][4]
    assert (sonnet.calls, sonnet.input_tokens, sonnet.output_tokens) == (4, 1_500_000, 100_000)
    assert sonnet.estimated_cost == pytest.approx(1.5 * 3 + 0.1 * 15)
    haiku = usage.by_model["claude-haiku-4-5"][4]
    assert haiku.estimated_cost == pytest.approx(0.2 * 1 + 0.02 * 5), "claude-* prices haiku, not the sonnet glob"
    agent_a = usage.by_agent["A"][4]
    assert (agent_a.calls, agent_a.reported_calls) == (5, 5)
    assert agent_a.estimated_cost == pytest.approx(3 + 1.5 + 0.2 + 0.1)
    assert len(usage.by_agent["A"]) == window.buckets and usage.by_agent["A"][3].estimated_cost == 0.0
    assert sum(p.calls for p in usage.by_agent["A"]) == 5, "a bucket past the window is dropped"


def test_an_unpriced_model_has_no_cost_and_makes_its_agents_bucket_unknown_not_cheaper():
    window = last_days(1)
    usage = rules.usage_series(
        window,
        [calls("A", "gpt-9", 2, 4, 1, 700, 70), calls("A", "claude-haiku-4-5", 2, 1, 1, 1_000_000, 0)],
        PRICES,
    )
    assert all(p.estimated_cost is None for p in usage.by_model["gpt-9"])
    assert usage.by_model["claude-haiku-4-5"][2].estimated_cost == pytest.approx(1.0)
    agent = usage.by_agent["A"]
    assert agent[2].estimated_cost is None and agent[1].estimated_cost == 0.0
    assert (agent[2].calls, agent[2].reported_calls, agent[2].input_tokens) == (5, 2, 1_000_700)


def test_without_prices_nothing_has_a_cost():
    window = last_days(1)
    usage = rules.usage_series(window, [calls("A", "claude-haiku-4-5", 0, 1, 0, 0, 0)], {})
    assert usage.by_model["claude-haiku-4-5"][0].estimated_cost is None
    assert usage.by_agent["A"][0].estimated_cost is None and usage.by_agent["A"][1].estimated_cost == 0.0


def test_the_price_source_tells_the_built_in_estimate_from_the_operators_table():
    assert rules.price_source(DEFAULT_MODEL_PRICES, DEFAULT_MODEL_PRICES) == rules.PRICES_DEFAULT
    same_as_json = {"claude-sonnet-4-5*": {"input": 3, "output": 15}, "claude-haiku-4-5*": {"input": 1, "output": 5}}
    assert rules.price_source(same_as_json, DEFAULT_MODEL_PRICES) == rules.PRICES_DEFAULT
    assert rules.price_source({"claude-*": {"input": 2, "output": 8}}, DEFAULT_MODEL_PRICES) == rules.PRICES_CONFIGURED
    assert rules.price_source({}, DEFAULT_MODEL_PRICES) == rules.PRICES_NONE


def test_no_runs_means_no_series():
    assert rules.dense_series(last_days(7), []) == {}


def test_every_bucket_but_the_one_holding_now_has_ended():
    window = last_days(1)
    ended = rules.ended_buckets(window, NOW)
    assert len(ended) == window.buckets - 1
    assert ended[0] == window.start
    assert ended[-1] + timedelta(hours=1) <= NOW < ended[-1] + timedelta(hours=2)


def test_a_range_that_ended_has_every_bucket_ended_and_one_ahead_none():
    past = rules.series_window(rules.AskedWindow(start=NOW - timedelta(days=3), end=NOW - timedelta(days=2)).span(NOW))
    assert (past.days, past.bucket_seconds, past.buckets) == (None, 3600, 25)
    assert rules.ended_buckets(past, NOW) == [past.start + i * timedelta(hours=1) for i in range(25)]
    ahead = rules.series_window(rules.AskedWindow(start=NOW + timedelta(hours=2)).span(NOW + timedelta(hours=5)))
    assert rules.ended_buckets(ahead, NOW) == []


def test_a_range_picks_its_width_by_its_own_length():
    week = rules.AskedWindow(start=NOW - timedelta(days=20), end=NOW - timedelta(days=13)).span(NOW)
    assert rules.series_window(week).bucket_seconds == 6 * 3600


def test_neighbouring_buckets_read_as_one_span_and_far_ones_apart():
    hour = timedelta(hours=1)
    starts = [NOW + 5 * hour, NOW, NOW + hour, NOW + 2 * hour, NOW + hour]
    assert rules.contiguous_spans(starts, 3600) == [(NOW, NOW + 3 * hour), (NOW + 5 * hour, NOW + 6 * hour)]
    assert rules.contiguous_spans([], 3600) == []


INSTANTS = st.datetimes(min_value=datetime(1960, 1, 1), max_value=datetime(2200, 1, 1), timezones=st.just(UTC))


@given(st.lists(INSTANTS, max_size=20))
def test_a_write_makes_stale_exactly_the_buckets_of_every_width_that_hold_it(instants):
    widths, starts = rules.buckets_holding(instants)
    stale = list(zip(widths, starts, strict=True))

    def holds(width: int, start: datetime, instant: datetime) -> bool:
        return start <= instant < start + timedelta(seconds=width)

    assert len(set(stale)) == len(stale)
    assert all(start.timestamp() % width == 0 for width, start in stale)
    for width in rules.SERIES_BUCKET_SECONDS:
        for instant in instants:
            assert any(w == width and holds(w, start, instant) for w, start in stale)
    assert all(any(holds(width, start, instant) for instant in instants) for width, start in stale)


def test_a_write_stales_the_bucket_the_series_window_places_it_in():
    window = last_days(30)
    ended = rules.ended_buckets(window, NOW)
    widths, starts = rules.buckets_holding([ended[3] + timedelta(hours=7)])
    assert (window.bucket_seconds, ended[3]) in set(zip(widths, starts, strict=True))
