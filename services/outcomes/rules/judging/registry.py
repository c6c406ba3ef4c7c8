"""Per-decision-type outcome rules and the one entry point that applies them.

A decision becomes precedent only once we know how it turned out, so the
sweeper asks `judge` about every pending decision old enough to judge. Each
decision type owns its definition of "worked" in a module of this package,
registered with `@rule("<type>")`; `judge` never names a type itself, so a new
type arrives as one new module and nothing else changes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum

# A decision younger than this is left alone: whatever it concerns is probably
# still in flight, and judging now would record a failure for something that
# simply has not finished yet.
MIN_DECISION_AGE = timedelta(minutes=30)

# Caps one sweep's work; whatever is left is the next sweep's.
SWEEP_BATCH = 500


class Outcome(StrEnum):
    """What became of a decision, as stored and grouped by the insights view."""

    # What the decision was trying to achieve happened.
    SUCCESS = "success"
    # It did not.
    FAILURE = "failure"
    # The window closed without evidence either way. Recorded rather than left
    # pending, because a pending row is rescanned on every sweep forever; it
    # is kept out of retrieval exactly like a pending one.
    UNKNOWN = "unknown"


def _require_aware(name: str, value: datetime | None) -> None:
    if value is not None and (value.tzinfo is None or value.utcoffset() is None):
        raise ValueError(f"{name} must be timezone-aware")


@dataclass(frozen=True, slots=True)
class BookingFacts:
    """What is known about the booking a decision concerned.

    Every field is optional: facts arrive piecemeal, and a missing fact must
    read as "not known yet", never as "false".
    """

    status: str | None = None
    assigned_at: datetime | None = None
    delivered_at: datetime | None = None
    sla_due_at: datetime | None = None
    cancelled: bool | None = None

    def __post_init__(self) -> None:
        # Naive timestamps cannot be ordered against aware ones, and guessing
        # their zone would silently shift an SLA comparison by hours.
        _require_aware("assigned_at", self.assigned_at)
        _require_aware("delivered_at", self.delivered_at)
        _require_aware("sla_due_at", self.sla_due_at)


@dataclass(frozen=True, slots=True)
class Timing:
    """When the decision was made, when it is being judged, and for how long
    its result may still change."""

    decided_at: datetime
    now: datetime
    window: timedelta

    def __post_init__(self) -> None:
        _require_aware("decided_at", self.decided_at)
        _require_aware("now", self.now)
        if self.window <= timedelta(0):
            raise ValueError("window must be positive")

    @property
    def age(self) -> timedelta:
        return self.now - self.decided_at

    @property
    def window_closed(self) -> bool:
        return self.age >= self.window


Rule = Callable[[BookingFacts, Timing], Outcome | None]


class RuleBook:
    """Decision type → the rule that judges it."""

    __slots__ = ("_rules",)

    def __init__(self) -> None:
        self._rules: dict[str, Rule] = {}

    def register(self, decision_type: str) -> Callable[[Rule], Rule]:
        """Decorator: make `fn` the rule for `decision_type`."""
        if not decision_type or decision_type != decision_type.strip():
            raise ValueError(f"decision type {decision_type!r} must be a non-blank, trimmed name")

        def register_rule(fn: Rule) -> Rule:
            # Two rules for one type would make the verdict depend on import
            # order, which nobody reading either rule could predict.
            if decision_type in self._rules:
                raise ValueError(f"a rule for {decision_type!r} is already registered")
            self._rules[decision_type] = fn
            return fn

        return register_rule

    @property
    def decision_types(self) -> frozenset[str]:
        return frozenset(self._rules)

    def judge(
        self,
        decision_type: str,
        facts: BookingFacts,
        *,
        decided_at: datetime,
        now: datetime,
        window: timedelta,
    ) -> Outcome | None:
        """The outcome of one decision, or None to leave it pending."""
        timing = Timing(decided_at=decided_at, now=now, window=window)
        if timing.age < MIN_DECISION_AGE:
            return None
        judge_type = self._rules.get(decision_type)
        if judge_type is not None:
            return judge_type(facts, timing)
        # A type nobody wrote a rule for is never guessed at: a wrong label is
        # worse than no label, because retrieval then teaches it confidently.
        # Once its window closes it is marked unknown so it stops being
        # rescanned.
        return Outcome.UNKNOWN if timing.window_closed else None


RULES = RuleBook()
rule = RULES.register


def judge(
    decision_type: str,
    facts: BookingFacts,
    *,
    decided_at: datetime,
    now: datetime,
    window: timedelta,
) -> Outcome | None:
    """Judge one decision with the registered rules; None leaves it pending."""
    return RULES.judge(decision_type, facts, decided_at=decided_at, now=now, window=window)


def registered_types() -> frozenset[str]:
    """Decision types that have a rule of their own."""
    return RULES.decision_types
