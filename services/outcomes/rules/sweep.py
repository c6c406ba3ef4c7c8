"""What one sweep decides: the verdicts for a page of pending decisions, from
the facts known about their subjects, and how large a page may be.

The sweep itself (paging through the decisions context, writing verdicts)
is the flow in `services.outcomes.sweeper`; everything here is decided from
values alone.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from services.common.errors import InvalidArgument
from services.outcomes.rules.judging import SWEEP_BATCH, BookingFacts, Outcome, judge

# The decisions context reads and writes at most this many per call.
MAX_BATCH = 1000


@dataclass(frozen=True, slots=True)
class PendingDecision:
    id: str
    decision_type: str
    subject_id: str
    decided_at: datetime
    model: str | None


@dataclass(frozen=True, slots=True)
class Verdict:
    decision_id: str
    outcome: Outcome
    reason: str


@dataclass(frozen=True, slots=True)
class FactValues:
    """The values of a subject's facts, without their observation times."""

    subject_id: str
    status: str | None
    assigned_at: datetime | None
    delivered_at: datetime | None
    sla_due_at: datetime | None
    cancelled: bool | None


@dataclass(slots=True)
class SweepReport:
    judged: int = 0
    scanned: int = 0
    by_outcome: Counter[Outcome] = field(default_factory=Counter)

    def as_counts(self) -> dict[str, int]:
        return {outcome.value: self.by_outcome.get(outcome, 0) for outcome in Outcome}


def batch_size(requested: int) -> int:
    """0 means the default batch; anything outside 1..MAX_BATCH is refused."""
    if requested == 0:
        return SWEEP_BATCH
    if not 1 <= requested <= MAX_BATCH:
        raise InvalidArgument(f"batch_size must be between 1 and {MAX_BATCH}, got {requested}", field="batch_size")
    return requested


def _facts(values: FactValues | None) -> BookingFacts:
    if values is None:
        # No facts at all about the subject: every field "not known yet".
        return BookingFacts()
    return BookingFacts(
        status=values.status,
        assigned_at=values.assigned_at,
        delivered_at=values.delivered_at,
        sla_due_at=values.sla_due_at,
        cancelled=values.cancelled,
    )


def _reason(outcome: Outcome, facts: BookingFacts) -> str:
    # A short account an operator can check against the booking, not a rule
    # name: the verdict must be explainable from the facts it was drawn from.
    known = [
        name
        for name in ("cancelled", "delivered_at", "assigned_at", "sla_due_at", "status")
        if getattr(facts, name) is not None
    ]
    seen = ", ".join(known) if known else "no facts"
    return f"{outcome.value} by the sweeper's rule from {seen}"


def judge_batch(
    decisions: list[PendingDecision],
    facts: dict[str, FactValues],
    *,
    now: datetime,
    window: timedelta,
) -> list[Verdict]:
    """Verdicts for the decisions that can be judged now; the rest stay pending."""
    verdicts = []
    for decision in decisions:
        booking = _facts(facts.get(decision.subject_id))
        outcome = judge(decision.decision_type, booking, decided_at=decision.decided_at, now=now, window=window)
        if outcome is not None:
            verdicts.append(Verdict(decision.id, outcome, _reason(outcome, booking)))
    return verdicts
