"""Thompson-sampling routing over per-(key, model) Beta posteriors.

A key is what a route is chosen for (a decision type or a skill); each model
routed for it holds a Beta posterior over its success rate, starting from the
uniform Beta(1, 1). Evidence comes from two places:

- episode credits, fractionally: a credit adds its confidence, not 1, so a
  recovered failure (discounted) moves the posterior less than an abandoned
  one (boosted), and the episode model's modulation has teeth;
- judged decisions, whole: success or failure adds 1; unknown adds nothing,
  because "we could not tell" is not evidence about the model.

Picking samples every posterior once and takes the best draw, so a model
with little evidence still gets tried in proportion to the chance that it is
in fact the best, instead of being starved by an early unlucky run.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from services.outcomes.rules.credit import Credit, TurnCredit
from services.outcomes.rules.judging import Outcome


@dataclass(frozen=True, slots=True)
class Evidence:
    """Weight for and against one model, in (possibly fractional) trials."""

    successes: float = 0.0
    failures: float = 0.0

    def __post_init__(self) -> None:
        if self.successes < 0 or self.failures < 0:
            raise ValueError("evidence cannot be negative")


NO_EVIDENCE = Evidence()


def credit_evidence(credit: TurnCredit) -> Evidence:
    """One episode credit as fractional evidence: its confidence, on its side."""
    if not 0.0 <= credit.confidence <= 1.0:
        raise ValueError(f"credit confidence {credit.confidence} is outside 0..1")
    if credit.credit is Credit.SUCCESS:
        return Evidence(successes=credit.confidence)
    return Evidence(failures=credit.confidence)


def outcome_evidence(outcome: Outcome) -> Evidence:
    """One judged decision as evidence: a whole trial, or none for unknown."""
    if outcome is Outcome.SUCCESS:
        return Evidence(successes=1.0)
    if outcome is Outcome.FAILURE:
        return Evidence(failures=1.0)
    return NO_EVIDENCE


@dataclass(frozen=True, slots=True)
class BetaPosterior:
    alpha: float = 1.0
    beta: float = 1.0

    def __post_init__(self) -> None:
        if self.alpha <= 0 or self.beta <= 0:
            raise ValueError("alpha and beta must be positive")

    def updated(self, evidence: Evidence) -> BetaPosterior:
        return BetaPosterior(self.alpha + evidence.successes, self.beta + evidence.failures)

    @property
    def mean(self) -> float:
        return self.alpha / (self.alpha + self.beta)

    @property
    def successes(self) -> float:
        """Evidence for, without the prior."""
        return self.alpha - 1.0

    @property
    def failures(self) -> float:
        """Evidence against, without the prior."""
        return self.beta - 1.0


@dataclass(frozen=True, slots=True, order=True)
class Arm:
    """One model as a candidate route for one key."""

    key: str
    model: str


def accumulate(
    observations: Iterable[tuple[Arm, Evidence]],
    *,
    into: Mapping[Arm, BetaPosterior] | None = None,
) -> dict[Arm, BetaPosterior]:
    """Posteriors after adding every observation, starting from `into` (or priors)."""
    posteriors = dict(into or {})
    for arm, evidence in observations:
        posteriors[arm] = posteriors.get(arm, BetaPosterior()).updated(evidence)
    return posteriors


def credit_observations(credits: Iterable[TurnCredit], *, key: str) -> Iterator[tuple[Arm, Evidence]]:
    """Episode credits as evidence for `key`'s arms.

    A credit with no model is skipped: there is no arm to blame or praise.
    """
    for credit in credits:
        if credit.model is not None:
            yield Arm(key=key, model=credit.model), credit_evidence(credit)


def arms_for(posteriors: Mapping[Arm, BetaPosterior], key: str) -> dict[str, BetaPosterior]:
    """The models competing for `key`, with their posteriors."""
    return {arm.model: posterior for arm, posterior in posteriors.items() if arm.key == key}


def thompson_pick(posteriors: Mapping[str, BetaPosterior], rng: random.Random) -> str:
    """Sample each model's posterior once and pick the highest draw."""
    if not posteriors:
        raise ValueError("there is no model to pick from")
    best_model = ""
    best_draw = -1.0
    # Sampling in name order makes a pick depend only on the posteriors and the
    # generator's state, never on how the mapping happened to be built.
    for model in sorted(posteriors):
        posterior = posteriors[model]
        draw = rng.betavariate(posterior.alpha, posterior.beta)
        if draw > best_draw:
            best_model, best_draw = model, draw
    return best_model


def pick_probabilities(posteriors: Mapping[str, BetaPosterior], *, draws: int, seed: int) -> dict[str, float]:
    """Each model's estimated chance of being picked, from `draws` seeded picks."""
    if draws <= 0:
        raise ValueError("draws must be positive")
    rng = random.Random(seed)
    wins = dict.fromkeys(posteriors, 0)
    for _ in range(draws):
        wins[thompson_pick(posteriors, rng)] += 1
    return {model: count / draws for model, count in wins.items()}


def pick_propensity(chances: Mapping[str, float], pick: str, *, draws: int) -> float:
    """The pick's probability under the Thompson draw, as `pick_probabilities`
    estimated it, floored at one draw in `draws`.

    Decisions take 0 < p <= 1 and weigh each by 1/p, so a pick that was
    drawn must never read as impossible. With the same seed the first of the
    estimating draws is the pick itself, so its count is at least one; the
    floor only holds that line should the two ever be computed apart.
    """
    if pick not in chances:
        raise ValueError(f"{pick!r} is not among the models drawn")
    return min(1.0, max(chances[pick], 1.0 / draws))


def posterior_means(posteriors: Mapping[str, BetaPosterior]) -> dict[str, float]:
    return {model: posterior.mean for model, posterior in posteriors.items()}
