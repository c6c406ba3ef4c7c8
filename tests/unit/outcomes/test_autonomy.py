import pytest
from hypothesis import given
from hypothesis import strategies as st

from services.outcomes.rules.autonomy import (
    DEMOTE_MARGIN,
    MIN_COMPARED,
    MIN_JUDGED,
    READY_AGREEMENT,
    Execution,
    ExecutionCount,
    Recommendation,
    weigh,
    wilson,
)


def _count(execution: str, successes: int, failures: int, *, unknown: int = 0, pending: int = 0, kind: str = "t"):
    return ExecutionCount(kind, execution, successes, failures, unknown, pending)


def test_the_wilson_interval_holds_the_rate_inside_0_1():
    interval = wilson(0, 10)
    assert interval is not None
    assert interval.mean == 0 and interval.low == 0 and 0 < interval.high < 0.35
    full = wilson(10, 10)
    assert full is not None and full.high == pytest.approx(1) and 0.65 < full.low < 1
    assert wilson(0, 0) is None
    # Known value: 50 of 100 → [0.404, 0.596].
    half = wilson(50, 100)
    assert half is not None
    assert half.low == pytest.approx(0.4038, abs=1e-3) and half.high == pytest.approx(0.5962, abs=1e-3)


def test_counts_sum_over_decision_types_and_an_unsaid_execution_is_left_out():
    evidence = weigh(
        [
            _count("confirmed", 3, 1, kind="a"),
            _count("confirmed", 2, 0, unknown=1, pending=2, kind="b"),
            _count("", 50, 50, kind="a"),
        ]
    )
    confirmed = evidence.by_execution[Execution.CONFIRMED]
    assert (confirmed.successes, confirmed.failures, confirmed.unknown, confirmed.pending) == (5, 1, 1, 2)
    assert set(evidence.by_execution) == set(Execution)
    assert evidence.by_execution[Execution.PROPOSED].judged == 0


def test_agreement_counts_every_confirmed_and_overridden_decision_judged_or_not():
    evidence = weigh([_count("confirmed", 6, 0, pending=2), _count("overridden", 1, 0, unknown=1)])
    assert evidence.agreement_rate == pytest.approx(8 / 10)
    assert weigh([_count("autonomous", 5, 5)]).agreement_rate is None


def test_under_the_minimum_there_is_not_enough_evidence():
    evidence = weigh([_count("confirmed", 90, 0), _count("overridden", 5, 4)])
    assert evidence.recommendation is Recommendation.NOT_ENOUGH_EVIDENCE
    assert str(MIN_JUDGED) in evidence.reason


def test_high_agreement_and_confirmed_no_worse_than_overridden_is_ready():
    evidence = weigh([_count("confirmed", 170, 10), _count("overridden", 10, 5)])
    assert evidence.recommendation is Recommendation.READY
    assert "%" in evidence.reason


def test_low_agreement_keeps_autonomy_off():
    evidence = weigh([_count("confirmed", 70, 10), _count("overridden", 30, 10)])
    assert evidence.recommendation is Recommendation.KEEP_OFF
    assert "proposal" in evidence.reason


def test_confirmed_worse_than_overridden_at_the_lower_bound_keeps_autonomy_off():
    evidence = weigh([_count("confirmed", 100, 80), _count("overridden", 20, 0)])
    assert evidence.agreement_rate == pytest.approx(0.9)
    assert evidence.recommendation is Recommendation.KEEP_OFF
    assert "lower bound" in evidence.reason


def test_autonomous_confidently_below_confirmed_by_the_margin_is_demoted():
    evidence = weigh([_count("autonomous", 120, 80), _count("confirmed", 180, 20), _count("overridden", 10, 2)])
    assert evidence.recommendation is Recommendation.DEMOTE
    assert str(DEMOTE_MARGIN) in evidence.reason


def test_autonomous_a_little_below_confirmed_is_not_demoted():
    # 0.88 against 0.90: below, but not by the margin with confidence.
    evidence = weigh([_count("autonomous", 176, 24), _count("confirmed", 180, 20), _count("overridden", 5, 5)])
    assert evidence.recommendation is Recommendation.READY


def test_demotion_needs_enough_autonomous_decisions_to_compare():
    evidence = weigh([_count("autonomous", 5, 20), _count("confirmed", 180, 20), _count("overridden", 5, 5)])
    assert evidence.recommendation is Recommendation.READY


judged_counts = st.tuples(st.integers(0, 300), st.integers(0, 300))


@given(autonomous=judged_counts, confirmed=judged_counts, overridden=judged_counts)
def test_every_recommendation_keeps_to_its_minimum_of_evidence(autonomous, confirmed, overridden):
    evidence = weigh(
        [
            _count("autonomous", *autonomous),
            _count("confirmed", *confirmed),
            _count("overridden", *overridden),
        ]
    )
    weighed = sum(confirmed) + sum(overridden)
    if evidence.recommendation is Recommendation.DEMOTE:
        assert sum(autonomous) >= MIN_COMPARED and sum(confirmed) >= MIN_COMPARED
        assert autonomous[0] / sum(autonomous) < confirmed[0] / sum(confirmed) - DEMOTE_MARGIN
    elif evidence.recommendation is Recommendation.NOT_ENOUGH_EVIDENCE:
        assert weighed < MIN_JUDGED
    else:
        assert weighed >= MIN_JUDGED
    if evidence.recommendation is Recommendation.READY:
        assert sum(confirmed) / weighed >= READY_AGREEMENT
