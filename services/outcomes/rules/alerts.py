"""Which alerts should fire (DESIGN §10, §11), and how a stored firing set
moves to a new one. Pure: an evaluation reads the signals it is given and
answers the set of alerts that should be firing now; the job gathers the
signals and stores the transitions."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

JUDGED_SUCCESS_DROP = "judged_success_drop"
AGENT_SILENT = "agent_silent"
INGEST_LAG = "ingest_lag"
STREAM_FULL = "stream_full"
ROLLOUT_HALTED = "rollout_halted"
RULES = (JUDGED_SUCCESS_DROP, AGENT_SILENT, INGEST_LAG, STREAM_FULL, ROLLOUT_HALTED)

DEFAULT_WINDOW = 100
DEFAULT_MIN_DROP = 0.15
# The posterior probability that the latest window is worse than the one before.
DROP_CONFIDENCE = 0.95
# Fewer judged decisions than this in either window say too little to compare.
MIN_JUDGED_PER_WINDOW = 20
# Points of the grid the probability of a drop is integrated over: the
# posteriors of 100 decisions are ~0.05 wide, so 1/1024 steps resolve them.
GRID_POINTS = 1024

Transition = Literal["firing", "resolved"]


@dataclass(frozen=True)
class AlertKey:
    """One firing row at most per key."""

    rule: str
    agent_id: str = ""
    decision_type: str = ""
    subject: str = ""  # a stream, consumer or rollout the alert is about


@dataclass(frozen=True)
class FiringAlert:
    key: AlertKey
    summary: str
    value: float
    threshold: float


@dataclass(frozen=True)
class JudgedWindow:
    agent_id: str
    decision_type: str
    latest_judged: int
    latest_successes: int
    previous_judged: int
    previous_successes: int


@dataclass(frozen=True)
class StreamLoad:
    """A stream or a consumer, and how close it is to its limit (0..1)."""

    name: str
    fullness: float
    # The limit it is nearest, in words ("812 of 1,000 messages on telemetry.task").
    measure: str = ""


@dataclass(frozen=True)
class Signals:
    windows: Sequence[JudgedWindow] = ()
    # Per agent that has ever run, when it last ran.
    last_runs: Mapping[str, datetime] | None = None
    ingest_lag_s: float | None = None
    # The consumer that far behind (`STREAM/consumer`).
    lagging: str = ""
    streams: Sequence[StreamLoad] = ()
    halted_rollouts: Sequence[tuple[str, str]] = ()  # (rollout_id, agent_id)


@dataclass(frozen=True)
class Thresholds:
    min_drop: float = DEFAULT_MIN_DROP
    confidence: float = DROP_CONFIDENCE
    silent_after: timedelta = timedelta(hours=24)
    max_ingest_lag_s: float = 300.0
    max_stream_fullness: float = 0.8


def _beta_log_density(x: float, a: float, b: float, log_norm: float) -> float:
    return (a - 1) * math.log(x) + (b - 1) * math.log1p(-x) - log_norm


def _log_beta(a: float, b: float) -> float:
    return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)


def probability_of_drop(
    latest_successes: int, latest_judged: int, previous_successes: int, previous_judged: int
) -> float:
    """P(p_latest < p_previous) under independent Beta(1 + s, 1 + f) posteriors.

    Integrated on a midpoint grid: ∫ f_prev(y) · F_latest(y) dy, with the
    latest window's distribution function accumulated along the same grid.
    """
    a_l, b_l = 1 + latest_successes, 1 + latest_judged - latest_successes
    a_p, b_p = 1 + previous_successes, 1 + previous_judged - previous_successes
    norm_l, norm_p = _log_beta(a_l, b_l), _log_beta(a_p, b_p)
    step = 1.0 / GRID_POINTS
    below = 0.0  # F_latest up to the current point, accumulated by halves
    total = 0.0
    previous_density = 0.0
    for i in range(GRID_POINTS):
        x = (i + 0.5) * step
        density_l = math.exp(_beta_log_density(x, a_l, b_l, norm_l)) * step
        below += (previous_density + density_l) / 2
        previous_density = density_l
        total += math.exp(_beta_log_density(x, a_p, b_p, norm_p)) * step * below
    return min(1.0, max(0.0, total))


def judged_success_drops(windows: Iterable[JudgedWindow], thresholds: Thresholds) -> list[FiringAlert]:
    """Each agent × decision type whose latest window's success rate is at
    least min_drop below the window before, with the drop itself probable."""
    firing = []
    for w in windows:
        if min(w.latest_judged, w.previous_judged) < MIN_JUDGED_PER_WINDOW:
            continue
        latest = w.latest_successes / w.latest_judged
        previous = w.previous_successes / w.previous_judged
        drop = previous - latest
        if drop < thresholds.min_drop:
            continue
        p = probability_of_drop(w.latest_successes, w.latest_judged, w.previous_successes, w.previous_judged)
        if p < thresholds.confidence:
            continue
        firing.append(
            FiringAlert(
                key=AlertKey(JUDGED_SUCCESS_DROP, agent_id=w.agent_id, decision_type=w.decision_type),
                summary=(
                    f"judged success of {w.agent_id} × {w.decision_type} fell from {previous:.0%} "
                    f"to {latest:.0%} over its latest {w.latest_judged} judged decisions (P(drop) {p:.3f})"
                ),
                value=drop,
                threshold=thresholds.min_drop,
            )
        )
    return firing


def silent_agents(last_runs: Mapping[str, datetime], *, now: datetime, thresholds: Thresholds) -> list[FiringAlert]:
    firing = []
    for agent_id, last in sorted(last_runs.items()):
        quiet = now - last
        if quiet >= thresholds.silent_after:
            firing.append(
                FiringAlert(
                    key=AlertKey(AGENT_SILENT, agent_id=agent_id),
                    summary=f"{agent_id} has not run for {_span(quiet)} (last run {last.isoformat()})",
                    value=quiet.total_seconds(),
                    threshold=thresholds.silent_after.total_seconds(),
                )
            )
    return firing


def evaluate(signals: Signals, *, now: datetime, thresholds: Thresholds) -> dict[AlertKey, FiringAlert]:
    """The alerts that should be firing, given these signals."""
    firing = judged_success_drops(signals.windows, thresholds)
    if signals.last_runs:
        firing += silent_agents(signals.last_runs, now=now, thresholds=thresholds)
    if signals.ingest_lag_s is not None and signals.ingest_lag_s >= thresholds.max_ingest_lag_s:
        firing.append(
            FiringAlert(
                key=AlertKey(INGEST_LAG),
                summary=(
                    f"consumer {signals.lagging} is {signals.ingest_lag_s:.0f} s behind: the oldest message"
                    " not yet delivered to it was stored that long ago"
                    if signals.lagging
                    else f"telemetry ingest is {signals.ingest_lag_s:.0f} s behind"
                ),
                value=signals.ingest_lag_s,
                threshold=thresholds.max_ingest_lag_s,
            )
        )
    for stream in signals.streams:
        if stream.fullness >= thresholds.max_stream_fullness:
            firing.append(
                FiringAlert(
                    key=AlertKey(STREAM_FULL, subject=stream.name),
                    summary=f"{stream.name} is {stream.fullness:.0%} of its limit"
                    + (f" ({stream.measure})" if stream.measure else ""),
                    value=stream.fullness,
                    threshold=thresholds.max_stream_fullness,
                )
            )
    for rollout_id, agent_id in signals.halted_rollouts:
        firing.append(
            FiringAlert(
                key=AlertKey(ROLLOUT_HALTED, agent_id=agent_id, subject=rollout_id),
                summary=f"rollout {rollout_id} of {agent_id} is halted",
                value=1.0,
                threshold=1.0,
            )
        )
    return {alert.key: alert for alert in firing}


@dataclass(frozen=True)
class AlertTransition:
    transition: Transition
    key: AlertKey
    alert: FiringAlert | None  # the new reading when firing; None when resolved


def transitions(
    stored_firing: Iterable[AlertKey],
    should_fire: Mapping[AlertKey, FiringAlert],
    *,
    known_rules: Iterable[str] = RULES,
) -> list[AlertTransition]:
    """What moves a stored firing set to the set that should fire: a key that
    newly fires, and a firing key that no longer should, resolves. A key
    firing in both stays as it is (one firing row per key, one webhook).

    Only rules in `known_rules` resolve: a rule whose signal could not be read
    this time says nothing about its firing alerts, which stay as they are."""
    stored = set(stored_firing)
    known = set(known_rules)
    moves = [AlertTransition("firing", key, alert) for key, alert in should_fire.items() if key not in stored]
    moves += [AlertTransition("resolved", key, None) for key in stored if key not in should_fire and key.rule in known]
    return sorted(moves, key=lambda m: (m.transition, m.key.rule, m.key.agent_id, m.key.decision_type, m.key.subject))


def slack_text(transition: Transition, rule: str, summary: str) -> str:
    """One line a Slack-compatible incoming webhook shows as is."""
    mark = ":rotating_light:" if transition == "firing" else ":white_check_mark:"
    return f"{mark} [{transition}] {rule}: {summary}".replace("\n", " ")


def _span(delta: timedelta) -> str:
    hours = delta.total_seconds() / 3600
    return f"{hours:.1f} h" if hours < 48 else f"{hours / 24:.1f} days"
