"""The retention job's loop, with a stand-in for the database: one transaction
per batch, never more than a batch per transaction, a pause between batches,
counts per table, a failed pass counted and retried. The SQL of each table's
delete is tested against Postgres in each context's retention test."""

from __future__ import annotations

import asyncio
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from typing import Any, cast

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from gateway.codec.retention import exposition
from services.common.retention import Lifetime, RetentionJob

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


class Database:
    """Counts the transactions opened; each yields a connection stand-in."""

    def __init__(self) -> None:
        self.transactions = 0
        self.open = 0

    @asynccontextmanager
    async def begin(self) -> Any:
        self.transactions += 1
        self.open += 1
        try:
            yield object()
        finally:
            self.open -= 1


class Table:
    """Rows with an age in days; the delete takes the oldest past the cutoff, up to the limit."""

    def __init__(self, database: Database, ages_days: list[float]) -> None:
        self.database = database
        self.rows = [NOW - timedelta(days=age) for age in ages_days]
        self.batches: list[int] = []
        self.cutoffs: set[datetime] = set()

    async def prune(self, conn: object, *, before: datetime, limit: int) -> int:
        assert self.database.open == 1, "each batch runs inside its own transaction"
        self.cutoffs.add(before)
        old = sorted(row for row in self.rows if row < before)[:limit]
        for row in old:
            self.rows.remove(row)
        self.batches.append(len(old))
        return len(old)


def job(database: Database, lifetimes: list[Lifetime], **options: Any) -> RetentionJob:
    return RetentionJob(cast(AsyncEngine, database), lifetimes, clock=lambda: NOW, **options)


async def test_a_pass_deletes_past_each_lifetime_in_bounded_batches_and_counts_per_table():
    database = Database()
    runs = Table(database, [31, 32, 33, 34, 35, 36, 37, 29, 1])
    calls = Table(database, [8, 6])
    retention = job(
        database,
        [Lifetime("runs", timedelta(days=30), runs.prune), Lifetime("model_calls", timedelta(days=7), calls.prune)],
        batch=3,
        pause_s=0,
    )
    assert await retention.prune() == {"runs": 7, "model_calls": 1}
    assert runs.batches == [3, 3, 1] and calls.batches == [1]
    assert runs.cutoffs == {NOW - timedelta(days=30)} and calls.cutoffs == {NOW - timedelta(days=7)}
    assert sorted(NOW - row for row in runs.rows) == [timedelta(days=1), timedelta(days=29)]
    assert database.transactions == 4
    assert await retention.prune() == {"runs": 0, "model_calls": 0}
    assert retention.deleted == {"runs": 7, "model_calls": 1}
    report = retention.report()
    assert [(t.table, t.keep_seconds, t.deleted) for t in report.tables] == [
        ("runs", 30 * 86400, 7),
        ("model_calls", 7 * 86400, 1),
    ]


async def test_the_job_pauses_between_full_batches_only(monkeypatch):
    database = Database()
    runs = Table(database, [40] * 5)
    pauses: list[float] = []
    sleep = asyncio.sleep

    async def noted(delay: float) -> None:
        pauses.append(delay)
        await sleep(0)

    monkeypatch.setattr("services.common.retention.asyncio.sleep", noted)
    await job(database, [Lifetime("runs", timedelta(days=30), runs.prune)], batch=2, pause_s=0.25).prune()
    # Full batches of 2, 2, then 1: a pause after each full one, none after the last.
    assert runs.batches == [2, 2, 1]
    assert pauses == [0.25, 0.25]


async def test_a_failed_pass_is_counted_and_the_next_interval_tries_again():
    database = Database()
    attempts = 0
    passed = asyncio.Event()

    async def flaky(conn: object, *, before: datetime, limit: int) -> int:
        nonlocal attempts
        attempts += 1
        if attempts == 1:
            raise ConnectionResetError("the database went away")
        passed.set()
        return 0

    retention = job(database, [Lifetime("runs", timedelta(days=30), flaky)], interval_s=0)
    running = asyncio.create_task(retention.run())
    try:
        await asyncio.wait_for(passed.wait(), timeout=5)
    finally:
        running.cancel()
        with pytest.raises(asyncio.CancelledError):
            await running
    assert retention.failed_passes == 1
    assert retention.report().failed_passes == 1


def test_a_lifetime_must_be_positive():
    async def never(conn: object, *, before: datetime, limit: int) -> int:
        raise AssertionError("not called")

    with pytest.raises(ValueError, match="runs: a lifetime must be positive"):
        Lifetime("runs", timedelta(0), never)


def test_the_counts_read_as_prometheus_text_per_context_and_table():
    database = Database()

    async def none(conn: object, *, before: datetime, limit: int) -> int:
        return 0

    telemetry = job(database, [Lifetime("runs", timedelta(days=30), none)])
    telemetry.deleted["runs"] = 12
    playground = job(database, [Lifetime("run_admissions", timedelta(minutes=10), none)])
    playground.failed_passes = 2
    text = exposition({"telemetry": telemetry.report(), "playground": playground.report()})
    samples = [line for line in text.splitlines() if not line.startswith("#")]
    assert samples == [
        'outrider_retention_deleted_total{context="playground",table="run_admissions"} 0',
        'outrider_retention_deleted_total{context="telemetry",table="runs"} 12',
        'outrider_retention_keep_seconds{context="playground",table="run_admissions"} 600',
        'outrider_retention_keep_seconds{context="telemetry",table="runs"} 2592000',
        'outrider_retention_failed_passes_total{context="playground"} 2',
        'outrider_retention_failed_passes_total{context="telemetry"} 0',
    ]
    assert "# TYPE outrider_retention_deleted_total counter" in text
    assert "# TYPE outrider_retention_keep_seconds gauge" in text
