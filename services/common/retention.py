"""Retention: rows past their lifetime are deleted in bounded batches, beside the writers.

A context that keeps tables which grow runs one RetentionJob over them. A
pass takes each table in turn and deletes the rows older than its lifetime a
batch at a time, each batch its own short transaction selected by an indexed
time column, with a pause between batches. One DELETE of a month of rows
would hold its row locks and its WAL for the whole statement and stall the
ingest writing next to it; small batches let the writers' commits through
between ours. Several replicas run the job side by side: the stores select
with `skip locked`, so two passes share a backlog instead of queueing.

The job counts what it deleted per table and serves the counts on the
`Retention` gRPC service, which the gateway's /metrics reads.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

import grpc
from sqlalchemy import TextClause, text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from outrider.v1 import common_pb2, common_pb2_grpc
from services.common.runtime import Runtime
from services.common.settings import DAY_S, Settings

_log = logging.getLogger(__name__)

# Rows per batch. A batch of 2,000 deletes in a few tens of milliseconds,
# short enough that an ingest commit waiting on the WAL behind it is not
# noticed; much smaller and the per-statement cost dominates the pass.
BATCH = 2_000
# The pause after each batch: the writers get the database back for at
# least this long. bench/retention measures what it leaves for the ingest.
PAUSE_S = 0.05
# A pass an hour: lifetimes are counted in days, so an hour's backlog is a
# few batches, and a pass that failed is retried within the hour.
INTERVAL_S = 3_600.0
# A long pass (a first start on a big table) logs its progress this often.
PROGRESS_EVERY_S = 10.0


def days(settings: Settings, count: int) -> timedelta:
    """`count` days of retention, each OUTRIDER_RETENTION_DAY_S long."""
    return timedelta(seconds=count * settings.retention_day_s)


def interval_s(settings: Settings) -> float:
    """Seconds between passes: an hour of the retention day, so a compressed
    day is pruned as often, for its length, as a real one."""
    return INTERVAL_S * settings.retention_day_s / DAY_S


def oldest_first(table: str, column: str) -> TextClause:
    """One batch's delete: up to :limit rows of `table` whose `column` is before
    :before, oldest first.

    The rows are found through the index on `column` and deleted by their
    physical address, without a second walk of the primary key; skip locked
    lets two replicas prune side by side without queueing on each other.
    `table` and `column` are a store's own names, never a caller's.
    """
    return text(
        f"delete from {table} where ctid = any(array("
        f"select ctid from {table} where {column} < :before order by {column} limit :limit for update skip locked))"
    )


class Prune(Protocol):
    """Delete up to `limit` rows older than `before` in the caller's transaction; how many went."""

    async def __call__(self, conn: AsyncConnection, *, before: datetime, limit: int) -> int: ...


@dataclass(frozen=True, slots=True)
class Lifetime:
    """A table under retention: its name as counted, how long its rows are kept, and its store's delete."""

    table: str
    keep: timedelta
    prune: Prune

    def __post_init__(self) -> None:
        if self.keep <= timedelta(0):
            raise ValueError(f"{self.table}: a lifetime must be positive, got {self.keep}")

    def cutoff(self, now: datetime) -> datetime:
        """Rows older than this instant are past their lifetime."""
        return now - self.keep


def _now() -> datetime:
    return datetime.now(UTC)


class RetentionJob:
    """Deletes what is past each table's lifetime, now and every interval."""

    def __init__(
        self,
        engine: AsyncEngine,
        lifetimes: Sequence[Lifetime],
        *,
        batch: int = BATCH,
        pause_s: float = PAUSE_S,
        interval_s: float = INTERVAL_S,
        clock: Callable[[], datetime] = _now,
    ) -> None:
        if batch < 1:
            raise ValueError(f"batch must be at least 1, got {batch}")
        self._engine = engine
        self.lifetimes = tuple(lifetimes)
        self._batch = batch
        self._pause_s = pause_s
        self._interval_s = interval_s
        self._clock = clock
        self.deleted = {lifetime.table: 0 for lifetime in self.lifetimes}
        self.failed_passes = 0

    async def prune(self) -> dict[str, int]:
        """One pass: every table down to its cutoff. Returns the rows deleted per table."""
        now = self._clock()
        return {lifetime.table: await self._prune_table(lifetime, lifetime.cutoff(now)) for lifetime in self.lifetimes}

    async def _prune_table(self, lifetime: Lifetime, before: datetime) -> int:
        started = last_report = time.monotonic()
        removed = batches = 0
        while True:
            async with self._engine.begin() as conn:
                deleted = await lifetime.prune(conn, before=before, limit=self._batch)
            removed += deleted
            batches += 1
            # Counted as each batch commits, so /metrics shows a long pass moving.
            self.deleted[lifetime.table] += deleted
            if deleted < self._batch:
                break
            if time.monotonic() - last_report >= PROGRESS_EVERY_S:
                last_report = time.monotonic()
                _log.info(
                    "retention pass under way",
                    extra={"table": lifetime.table, "deleted": removed, "batches": batches, "before": before},
                )
            await asyncio.sleep(self._pause_s)
        if removed:
            _log.info(
                "retention pass done",
                extra={
                    "table": lifetime.table,
                    "deleted": removed,
                    "batches": batches,
                    "seconds": round(time.monotonic() - started, 3),
                    "before": before,
                },
            )
        return removed

    async def run(self) -> None:
        """Prune now, then every interval, until cancelled."""
        while True:
            try:
                await self.prune()
            except asyncio.CancelledError:
                raise
            except Exception as error:  # noqa: BLE001 - a database blip must not end retention; the next pass retries
                self.failed_passes += 1
                _log.warning(
                    "retention pass failed; retried at the next interval",
                    extra={"error": f"{type(error).__name__}: {error}"[:300], "interval_s": self._interval_s},
                )
            await asyncio.sleep(self._interval_s)

    def report(self) -> common_pb2.RetentionReport:
        return common_pb2.RetentionReport(
            tables=[
                common_pb2.TableRetention(
                    table=lifetime.table,
                    keep_seconds=int(lifetime.keep.total_seconds()),
                    deleted=self.deleted[lifetime.table],
                )
                for lifetime in self.lifetimes
            ],
            failed_passes=self.failed_passes,
        )


SERVICE_NAME = common_pb2.DESCRIPTOR.services_by_name["Retention"].full_name


class RetentionService(common_pb2_grpc.RetentionServicer):
    """The job's counts over gRPC, for /metrics."""

    def __init__(self, job: RetentionJob) -> None:
        self._job = job

    async def GetRetention(
        self, request: common_pb2.GetRetentionRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> common_pb2.RetentionReport:
        return self._job.report()


def start(server: grpc.aio.Server, runtime: Runtime, lifetimes: Sequence[Lifetime]) -> RetentionJob:
    """Run the context's retention job for the life of the process and serve its counts.

    Spawned through the runtime, so a job that dies turns the context's
    liveness NOT_SERVING instead of leaving the tables to grow unseen.
    """
    job = RetentionJob(runtime.engine, lifetimes, interval_s=interval_s(runtime.settings))
    runtime.spawn(job.run(), name="retention")
    common_pb2_grpc.add_RetentionServicer_to_server(RetentionService(job), server)
    return job
