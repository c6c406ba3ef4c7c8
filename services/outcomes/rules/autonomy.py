"""Autonomy evidence (DESIGN §10): judged success by how an agent's actions
were carried out, and what it says about letting the agent act alone.

- autonomous: the agent acted alone;
- confirmed: a person confirmed the agent's proposal;
- overridden: a person did something else;
- proposed: nothing was done.

Each execution's success rate carries a 95 % Wilson score interval, which
stays inside 0..1 and is honest at small counts where the normal one is not.

The recommendation, in this order:

1. demote: at least MIN_COMPARED judged autonomous and confirmed decisions,
   and autonomous success is below confirmed success by more than
   DEMOTE_MARGIN (the rollout guard's default margin) with 95 % confidence:
   the upper bound of Newcombe's interval on the difference is under
   −DEMOTE_MARGIN. Acting alone is doing worse than with a person.
2. not_enough_evidence: fewer than MIN_JUDGED judged confirmed and
   overridden decisions together: too few times a person weighed the
   agent's proposal to say how often they agree.
3. ready: agreement (confirmed ÷ (confirmed + overridden)) at least
   READY_AGREEMENT, and confirmed success's lower bound at or above
   overridden's: people mostly take the agent's proposal, and when they do
   it works at least as well as what they do instead.
4. keep_off otherwise, saying which of the two fell short.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

Z_95 = 1.959963984540054
MIN_JUDGED = 100
MIN_COMPARED = 30
READY_AGREEMENT = 0.9
DEMOTE_MARGIN = 0.05


class Execution(StrEnum):
    AUTONOMOUS = "autonomous"
    CONFIRMED = "confirmed"
    OVERRIDDEN = "overridden"
    PROPOSED = "proposed"


class Recommendation(StrEnum):
    READY = "ready"
    KEEP_OFF = "keep_off"
    DEMOTE = "demote"
    NOT_ENOUGH_EVIDENCE = "not_enough_evidence"


@dataclass(frozen=True, slots=True)
class ExecutionCount:
    """One decision type's decisions carried out one way, as CountExecutions answers."""

    decision_type: str
    execution: str
    successes: int
    failures: int
    unknown: int
    pending: int


@dataclass(frozen=True, slots=True)
class Interval:
    mean: float
    low: float
    high: float


def wilson(successes: int, judged: int) -> Interval | None:
    """The 95 % Wilson score interval of a success rate; None without trials."""
    if judged <= 0:
        return None
    p = successes / judged
    z2 = Z_95**2
    centre = (p + z2 / (2 * judged)) / (1 + z2 / judged)
    half = Z_95 * math.sqrt(p * (1 - p) / judged + z2 / (4 * judged**2)) / (1 + z2 / judged)
    return Interval(mean=p, low=max(0.0, centre - half), high=min(1.0, centre + half))


@dataclass(frozen=True, slots=True)
class ExecutionEvidence:
    successes: int = 0
    failures: int = 0
    unknown: int = 0
    pending: int = 0

    @property
    def judged(self) -> int:
        return self.successes + self.failures

    @property
    def total(self) -> int:
        return self.judged + self.unknown + self.pending

    @property
    def interval(self) -> Interval | None:
        return wilson(self.successes, self.judged)


def difference_high(a: ExecutionEvidence, b: ExecutionEvidence) -> float | None:
    """Upper 95 % bound of rate(a) − rate(b), by Newcombe's hybrid score method."""
    ia, ib = a.interval, b.interval
    if ia is None or ib is None:
        return None
    return ia.mean - ib.mean + math.sqrt((ia.high - ia.mean) ** 2 + (ib.mean - ib.low) ** 2)


@dataclass(frozen=True, slots=True)
class AutonomyEvidence:
    by_execution: dict[Execution, ExecutionEvidence]
    agreement_rate: float | None
    recommendation: Recommendation
    reason: str


def tally(counts: Iterable[ExecutionCount]) -> dict[Execution, ExecutionEvidence]:
    """Counts summed per execution over the decision types given; decisions
    that did not say how they were carried out are left out."""
    summed = {execution: ExecutionEvidence() for execution in Execution}
    known = {e.value for e in Execution}
    for row in counts:
        if row.execution not in known:
            continue
        execution = Execution(row.execution)
        before = summed[execution]
        summed[execution] = ExecutionEvidence(
            successes=before.successes + row.successes,
            failures=before.failures + row.failures,
            unknown=before.unknown + row.unknown,
            pending=before.pending + row.pending,
        )
    return summed


def _rate(interval: Interval | None) -> str:
    return "none judged" if interval is None else f"{interval.mean:.3f} [{interval.low:.3f}, {interval.high:.3f}]"


def weigh(counts: Iterable[ExecutionCount]) -> AutonomyEvidence:
    """The evidence by execution, the agreement rate and the recommendation."""
    by = tally(counts)
    autonomous, confirmed, overridden = by[Execution.AUTONOMOUS], by[Execution.CONFIRMED], by[Execution.OVERRIDDEN]
    weighed = confirmed.total + overridden.total
    agreement = confirmed.total / weighed if weighed else None

    def verdict(recommendation: Recommendation, reason: str) -> AutonomyEvidence:
        return AutonomyEvidence(by, agreement, recommendation, reason)

    gap = difference_high(autonomous, confirmed)
    compared = autonomous.judged >= MIN_COMPARED and confirmed.judged >= MIN_COMPARED
    if compared and gap is not None and gap < -DEMOTE_MARGIN:
        return verdict(
            Recommendation.DEMOTE,
            f"autonomous success {_rate(autonomous.interval)} is below confirmed {_rate(confirmed.interval)} "
            f"by more than {DEMOTE_MARGIN} with 95 % confidence",
        )
    judged = confirmed.judged + overridden.judged
    if judged < MIN_JUDGED:
        return verdict(
            Recommendation.NOT_ENOUGH_EVIDENCE,
            f"{judged} judged confirmed or overridden decisions; at least {MIN_JUDGED} are needed",
        )
    # At least MIN_JUDGED decisions of the two kinds: the rate has a denominator.
    agreement = confirmed.total / weighed
    if agreement < READY_AGREEMENT:
        return verdict(
            Recommendation.KEEP_OFF,
            f"people took the agent's proposal in {agreement:.1%} of decisions; ready needs {READY_AGREEMENT:.0%}",
        )
    confirmed_rate, overridden_rate = confirmed.interval, overridden.interval
    confirmed_low = confirmed_rate.low if confirmed_rate is not None else 0.0
    overridden_low = overridden_rate.low if overridden_rate is not None else 0.0
    if confirmed_low < overridden_low:
        return verdict(
            Recommendation.KEEP_OFF,
            f"confirmed success {_rate(confirmed_rate)} has a lower bound below overridden {_rate(overridden_rate)}",
        )
    return verdict(
        Recommendation.READY,
        f"people took the agent's proposal in {agreement:.1%} of decisions, and confirmed success "
        f"{_rate(confirmed_rate)} is at least overridden {_rate(overridden_rate)} at its lower bound",
    )
