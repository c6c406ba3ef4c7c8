import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bench.evidence.confounded import TRUTH, coverage, covered, simulate
from services.outcomes.rules.evaluation import MIN_MATCHED, DecisionWeights, snips


def _weights(rows: list[tuple[float, bool]], *, judged: int, successes: int) -> DecisionWeights:
    """Sums over matched decisions given as (propensity, success)."""
    ws = [(1 / p, r) for p, r in rows]
    return DecisionWeights(
        decisions=judged,
        judged=judged,
        unknown=0,
        pending=0,
        logged_successes=successes,
        with_propensity=judged,
        matched=len(rows),
        sum_w=sum(w for w, _ in ws),
        sum_w_r=sum(w for w, r in ws if r),
        sum_w2=sum(w * w for w, _ in ws),
        sum_w2_r=sum(w * w for w, r in ws if r),
    )


def test_a_confounded_router_biases_the_naive_rate_and_the_estimate_covers_the_truth():
    weights, naive = simulate(seed=3, decisions=2000)
    evaluation = snips(weights, model="fast")
    assert evaluation.estimate is not None
    assert naive > TRUTH["fast"] + 0.08, "the router's preference inflates the naive rate"
    assert covered(evaluation, TRUTH["fast"])
    assert not covered(evaluation, naive)


def test_the_interval_covers_the_truth_in_about_95_percent_of_seeds():
    # 200 seeds: a true 95 % coverage falls under 0.91 with probability below 1 %.
    hit, naive_outside = coverage(200, 1000)
    assert hit >= 0.91
    assert naive_outside >= 0.9


def test_fewer_than_30_matched_decisions_give_no_estimate_and_say_why():
    rows = [(0.5, True)] * (MIN_MATCHED - 1)
    evaluation = snips(_weights(rows, judged=100, successes=60), model="fast")
    assert evaluation.estimate is None
    assert evaluation.matched == MIN_MATCHED - 1
    assert f"at least {MIN_MATCHED}" in evaluation.reason
    assert evaluation.logged_mean == pytest.approx(0.6)


def test_thirty_matched_decisions_give_an_estimate_with_its_effective_sample_size():
    rows = [(0.5, True)] * 20 + [(0.25, False)] * 10
    evaluation = snips(_weights(rows, judged=80, successes=40), model="fast")
    assert evaluation.estimate is not None
    # Σw = 40 + 40, Σw·r = 40: half the weight succeeded.
    assert evaluation.estimate.mean == pytest.approx(0.5)
    assert evaluation.effective_sample_size == pytest.approx(80**2 / (20 * 4 + 10 * 16))
    assert 0 <= evaluation.estimate.low < 0.5 < evaluation.estimate.high <= 1


def test_no_judged_decisions_leave_the_logged_rate_absent():
    evaluation = snips(_weights([], judged=0, successes=0), model="fast")
    assert evaluation.estimate is None
    assert evaluation.logged_mean is None
    assert evaluation.effective_sample_size == 0


@given(
    st.integers(min_value=2, max_value=5),
    st.lists(st.booleans(), min_size=MIN_MATCHED, max_size=300),
)
def test_with_a_uniform_router_snips_is_the_plain_per_model_rate(models, outcomes):
    rows = [(1 / models, r) for r in outcomes]
    evaluation = snips(_weights(rows, judged=len(rows) * models, successes=sum(outcomes)), model="m")
    assert evaluation.estimate is not None
    assert math.isclose(evaluation.estimate.mean, sum(outcomes) / len(outcomes), rel_tol=1e-9, abs_tol=1e-12)
    assert evaluation.effective_sample_size == pytest.approx(len(outcomes))
