"""The rollout guard's rule: p_harm against an exact value, the verdicts at
their edges, and the sequential rule's error rates under peeking by simulation."""

from __future__ import annotations

import math
import random

import pytest

from services.outcomes.rules.rollout_guard import (
    ArmCounts,
    GuardSettings,
    Verdict,
    judge,
    mixture_bound,
    p_harm,
    posterior,
)

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
