import random

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
from services.outcomes.rules.routing import (
    BetaPosterior,
    Evidence,
    pick_probabilities,
    pick_propensity,
    thompson_pick,
)

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


# ─── The pick's propensity ───────────────────────────────────────────────────


def _decision_counts(**by_model: tuple[int, int]) -> list[OutcomeCount]:
    rows = []
    for model, (successes, failures) in by_model.items():
        rows.append(OutcomeCount(decision_type="stall_response", outcome="success", model=model, count=successes))
        rows.append(OutcomeCount(decision_type="stall_response", outcome="failure", model=model, count=failures))
    return rows


def test_two_equal_posteriors_give_the_pick_a_propensity_near_a_half():
    advice = advise(
        RouteKey("decision_type", "stall_response"),
        credits=[],
        outcomes=_decision_counts(a=(20, 20), b=(20, 20)),
        seed=7,
    )
    # 4,000 draws: the estimate of 0.5 is within ±0.016 at 95 %; 0.03 is over 3.5 standard errors.
    assert advice.propensity == pytest.approx(0.5, abs=0.03)
    assert advice.propensity_draws == 4000


def test_a_dominant_posterior_gives_its_pick_a_propensity_near_one():
    advice = advise(
        RouteKey("decision_type", "stall_response"),
        credits=[],
        outcomes=_decision_counts(strong=(200, 5), weak=(5, 200)),
        seed=11,
    )
    assert advice.pick == "strong"
    assert advice.propensity > 0.99


def test_the_propensity_is_that_of_the_model_actually_picked():
    for seed in range(30):
        advice = advise(
            RouteKey("decision_type", "stall_response"),
            credits=[],
            outcomes=_decision_counts(a=(12, 8), b=(10, 10), c=(3, 5)),
            seed=seed,
        )
        chances = {arm.model: arm.pick_probability for arm in advice.arms}
        assert advice.propensity == chances[advice.pick]


def test_an_unlikely_pick_still_has_a_propensity_above_zero():
    # A long shot is still drawn now and then; when it is, its weight 1/p must be finite.
    posteriors = {"long_shot": BetaPosterior(2, 10), "favourite": BetaPosterior(10, 2)}
    picked = [seed for seed in range(5000) if thompson_pick(posteriors, random.Random(seed)) == "long_shot"]
    assert picked, "the long shot is drawn in some seed"
    for seed in picked[:3]:
        chances = pick_probabilities(posteriors, draws=PICK_DRAWS, seed=seed)
        assert 0 < pick_propensity(chances, "long_shot", draws=PICK_DRAWS) <= 1


def test_a_propensity_is_floored_at_one_draw_and_needs_a_drawn_model():
    assert pick_propensity({"a": 0.0, "b": 1.0}, "a", draws=4000) == 1 / 4000
    assert pick_propensity({"a": 1.0}, "a", draws=4000) == 1.0
    with pytest.raises(ValueError, match="not among the models drawn"):
        pick_propensity({"a": 1.0}, "z", draws=4000)
