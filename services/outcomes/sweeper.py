"""The sweep: judge every pending decision old enough to judge, in batches.

Decisions are read and judged only through the decisions context's API:
ListPending pages through pending decisions oldest first, and SetOutcomes
writes verdicts only onto decisions that are still pending, answering with
the ids it judged. Two replicas sweeping at once therefore never judge one
decision twice, and each counts only the ids its own call judged.

A sweep walks every page rather than stopping after one batch. Pending
decisions still inside their window (a booking in flight) stay pending and
sort first; a sweep capped at one batch would rescan those same oldest rows
every time and starve younger decisions that are ready to judge.

What each decision's verdict is, and how large a page may be, is decided by
the rules in `services.outcomes.rules.sweep`; this module moves the pages.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Protocol

from sqlalchemy.ext.asyncio import AsyncEngine

from services.outcomes import store
from services.outcomes.rules.judging import MIN_DECISION_AGE, SWEEP_BATCH
from services.outcomes.rules.sweep import PendingDecision, SweepReport, Verdict, judge_batch

_log = logging.getLogger(__name__)

# Verdict batches being written at once by one sweep. One more than one lets
# the decisions context work on a batch while the database commits another.
WRITES_IN_FLIGHT = 2


class DecisionsApi(Protocol):
    """The two calls of the decisions context a sweep needs."""

    async def list_pending(self, *, before: datetime, cursor: str, limit: int) -> tuple[list[PendingDecision], str]:
        """One page of pending decisions decided before `before`, and the next cursor ("" at the end)."""

    async def set_outcomes(self, verdicts: Sequence[Verdict]) -> set[str]:
        """Write verdicts onto still-pending decisions, as the sweeper's; the ids actually judged."""


class Sweeper:
    def __init__(
        self,
        *,
        engine: AsyncEngine,
        decisions: DecisionsApi,
        window: timedelta,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        writes_in_flight: int = WRITES_IN_FLIGHT,
        after_sweep: Callable[[], None] | None = None,
    ) -> None:
        self._writes_in_flight = writes_in_flight
        # Told when a sweep has finished (the rollout guard's wake-up); it
        # must return at once, so the sweep never waits on what follows it.
        self._after_sweep = after_sweep
        self._engine = engine
        self._decisions = decisions
        self._window = window
        self._clock = clock

    async def _page(self, *, before: datetime, cursor: str, limit: int) -> tuple[list[PendingDecision], str]:
        return await self._decisions.list_pending(before=before, cursor=cursor, limit=limit)

    async def _apply(self, verdicts: list[Verdict]) -> list[Verdict]:
        """Write verdicts; only those the decisions context accepted come back."""
        if not verdicts:
            return []
        judged = await self._decisions.set_outcomes(verdicts)
        return [v for v in verdicts if v.decision_id in judged]

    async def sweep(self, *, batch: int = SWEEP_BATCH) -> SweepReport:
        """One full pass over the pending decisions older than the minimum age.

        Reading, judging and writing overlap: the next page is read while
        this one is judged, and up to WRITES_IN_FLIGHT batches of verdicts
        are being written meanwhile. The keyset cursor does not depend on any
        write, and batches hold distinct decisions, so the overlap changes no
        verdict; it only keeps both databases and both processes busy at once.
        """
        now = self._clock()
        before = now - MIN_DECISION_AGE
        report = SweepReport()
        listing: asyncio.Task[tuple[list[PendingDecision], str]] | None = asyncio.create_task(
            self._page(before=before, cursor="", limit=batch)
        )
        writing: deque[asyncio.Task[list[Verdict]]] = deque()
        try:
            while listing is not None:
                decisions, cursor = await listing
                listing = (
                    asyncio.create_task(self._page(before=before, cursor=cursor, limit=batch))
                    if cursor and decisions
                    else None
                )
                report.scanned += len(decisions)
                async with self._engine.connect() as conn:
                    facts = await store.list_fact_values(conn, subject_ids=[d.subject_id for d in decisions])
                verdicts = judge_batch(decisions, facts, now=now, window=self._window)
                if len(writing) >= self._writes_in_flight:
                    self._count(report, await writing.popleft())
                writing.append(asyncio.create_task(self._apply(verdicts)))
            while writing:
                self._count(report, await writing.popleft())
        finally:
            for task in (listing, *writing):
                if task is not None and not task.done():
                    task.cancel()
        _log.info(
            "sweep finished",
            extra={"judged": report.judged, "scanned": report.scanned, "by_outcome": report.as_counts()},
        )
        if self._after_sweep is not None:
            self._after_sweep()
        return report

    @staticmethod
    def _count(report: SweepReport, judged: list[Verdict]) -> None:
        report.judged += len(judged)
        report.by_outcome.update(v.outcome for v in judged)


async def run_on_timer(sweep: Callable[[], Awaitable[SweepReport]], *, interval_s: float) -> None:
    """Sweep every interval until cancelled; a failed sweep is logged, not fatal.

    The first sweep waits one interval: a replica restarting in a crash loop
    must not hammer the decisions context with a sweep per restart.
    """
    while True:
        await asyncio.sleep(interval_s)
        try:
            await sweep()
        except asyncio.CancelledError:
            raise
        except Exception:  # noqa: BLE001 - the next tick retries; the timer must outlive one bad sweep
            _log.exception("sweep failed; retrying at the next interval")
