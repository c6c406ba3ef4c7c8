"""The soak's arithmetic, apart from its I/O: what was acknowledged against
what was stored, slopes, counters that restart, and /readyz around a kill.

Every function here is pure so the figures the bench reports can be checked
by a unit test without a platform running.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

HOUR_S = 3_600.0


def slope_per_hour(points: Sequence[tuple[float, float]]) -> float:
    """The least-squares slope of (seconds, value) points, per hour; 0 for
    fewer than two distinct instants (nothing to fit)."""
    if len(points) < 2:
        return 0.0
    n = len(points)
    mean_t = sum(t for t, _ in points) / n
    mean_v = sum(v for _, v in points) / n
    spread = sum((t - mean_t) ** 2 for t, _ in points)
    if spread == 0:
        return 0.0
    covariance = sum((t - mean_t) * (v - mean_v) for t, v in points)
    return covariance / spread * HOUR_S


def last_half(points: Sequence[tuple[float, float]]) -> list[tuple[float, float]]:
    """The points of the second half of the time the series covers."""
    if not points:
        return []
    middle = (points[0][0] + points[-1][0]) / 2
    return [point for point in points if point[0] >= middle]


def increase(values: Iterable[float]) -> float:
    """How much a counter grew over its readings. A counter that went down
    was reset (its process restarted, or Postgres's statistics after a crash)
    and counts from zero again, so its new reading is all growth."""
    total = 0.0
    previous: float | None = None
    for value in values:
        if previous is not None:
            total += value - previous if value >= previous else value
        previous = value
    return total


@dataclass(frozen=True, slots=True)
class Tally:
    """One kind of event reconciled: how many were acknowledged to their
    sender, found stored, never found, and stored more than once (the extra
    rows)."""

    acknowledged: int
    found: int
    missing: int
    doubled: int


def reconcile(acknowledged: Iterable[str], stored: Mapping[str, int]) -> Tally:
    """Acknowledged ids against the rows stored per id."""
    ids = set(acknowledged)
    found = sum(1 for event_id in ids if stored.get(event_id, 0) > 0)
    doubled = sum(stored[event_id] - 1 for event_id in ids if stored.get(event_id, 0) > 1)
    return Tally(acknowledged=len(ids), found=found, missing=len(ids) - found, doubled=doubled)


@dataclass
class Ledger:
    """The ids of one kind acknowledged to the engines, each with the instant
    of its acknowledgement, checked against the store while it is young.

    Retention deletes an event once it is older than its lifetime, so an
    event is looked for from `settle_s` after its acknowledgement (the
    consumers had time to write it) and given up on as missing at `give_up_s`
    (before its lifetime ends). Found is final: a row retention deletes later
    was stored.
    """

    settle_s: float
    give_up_s: float
    pending: dict[str, float] = field(default_factory=dict)
    found: int = 0
    doubled: int = 0
    missing: list[str] = field(default_factory=list)
    acknowledged: int = 0

    def __post_init__(self) -> None:
        if not 0 <= self.settle_s < self.give_up_s:
            raise ValueError(f"settle_s must be below give_up_s, got {self.settle_s} and {self.give_up_s}")

    def acknowledge(self, event_id: str, at: float) -> None:
        if event_id not in self.pending:
            self.acknowledged += 1
            self.pending[event_id] = at

    def withdraw(self, event_id: str) -> None:
        """The sender learnt after all that this id was not taken: no longer acknowledged."""
        if self.pending.pop(event_id, None) is not None:
            self.acknowledged -= 1

    def due(self, now: float, *, everything: bool = False) -> list[str]:
        """The ids to look for now: settled ones, or all when the senders have stopped and the consumers drained."""
        return [event_id for event_id, at in self.pending.items() if everything or now - at >= self.settle_s]

    def settle(self, looked_for: Sequence[str], stored: Mapping[str, int], now: float, *, final: bool = False) -> None:
        """Record what a look found: found ids leave, doubled rows are counted,
        and ids unfound past give_up_s (or at the final look) are missing."""
        for event_id in looked_for:
            at = self.pending.get(event_id)
            if at is None:
                continue
            rows = stored.get(event_id, 0)
            if rows > 0:
                self.found += 1
                self.doubled += rows - 1
                del self.pending[event_id]
            elif final or now - at >= self.give_up_s:
                self.missing.append(event_id)
                del self.pending[event_id]

    def tally(self) -> Tally:
        return Tally(acknowledged=self.acknowledged, found=self.found, missing=len(self.missing), doubled=self.doubled)


@dataclass(frozen=True, slots=True)
class Outage:
    """/readyz around one kill: seconds from the kill until it turned red,
    how long it stayed red, and from the kill until green again (None when
    it never turned red, or never green again)."""

    name: str
    red_after_s: float | None
    red_for_s: float | None
    green_after_s: float | None


def outage(name: str, killed_at: float, probes: Sequence[tuple[float, bool]], until: float | None = None) -> Outage:
    """Read the probes (instant, ready) after `killed_at` and before `until`
    (the next kill): the first not-ready one, then the first ready one after it."""
    window = [(t, ready) for t, ready in probes if t >= killed_at and (until is None or t < until)]
    red = next((t for t, ready in window if not ready), None)
    if red is None:
        return Outage(name, None, None, None)
    green = next((t for t, ready in window if ready and t > red), None)
    return Outage(
        name,
        red_after_s=red - killed_at,
        red_for_s=None if green is None else green - red,
        green_after_s=None if green is None else green - killed_at,
    )


def refusals(events: Iterable[tuple[str, str]]) -> dict[str, dict[str, int]]:
    """(door, reason) pairs counted by door, then reason."""
    by_door: dict[str, Counter[str]] = {}
    for door, reason in events:
        by_door.setdefault(door, Counter())[reason] += 1
    return {door: dict(reasons) for door, reasons in sorted(by_door.items())}
