import random

import pytest

from services.outcomes.rules.credit import Credit, Resolution, TurnCredit
from services.outcomes.rules.judging import Outcome
from services.outcomes.rules.routing import (
    NO_EVIDENCE,
    Arm,
    BetaPosterior,
    Evidence,
    accumulate,
    arms_for,
    credit_evidence,
    credit_observations,
    outcome_evidence,
    pick_probabilities,
    posterior_means,
    thompson_pick,
)


def turn_credit(credit: Credit, confidence: float, model: str | None = "m1") -> TurnCredit:
    return TurnCredit(
        conversation_id="c-1",
        turn_ref="t1",
        model=model,
        trace_id=None,
        credit=credit,
        confidence=confidence,
        episode_id=0,
        resolution=Resolution.RESOLVED,
    )


def test_the_prior_is_uniform():
    prior = BetaPosterior()
    assert (prior.alpha, prior.beta, prior.mean) == (1.0, 1.0, 0.5)
    assert (prior.successes, prior.failures) == (0.0, 0.0)


def test_a_credit_adds_its_confidence_to_its_side():
    assert credit_evidence(turn_credit(Credit.SUCCESS, 0.9)) == Evidence(successes=0.9)
    assert credit_evidence(turn_credit(Credit.FAILURE, 0.85 * 0.7)) == Evidence(failures=0.85 * 0.7)


@pytest.mark.parametrize("confidence", [-0.1, 1.01])
def test_a_credit_outside_0_1_is_refused(confidence):
    with pytest.raises(ValueError, match="confidence"):
        credit_evidence(turn_credit(Credit.SUCCESS, confidence))


@pytest.mark.parametrize(
    ("outcome", "evidence"),
    [
        (Outcome.SUCCESS, Evidence(successes=1.0)),
        (Outcome.FAILURE, Evidence(failures=1.0)),
        (Outcome.UNKNOWN, NO_EVIDENCE),
    ],
)
def test_a_judged_decision_adds_a_whole_trial_and_unknown_nothing(outcome, evidence):
    assert outcome_evidence(outcome) == evidence


def test_posteriors_accumulate_per_key_and_model():
    stall_m1 = Arm("stall_response", "m1")
    stall_m2 = Arm("stall_response", "m2")
    other_m1 = Arm("assignment_failure", "m1")
    posteriors = accumulate(
        [
            (stall_m1, outcome_evidence(Outcome.SUCCESS)),
            (stall_m1, outcome_evidence(Outcome.UNKNOWN)),
            (stall_m1, credit_evidence(turn_credit(Credit.FAILURE, 0.5))),
            (stall_m2, outcome_evidence(Outcome.FAILURE)),
            (other_m1, outcome_evidence(Outcome.SUCCESS)),
        ]
    )
    assert posteriors == {
        stall_m1: BetaPosterior(2.0, 1.5),
        stall_m2: BetaPosterior(1.0, 2.0),
        other_m1: BetaPosterior(2.0, 1.0),
    }
    assert arms_for(posteriors, "stall_response") == {"m1": BetaPosterior(2.0, 1.5), "m2": BetaPosterior(1.0, 2.0)}
    assert posterior_means(arms_for(posteriors, "stall_response")) == {"m1": 2.0 / 3.5, "m2": 1.0 / 3.0}


def test_accumulating_continues_from_stored_posteriors():
    arm = Arm("skill-7", "m1")
    stored = {arm: BetaPosterior(5.0, 3.0)}
    assert accumulate([(arm, Evidence(successes=0.6))], into=stored) == {arm: BetaPosterior(5.6, 3.0)}
    assert stored == {arm: BetaPosterior(5.0, 3.0)}


def test_credits_without_a_model_are_not_evidence_for_any_arm():
    credits = [turn_credit(Credit.SUCCESS, 0.9), turn_credit(Credit.FAILURE, 0.5, model=None)]
    assert list(credit_observations(credits, key="skill-7")) == [(Arm("skill-7", "m1"), Evidence(successes=0.9))]


@pytest.mark.parametrize(("alpha", "beta"), [(0.0, 1.0), (1.0, -1.0)])
def test_a_posterior_needs_positive_parameters(alpha, beta):
    with pytest.raises(ValueError, match="must be positive"):
        BetaPosterior(alpha, beta)


def test_evidence_cannot_be_negative():
    with pytest.raises(ValueError, match="cannot be negative"):
        Evidence(successes=-1.0)


def test_a_pick_is_reproducible_and_independent_of_mapping_order():
    forward = {"m1": BetaPosterior(3, 2), "m2": BetaPosterior(2, 3), "m3": BetaPosterior(1, 1)}
    backward = dict(reversed(forward.items()))
    picks_forward = [thompson_pick(forward, random.Random(seed)) for seed in range(50)]
    picks_backward = [thompson_pick(backward, random.Random(seed)) for seed in range(50)]
    assert picks_forward == picks_backward
    assert set(picks_forward) == {"m1", "m2", "m3"}


def test_a_pick_needs_a_candidate():
    with pytest.raises(ValueError, match="no model to pick from"):
        thompson_pick({}, random.Random(0))


def test_pick_probabilities_favour_the_stronger_posterior_reproducibly():
    posteriors = {"strong": BetaPosterior(40, 10), "weak": BetaPosterior(10, 40)}
    first = pick_probabilities(posteriors, draws=2_000, seed=7)
    assert first == pick_probabilities(posteriors, draws=2_000, seed=7)
    assert sum(first.values()) == pytest.approx(1.0)
    assert first["strong"] > 0.99


def test_pick_probabilities_split_evenly_between_equals():
    estimate = pick_probabilities({"a": BetaPosterior(), "b": BetaPosterior()}, draws=4_000, seed=1)
    assert estimate["a"] == pytest.approx(0.5, abs=0.05)


def test_pick_probabilities_need_draws():
    with pytest.raises(ValueError, match="draws"):
        pick_probabilities({"a": BetaPosterior()}, draws=0, seed=1)


def test_routing_converges_on_the_better_model():
    true_success_rate = {"steady": 0.8, "shaky": 0.5}
    picker = random.Random(2024)
    world = random.Random(99)
    posteriors = {model: BetaPosterior() for model in true_success_rate}
    picks = []
    for _ in range(400):
        model = thompson_pick(posteriors, picker)
        outcome = Outcome.SUCCESS if world.random() < true_success_rate[model] else Outcome.FAILURE
        posteriors[model] = posteriors[model].updated(outcome_evidence(outcome))
        picks.append(model)

    last = picks[-100:]
    assert last.count("steady") >= 85
    probabilities = pick_probabilities(posteriors, draws=2_000, seed=5)
    assert max(probabilities, key=probabilities.get) == "steady"
    assert probabilities["steady"] > 0.85
    means = posterior_means(posteriors)
    assert means["steady"] == pytest.approx(0.8, abs=0.1)
    assert means["steady"] > means["shaky"]
