"""Routing advice: the evidence for each model on one key, and the Thompson pick.

A key is a decision type or a skill. Its evidence comes from two places: the
episode credits booked in the ledger for conversations routed under it
(fractional, confidence-weighted), and, for a decision type, the judged
decisions of that type by model (whole trials, unknown counting for nothing).
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from services.common.errors import InvalidArgument
from services.outcomes.rules.judging import Outcome
from services.outcomes.rules.routing import (
    Arm,
    BetaPosterior,
    Evidence,
    accumulate,
    arms_for,
    outcome_evidence,
    pick_probabilities,
    pick_propensity,
    thompson_pick,
)

# Seeded picks behind each pick probability and the pick's propensity. 4,000
# puts the estimate within about ±1.6 points (95 %) of the true chance, at a
# few milliseconds a call; as a propensity its relative error (about
# sqrt((1-p)/(4000 p)), 5 % at p = 0.1) is small beside the spread of an
# inverse-propensity estimate over the few hundred decisions it is used on.
PICK_DRAWS = 4000
MAX_CANDIDATES = 50


@dataclass(frozen=True, slots=True)
class RouteKey:
    kind: Literal["skill", "decision_type"]
    name: str

    @property
    def label(self) -> str:
        return f"{self.kind}:{self.name}"


def route_key(*, decision_type: str, skill: str) -> RouteKey:
    """Exactly one of the two names what is being routed."""
    decision_type, skill = decision_type.strip(), skill.strip()
    if decision_type and skill:
        raise InvalidArgument("give either decision_type or skill, not both", field="skill")
    if decision_type:
        return RouteKey("decision_type", decision_type)
    if skill:
        return RouteKey("skill", skill)
    raise InvalidArgument("decision_type or skill is required", field="decision_type")


def candidate_models(raw: Sequence[str]) -> tuple[str, ...]:
    """Distinct, trimmed candidate names in the order given."""
    if len(raw) > MAX_CANDIDATES:
        raise InvalidArgument(f"at most {MAX_CANDIDATES} candidates, got {len(raw)}", field="candidates")
    names: list[str] = []
    for index, name in enumerate(raw):
        if not name.strip():
            raise InvalidArgument(f"candidates[{index}] is blank", field=f"candidates[{index}]")
        if name.strip() not in names:
            names.append(name.strip())
    return tuple(names)


@dataclass(frozen=True, slots=True)
class RouteQuery:
    """What one request for advice asks: the key, the models to choose among
    (none: every model with evidence), and the seed (none: a fresh one)."""

    key: RouteKey
    candidates: tuple[str, ...]
    seed: int | None


def route_query(*, decision_type: str, skill: str, candidates: Sequence[str], seed: int | None) -> RouteQuery:
    return RouteQuery(
        key=route_key(decision_type=decision_type, skill=skill),
        candidates=candidate_models(candidates),
        seed=seed,
    )


@dataclass(frozen=True, slots=True)
class CreditTally:
    """Confidence-weighted episode credit booked for one model under one key."""

    model: str
    successes: float
    failures: float


@dataclass(frozen=True, slots=True)
class OutcomeCount:
    decision_type: str
    outcome: str
    model: str
    count: int


@dataclass(frozen=True, slots=True)
class ArmAdvice:
    model: str
    credit: Evidence
    decisions: Evidence
    posterior: BetaPosterior
    pick_probability: float


@dataclass(frozen=True, slots=True)
class Advice:
    key: RouteKey
    arms: tuple[ArmAdvice, ...]
    # None when no model has evidence and no candidate was named.
    pick: str | None
    seed: int
    # The pick's probability under the Thompson draw (0 without a pick).
    propensity: float = 0.0
    propensity_draws: int = PICK_DRAWS


def _decision_evidence(key: RouteKey, counts: Iterable[OutcomeCount]) -> dict[str, Evidence]:
    evidence: dict[str, Evidence] = {}
    if key.kind != "decision_type":
        return evidence
    for row in counts:
        # Pending rows ("") and unknown verdicts say nothing about a model;
        # a decision with no model has no arm to credit.
        if row.decision_type != key.name or not row.model or row.outcome not in {o.value for o in Outcome}:
            continue
        one = outcome_evidence(Outcome(row.outcome))
        before = evidence.get(row.model, Evidence())
        evidence[row.model] = Evidence(
            successes=before.successes + one.successes * row.count,
            failures=before.failures + one.failures * row.count,
        )
    return evidence


def advise(
    key: RouteKey,
    *,
    credits: Iterable[CreditTally],
    outcomes: Iterable[OutcomeCount],
    candidates: Sequence[str] = (),
    seed: int,
) -> Advice:
    """Posteriors, pick probabilities and the seeded Thompson pick for one key."""
    credit_evidence = {t.model: Evidence(successes=t.successes, failures=t.failures) for t in credits}
    decision_evidence = _decision_evidence(key, outcomes)
    posteriors = arms_for(
        accumulate(
            [
                *((Arm(key.label, model), e) for model, e in credit_evidence.items()),
                *((Arm(key.label, model), e) for model, e in decision_evidence.items()),
            ]
        ),
        key.label,
    )
    if candidates:
        # A candidate with no evidence yet competes on the uniform prior:
        # Thompson sampling is what gives a newcomer its first tries.
        posteriors = {model: posteriors.get(model, BetaPosterior()) for model in candidates}
    if not posteriors:
        return Advice(key=key, arms=(), pick=None, seed=seed)
    pick = thompson_pick(posteriors, random.Random(seed))
    chances = pick_probabilities(posteriors, draws=PICK_DRAWS, seed=seed)
    arms = tuple(
        ArmAdvice(
            model=model,
            credit=credit_evidence.get(model, Evidence()),
            decisions=decision_evidence.get(model, Evidence()),
            posterior=posteriors[model],
            pick_probability=chances[model],
        )
        for model in sorted(posteriors)
    )
    return Advice(
        key=key,
        arms=arms,
        pick=pick,
        seed=seed,
        propensity=pick_propensity(chances, pick, draws=PICK_DRAWS),
        propensity_draws=PICK_DRAWS,
    )


def recommendation(advice: Advice) -> Advice:
    """The advice, refused when it picks no model: a recommendation must name one."""
    if advice.pick is None:
        raise InvalidArgument(
            f"no model has evidence for {advice.key.label}; name the candidates to choose among",
            field="candidates",
            code="NO_CANDIDATES",
        )
    return advice
