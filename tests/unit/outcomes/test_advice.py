import pytest

from services.common.errors import InvalidArgument
from services.outcomes.rules.advice import (
    PICK_DRAWS,
    Advice,
    CreditTally,
    OutcomeCount,
    RouteKey,
    advise,
    candidate_models,
    route_key,
)
from services.outcomes.rules.routing import BetaPosterior, Evidence

STALL = RouteKey("decision_type", "stall_response")


def counts(*rows: tuple[str, str, str, int]) -> list[OutcomeCount]:
    return [OutcomeCount(decision_type=t, outcome=o, model=m, count=n) for t, o, m, n in rows]


@pytest.mark.parametrize(
    ("decision_type", "skill", "expected"),
    [
        ("stall_response", "", RouteKey("decision_type", "stall_response")),
        ("", " triage ", RouteKey("skill", "triage")),
    ],
)
def test_a_route_key_is_a_decision_type_or_a_skill(decision_type, skill, expected):
    key = route_key(decision_type=decision_type, skill=skill)
    assert key == expected
    assert key.label == f"{expected.kind}:{expected.name}"


@pytest.mark.parametrize(
    ("decision_type", "skill", "field"),
    [("a", "b", "skill"), ("", "", "decision_type"), ("  ", "\t", "decision_type")],
)
def test_a_route_key_needs_exactly_one_name(decision_type, skill, field):
    with pytest.raises(InvalidArgument) as caught:
        route_key(decision_type=decision_type, skill=skill)
    assert list(caught.value.fields) == [field]


def test_candidates_are_trimmed_and_deduplicated_in_order():
    assert candidate_models(["m2", " m1", "m2 ", "m3"]) == ("m2", "m1", "m3")


def test_a_blank_candidate_or_too_many_are_refused():
    with pytest.raises(InvalidArgument) as blank:
        candidate_models(["m1", " "])
    assert list(blank.value.fields) == ["candidates[1]"]
    with pytest.raises(InvalidArgument) as many:
        candidate_models([f"m{n}" for n in range(51)])
    assert list(many.value.fields) == ["candidates"]


def test_judged_decisions_add_whole_trials_and_pending_unknown_or_modelless_rows_nothing():
    advice = advise(
        STALL,
        credits=[],
        outcomes=counts(
            ("stall_response", "success", "m1", 7),
            ("stall_response", "failure", "m1", 2),
            ("stall_response", "unknown", "m1", 40),
            ("stall_response", "", "m1", 11),
            ("stall_response", "success", "", 5),
            ("assignment_failure", "failure", "m1", 9),
            ("stall_response", "failure", "m2", 3),
        ),
        seed=1,
    )
    arms = {arm.model: arm for arm in advice.arms}
    assert set(arms) == {"m1", "m2"}
    assert arms["m1"].decisions == Evidence(successes=7, failures=2)
    assert arms["m1"].posterior == BetaPosterior(8, 3)
    assert arms["m2"].posterior == BetaPosterior(1, 4)


def test_credits_are_fractional_and_add_to_the_decisions():
    advice = advise(
        STALL,
        credits=[CreditTally("m1", successes=1.5, failures=0.595)],
        outcomes=counts(("stall_response", "success", "m1", 2)),
        seed=1,
    )
    (arm,) = advice.arms
    assert arm.credit == Evidence(successes=1.5, failures=0.595)
    assert arm.posterior == BetaPosterior(1 + 1.5 + 2, 1 + 0.595)


def test_a_skill_key_ignores_decision_counts():
    advice = advise(
        RouteKey("skill", "stall_response"),
        credits=[CreditTally("m1", 1.0, 0.0)],
        outcomes=counts(("stall_response", "success", "m1", 50)),
        seed=1,
    )
    assert advice.arms[0].decisions == Evidence()
    assert advice.arms[0].posterior == BetaPosterior(2, 1)


def test_candidates_limit_the_arms_and_a_newcomer_starts_on_the_prior():
    advice = advise(
        STALL,
        credits=[CreditTally("m1", 3.0, 1.0), CreditTally("m-retired", 9.0, 0.0)],
        outcomes=[],
        candidates=("m1", "m-new"),
        seed=4,
    )
    assert [arm.model for arm in advice.arms] == ["m-new", "m1"]
    assert advice.arms[0].posterior == BetaPosterior()
    assert advice.pick in {"m1", "m-new"}


def test_no_evidence_and_no_candidates_gives_no_pick():
    assert advise(STALL, credits=[], outcomes=[], seed=3) == Advice(key=STALL, arms=(), pick=None, seed=3)


def test_the_same_seed_gives_the_same_advice_and_probabilities_sum_to_one():
    kwargs = {"credits": [CreditTally("a", 4.0, 6.0), CreditTally("b", 6.0, 4.0)], "outcomes": []}
    first = advise(STALL, seed=123, **kwargs)
    assert first == advise(STALL, seed=123, **kwargs)
    assert sum(arm.pick_probability for arm in first.arms) == pytest.approx(1.0)
    # Probabilities are counts over a fixed number of draws.
    assert all((arm.pick_probability * PICK_DRAWS).is_integer() for arm in first.arms)
    picks = {advise(STALL, seed=seed, **kwargs).pick for seed in range(20)}
    assert picks == {"a", "b"}


def test_the_better_supported_model_is_picked_most_often():
    advice = advise(
        STALL,
        credits=[CreditTally("good", 40.0, 5.0), CreditTally("poor", 10.0, 30.0)],
        outcomes=[],
        seed=9,
    )
    arms = {arm.model: arm for arm in advice.arms}
    assert arms["good"].posterior.mean > arms["poor"].posterior.mean
    assert arms["good"].pick_probability > 0.99
    assert advice.pick == "good"
