"""Retention: runs and model calls older than 30 days are pruned, a small batch at a time."""

from __future__ import annotations

import asyncio
import logging

from sqlalchemy.ext.asyncio import AsyncEngine

from services.telemetry import rules, store

_log = logging.getLogger(__name__)

BATCH = 5_000
INTERVAL_S = 3_600.0


async def prune(engine: AsyncEngine, *, batch: int = BATCH) -> int:
    """Delete every run and model call past retention, one committed batch
    after another; returns how many rows went."""
    total = 0
    for prune_table in (store.prune_runs, store.prune_model_calls):
        while True:
            async with engine.begin() as conn:
                deleted = await prune_table(conn, older_than_days=rules.RETENTION_DAYS, limit=batch)
            total += deleted
            if deleted < batch:
                break
            # Yield between batches so the ingest's writes interleave with ours.
            await asyncio.sleep(0)
    return total


async def run(engine: AsyncEngine, *, interval_s: float = INTERVAL_S) -> None:
    """Prune at start and then every interval, until cancelled."""
    while True:
        try:
            pruned = await prune(engine)
            if pruned:
                _log.info("pruned telemetry rows", extra={"rows": pruned, "older_than_days": rules.RETENTION_DAYS})
        except Exception as error:  # noqa: BLE001 - a failed prune is retried next interval
            _log.warning("telemetry retention failed", extra={"error": f"{type(error).__name__}: {error}"[:300]})
        await asyncio.sleep(interval_s)
