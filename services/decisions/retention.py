"""Retention: decisions older than AGENT_DECISION_RETENTION_DAYS are pruned.

Old precedent is the point of this table, so it is kept long (180 days by
default), but not forever. Pruning runs in small transactions: one DELETE of
months of rows would hold its locks and its WAL for the whole run and stall
the records and outcome updates arriving meanwhile.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from sqlalchemy.ext.asyncio import AsyncEngine

from services.decisions import store

_log = logging.getLogger(__name__)

BATCH = 1000
INTERVAL_S = 3600.0


def cutoff(now: datetime, retention_days: int, day: timedelta = timedelta(days=1)) -> datetime:
    """Decisions made before this instant are past retention (days of `day`'s length)."""
    if retention_days <= 0:
        raise ValueError(f"retention_days must be positive, got {retention_days}")
    return now - retention_days * day


async def prune(engine: AsyncEngine, *, before: datetime, batch: int = BATCH) -> int:
    """Delete every decision made before `before`, one batch per transaction."""
    removed = 0
    while True:
        async with engine.begin() as conn:
            deleted = await store.prune_before(conn, before=before, batch=batch)
        removed += deleted
        if deleted < batch:
            return removed


def _now() -> datetime:
    return datetime.now(UTC)


async def run(
    engine: AsyncEngine,
    *,
    retention_days: int,
    day: timedelta = timedelta(days=1),
    interval_s: float = INTERVAL_S,
    clock: Callable[[], datetime] = _now,
) -> None:
    """Prune now, then every `interval_s`, until cancelled."""
    while True:
        try:
            removed = await prune(engine, before=cutoff(clock(), retention_days, day))
            if removed:
                _log.info("pruned decisions", extra={"removed": removed, "retention_days": retention_days})
        except asyncio.CancelledError:
            raise
        except Exception:  # noqa: BLE001 - a database blip must not end retention; the next run retries
            _log.exception("decision retention run failed")
        await asyncio.sleep(interval_s)
