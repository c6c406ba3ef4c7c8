"""The alert rules: the drop statistic against simulation, each rule's
threshold, and the firing/resolved transitions."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest

from services.outcomes.rules import alerts
from services.outcomes.rules.alerts import AlertKey, JudgedWindow, Signals, StreamLoad, Thresholds

NOW = datetime(2026, 12, 1, 12, tzinfo=UTC)


@pytest.mark.parametrize(
    ("latest", "previous"),
    [((60, 100), (80, 100)), ((70, 100), (72, 100)), ((40, 50), (30, 50)), ((5, 20), (19, 20))],
)
def test_probability_of_drop_matches_sampling_from_the_posteriors(
    latest: tuple[int, int], previous: tuple[int, int]
) -> None:
    rng = random.Random(7)
    (s_l, n_l), (s_p, n_p) = latest, previous
    draws = 40_000
    below = sum(rng.betavariate(1 + s_l, 1 + n_l - s_l) < rng.betavariate(1 + s_p, 1 + n_p - s_p) for _ in range(draws))
    # Four Monte Carlo standard errors at worst (p = 0.5): 0.01.
    assert alerts.probability_of_drop(s_l, n_l, s_p, n_p) == pytest.approx(below / draws, abs=0.01)


def test_a_drop_fires_rarely_when_the_rate_did_not_change() -> None:
    """Under no change, the rule must fire in at most ~5 % of windows (it
    also needs a 15-point drop, so far fewer)."""
    rng = random.Random(11)
    fired = 0
    trials = 400
    for _ in range(trials):
        latest = sum(rng.random() < 0.7 for _ in range(100))
        previous = sum(rng.random() < 0.7 for _ in range(100))
        window = JudgedWindow("a", "t", 100, latest, 100, previous)
        fired += bool(alerts.judged_success_drops([window], Thresholds()))
    assert fired / trials <= 0.05


def test_a_real_drop_of_twenty_points_is_caught_most_of_the_time() -> None:
    rng = random.Random(12)
    fired = 0
    trials = 300
    for _ in range(trials):
        latest = sum(rng.random() < 0.55 for _ in range(100))
        previous = sum(rng.random() < 0.8 for _ in range(100))
        fired += bool(alerts.judged_success_drops([JudgedWindow("a", "t", 100, latest, 100, previous)], Thresholds()))
    assert fired / trials >= 0.6


def test_drop_needs_the_minimum_size_and_enough_decisions() -> None:
    small = JudgedWindow("a", "t", 100, 70, 100, 80)  # 10 points, below 15
    thin = JudgedWindow("a", "t", 10, 2, 10, 9)  # large but too few decisions
    big = JudgedWindow("a", "t", 100, 50, 100, 80)
    fired = alerts.judged_success_drops([small, thin, big], Thresholds())
    assert [a.key for a in fired] == [AlertKey(alerts.JUDGED_SUCCESS_DROP, agent_id="a", decision_type="t")]
    assert fired[0].value == pytest.approx(0.3)
    assert fired[0].threshold == pytest.approx(0.15)


def test_each_signal_fires_its_rule_at_its_threshold() -> None:
    thresholds = Thresholds(silent_after=timedelta(hours=2), max_ingest_lag_s=60, max_stream_fullness=0.8)
    signals = Signals(
        last_runs={"quiet": NOW - timedelta(hours=3), "busy": NOW - timedelta(minutes=5)},
        ingest_lag_s=61,
        streams=[StreamLoad("stream:TELEMETRY", 0.85), StreamLoad("consumer:facts", 0.5)],
        halted_rollouts=[("r1", "agent-x")],
    )
    firing = alerts.evaluate(signals, now=NOW, thresholds=thresholds)
    assert set(firing) == {
        AlertKey(alerts.AGENT_SILENT, agent_id="quiet"),
        AlertKey(alerts.INGEST_LAG),
        AlertKey(alerts.STREAM_FULL, subject="stream:TELEMETRY"),
        AlertKey(alerts.ROLLOUT_HALTED, agent_id="agent-x", subject="r1"),
    }
    calm = Signals(last_runs={"busy": NOW}, ingest_lag_s=59, streams=[StreamLoad("s", 0.79)])
    assert alerts.evaluate(calm, now=NOW, thresholds=thresholds) == {}


def test_transitions_fire_new_keys_resolve_gone_ones_and_leave_the_rest() -> None:
    kept = AlertKey(alerts.INGEST_LAG)
    gone = AlertKey(alerts.AGENT_SILENT, agent_id="a")
    new = AlertKey(alerts.ROLLOUT_HALTED, agent_id="b", subject="r")
    should = {
        kept: alerts.FiringAlert(kept, "lag", 1, 1),
        new: alerts.FiringAlert(new, "halted", 1, 1),
    }
    moves = alerts.transitions([kept, gone], should)
    assert [(m.transition, m.key) for m in moves] == [("firing", new), ("resolved", gone)]
    assert alerts.transitions([kept, new], should) == []


def test_slack_text_is_one_line_naming_the_transition() -> None:
    text = alerts.slack_text("resolved", alerts.INGEST_LAG, "ingest\nbehind")
    assert "\n" not in text
    assert "[resolved] ingest_lag" in text


def test_a_rule_whose_signal_was_not_read_resolves_nothing() -> None:
    silent = AlertKey(alerts.AGENT_SILENT, agent_id="a")
    assert alerts.transitions([silent], {}, known_rules=[alerts.ROLLOUT_HALTED]) == []
    assert [m.transition for m in alerts.transitions([silent], {}, known_rules=[alerts.AGENT_SILENT])] == ["resolved"]


def test_a_full_stream_and_a_lagging_consumer_say_which_and_by_what_measure() -> None:
    thresholds = Thresholds(max_ingest_lag_s=60, max_stream_fullness=0.8)
    signals = Signals(
        ingest_lag_s=412,
        lagging="TELEMETRY/telemetry-ingest",
        streams=[StreamLoad("TELEMETRY", 0.84, "840 of 1,000 messages on telemetry.task"), StreamLoad("FACTS", 0.0)],
    )
    firing = alerts.evaluate(signals, now=NOW, thresholds=thresholds)
    full = firing[AlertKey(alerts.STREAM_FULL, subject="TELEMETRY")]
    assert full.summary == "TELEMETRY is 84% of its limit (840 of 1,000 messages on telemetry.task)"
    assert (full.value, full.threshold) == (0.84, 0.8)
    lag = firing[AlertKey(alerts.INGEST_LAG)]
    assert lag.summary.startswith("consumer TELEMETRY/telemetry-ingest is 412 s behind")
    assert (lag.value, lag.threshold) == (412, 60)
    assert set(firing) == {AlertKey(alerts.STREAM_FULL, subject="TELEMETRY"), AlertKey(alerts.INGEST_LAG)}
