"""The rollout guard's rule: p_harm against an exact value, the verdicts at
their edges, and the sequential rule's error rates under peeking by simulation."""

from __future__ import annotations

import math
import random

import pytest

from services.outcomes.rules.credit import Credit, Resolution, TurnCredit
from services.outcomes.rules.rollout_guard import (
    ArmCounts,
    ArmCredit,
    GuardSettings,
    Verdict,
    decide,
    judge,
    mixture_bound,
    p_harm,
    posterior,
    with_credit,
)
from services.outcomes.rules.routing import Evidence, credit_evidence

STEPS = (5, 25, 50, 100)
DEFAULTS = GuardSettings()


def exact_p_worse(control: ArmCounts, candidate: ArmCounts) -> float:
    """P(candidate < control) for integer Beta posteriors, by the closed-form sum."""
    a_t, b_t = 1 + candidate.successes, 1 + candidate.failures
    a_c, b_c = 1 + control.successes, 1 + control.failures

    def log_beta(a: float, b: float) -> float:
        return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)

    p_control_better = sum(
        math.exp(log_beta(a_t + i, b_t + b_c) - math.log(b_c + i) - log_beta(1 + i, b_c) - log_beta(a_t, b_t))
        for i in range(a_c)
    )
    return p_control_better


@pytest.mark.parametrize(
    ("control", "candidate"),
    [((5, 3), (2, 6)), ((70, 30), (60, 40)), ((300, 100), (12, 9)), ((0, 0), (0, 0)), ((40, 60), (45, 55))],
)
def test_p_harm_at_no_margin_matches_the_closed_form(control, candidate):
    c, t = ArmCounts(*control), ArmCounts(*candidate)
    assert p_harm(c, t, 0.0) == pytest.approx(exact_p_worse(c, t), abs=2e-3)


def test_p_harm_falls_as_the_margin_grows_and_flips_with_the_arms():
    c, t = ArmCounts(700, 300), ArmCounts(60, 40)
    margins = [p_harm(c, t, d) for d in (0.0, 0.05, 0.1, 0.2)]
    assert margins == sorted(margins, reverse=True) and margins[0] > 0.9 > margins[-1]
    assert p_harm(t, c, 0.0) == pytest.approx(1 - p_harm(c, t, 0.0), abs=2e-3)


def test_the_posterior_interval_holds_the_mean_and_narrows_with_evidence():
    small, large = posterior(ArmCounts(7, 3)), posterior(ArmCounts(700, 300))
    assert small.low < small.mean < small.high and large.low < large.mean < large.high
    assert large.high - large.low < small.high - small.low
    # Beta(701, 301): mean 0.6996, sd 0.0145, so about ±0.028 either side.
    assert large.low == pytest.approx(0.6996 - 1.96 * 0.0145, abs=3e-3)
    assert large.high == pytest.approx(0.6996 + 1.96 * 0.0145, abs=3e-3)


def test_the_mixture_bound_widens_with_fewer_decisions_and_holds_the_difference():
    few = mixture_bound(ArmCounts(70, 30), ArmCounts(7, 3), spread=0.05, alpha=0.05)
    many = mixture_bound(ArmCounts(7000, 3000), ArmCounts(700, 300), spread=0.05, alpha=0.05)
    assert few[0] < many[0] < 0 < many[1] < few[1]


def test_a_clearly_worse_candidate_is_halted_with_figures():
    judgement = judge(
        control=ArmCounts(1400, 600), candidate=ArmCounts(150, 150), settings=DEFAULTS, steps=STEPS, step=0
    )
    assert judgement.verdict is Verdict.HALT and judgement.p_harm > 0.95
    assert judgement.reason.startswith("halted") and "50.0 %" in judgement.reason and "70.0 %" in judgement.reason


def test_a_candidate_as_good_advances_once_it_has_enough_and_completes_at_the_last_step():
    control, candidate = ArmCounts(7000, 3000, unknown=40, pending=90), ArmCounts(2100, 900, unknown=3)
    advance = judge(control=control, candidate=candidate, settings=DEFAULTS, steps=STEPS, step=1)
    assert advance.verdict is Verdict.ADVANCE and advance.p_harm < 0.05
    assert (advance.control.unknown, advance.control.pending, advance.candidate.judged) == (40, 90, 3000)
    last = judge(control=control, candidate=candidate, settings=DEFAULTS, steps=STEPS, step=3)
    assert last.verdict is Verdict.COMPLETE and last.reason.startswith("completed")


def test_each_step_needs_more_judged_candidate_decisions_than_the_one_before():
    control, candidate = ArmCounts(7000, 3000), ArmCounts(98, 42)
    settings = GuardSettings(max_drop=0.2, confidence=0.9, min_judged=50)
    assert (
        judge(control=control, candidate=candidate, settings=settings, steps=STEPS, step=1).verdict is Verdict.ADVANCE
    )
    waiting = judge(control=control, candidate=candidate, settings=settings, steps=STEPS, step=2)
    assert waiting.verdict is Verdict.OBSERVE
    assert waiting.reason.startswith("waiting for 50 judged control and 150 judged candidate decisions")


def test_a_paused_rollout_is_halted_on_harm_but_never_advanced():
    paused = judge(
        control=ArmCounts(7000, 3000),
        candidate=ArmCounts(2100, 900),
        settings=DEFAULTS,
        steps=STEPS,
        step=1,
        running=False,
    )
    assert paused.verdict is Verdict.OBSERVE and paused.reason.startswith("paused")
    bad = judge(
        control=ArmCounts(1400, 600),
        candidate=ArmCounts(150, 150),
        settings=DEFAULTS,
        steps=STEPS,
        step=0,
        running=False,
    )
    assert bad.verdict is Verdict.HALT


def test_with_nothing_judged_the_guard_observes():
    judgement = judge(
        control=ArmCounts(pending=20), candidate=ArmCounts(pending=2), settings=DEFAULTS, steps=STEPS, step=0
    )
    assert judgement.verdict is Verdict.OBSERVE and judgement.p_harm < 0.5


def _peeking_run(rng: random.Random, *, control_rate: float, candidate_rate: float, looks: int) -> Verdict:
    """One rollout held at one step, judged after every batch of 20 control and 10 candidate decisions."""
    control, candidate = [0, 0], [0, 0]
    for _ in range(looks):
        for arm, rate, n in ((control, control_rate, 20), (candidate, candidate_rate, 10)):
            wins = sum(rng.random() < rate for _ in range(n))
            arm[0] += wins
            arm[1] += n - wins
        verdict = judge(
            control=ArmCounts(*control), candidate=ArmCounts(*candidate), settings=DEFAULTS, steps=(100,), step=0
        ).verdict
        if verdict is not Verdict.OBSERVE:
            return verdict
    return Verdict.OBSERVE


def test_peeking_after_every_batch_keeps_false_halts_of_an_identical_candidate_rare():
    rng = random.Random(20261202)
    halts = sum(_peeking_run(rng, control_rate=0.7, candidate_rate=0.7, looks=30) is Verdict.HALT for _ in range(200))
    # The always-valid bound's level is 5 %; 200 runs put 10 halts at the edge.
    assert halts <= 10


def test_peeking_halts_a_candidate_fifteen_points_worse_and_does_not_advance_it():
    rng = random.Random(7)
    verdicts = [_peeking_run(rng, control_rate=0.7, candidate_rate=0.55, looks=40) for _ in range(100)]
    assert verdicts.count(Verdict.HALT) >= 90
    assert verdicts.count(Verdict.COMPLETE) <= 2


# ─── Episode credit beside judged decisions ──────────────────────────────────


def test_credit_adds_its_confidence_weighted_trials_to_the_arms_decisions():
    decided = ArmCounts(successes=10, failures=4, unknown=2, pending=5)
    combined = with_credit(decided, ArmCredit(Evidence(successes=2.55, failures=1.4), pending=3))
    assert combined == ArmCounts(successes=12.55, failures=5.4, unknown=2, pending=8)
    assert combined.judged == pytest.approx(17.95)
    assert with_credit(decided, ArmCredit()) == decided


def test_credit_weighs_a_turn_as_routing_weighs_it():
    turns = [
        TurnCredit("c", "t1", "m", None, Credit.SUCCESS, 0.85, 0, Resolution.RESOLVED),
        TurnCredit("c", "t2", "m", None, Credit.FAILURE, 0.7 * 0.85, 1, Resolution.RESOLVED),
        TurnCredit("c", "t3", "m", None, Credit.FAILURE, 1.0, 2, Resolution.ABANDONED),
    ]
    evidence = [credit_evidence(t) for t in turns]
    tally = Evidence(sum(e.successes for e in evidence), sum(e.failures for e in evidence))
    combined = with_credit(ArmCounts(), ArmCredit(tally))
    assert (combined.successes, combined.failures) == pytest.approx((0.85, 0.595 + 1.0))


def _monte_carlo_p_harm(control: ArmCounts, candidate: ArmCounts, margin: float, draws: int, seed: int) -> float:
    """P(candidate < control − margin) by sampling both Beta posteriors: a
    method independent of the grid, valid for real-valued counts."""
    rng = random.Random(seed)
    a_c, b_c = 1 + control.successes, 1 + control.failures
    a_t, b_t = 1 + candidate.successes, 1 + candidate.failures
    return sum(rng.betavariate(a_t, b_t) < rng.betavariate(a_c, b_c) - margin for _ in range(draws)) / draws


@pytest.mark.parametrize(
    ("control", "candidate", "margin"),
    [
        ((18.85, 2.6), (3.7, 36.5), 0.05),
        ((40.35, 10.2), (30.6, 12.45), 0.05),
        ((0.85, 0.0), (0.0, 0.595), 0.0),
        ((250.4, 80.15), (60.7, 30.3), 0.1),
    ],
)
def test_p_harm_at_fractional_counts_matches_sampling_the_posteriors(control, candidate, margin):
    c, t = ArmCounts(*control), ArmCounts(*candidate)
    # 200,000 draws put the estimate within ±0.003 (three standard errors).
    assert p_harm(c, t, margin) == pytest.approx(_monte_carlo_p_harm(c, t, margin, 200_000, 11), abs=4e-3)


def test_a_fractional_count_sits_between_the_whole_counts_either_side():
    control = ArmCounts(70, 30)
    harms = [p_harm(control, ArmCounts(60, f), 0.05) for f in (40, 40.5, 41)]
    assert harms[0] < harms[1] < harms[2]
    lows = [mixture_bound(control, ArmCounts(60, f), spread=0.05, alpha=0.05)[0] for f in (40, 40.5, 41)]
    assert lows[0] > lows[1] > lows[2]
    evidence = posterior(ArmCounts(12.55, 5.4))
    assert evidence.judged == pytest.approx(17.95) and evidence.low < evidence.mean < evidence.high


def test_the_rule_judges_fractional_arms_and_reports_their_counts():
    halted = judge(control=ArmCounts(38.4, 2), candidate=ArmCounts(4.7, 36.5), settings=DEFAULTS, steps=STEPS, step=0)
    assert halted.verdict is Verdict.HALT and "41.2 judged" in halted.reason and "40.4 judged" in halted.reason
    waiting = judge(control=ArmCounts(30, 10), candidate=ArmCounts(9, 3), settings=DEFAULTS, steps=STEPS, step=0)
    assert waiting.verdict is Verdict.OBSERVE and "12 judged" in waiting.reason
    # Enough judged candidate evidence is counted in fractional trials too.
    settings = GuardSettings(max_drop=0.3, confidence=0.9, min_judged=20)
    good = ArmCounts(24.0, 0.5)
    assert decide(control=good, candidate=ArmCounts(19.4, 0.5), settings=settings, steps=(50, 100), step=0) is (
        Verdict.OBSERVE
    )
    assert decide(control=good, candidate=ArmCounts(19.6, 0.5), settings=settings, steps=(50, 100), step=0) is (
        Verdict.ADVANCE
    )


def _peeking_credit_run(rng: random.Random, *, control_rate: float, candidate_rate: float, looks: int) -> Verdict:
    """As _peeking_run, but each arm's evidence is credited turns: a success
    or failure weighted by a confidence drawn from the credit model's range."""
    control, candidate = [0.0, 0.0], [0.0, 0.0]
    for _ in range(looks):
        for arm, rate, n in ((control, control_rate, 20), (candidate, candidate_rate, 10)):
            for _ in range(n):
                weight = rng.choice((0.85, 0.7 * 0.85, 0.5, 1.0))
                arm[0 if rng.random() < rate else 1] += weight
        verdict = judge(
            control=ArmCounts(*control), candidate=ArmCounts(*candidate), settings=DEFAULTS, steps=(100,), step=0
        ).verdict
        if verdict is not Verdict.OBSERVE:
            return verdict
    return Verdict.OBSERVE


def test_peeking_at_fractional_credit_keeps_false_halts_rare_and_halts_a_worse_candidate():
    rng = random.Random(30)
    same = [_peeking_credit_run(rng, control_rate=0.7, candidate_rate=0.7, looks=30) for _ in range(100)]
    assert same.count(Verdict.HALT) <= 5
    worse = [_peeking_credit_run(rng, control_rate=0.7, candidate_rate=0.5, looks=40) for _ in range(60)]
    assert worse.count(Verdict.HALT) >= 54
