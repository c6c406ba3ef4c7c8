"""Telemetry SQL. Functions take an open connection so the caller decides the
transaction: the ingest acks a batch only after the transaction that wrote it
has committed."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import TextClause, text
from sqlalchemy.ext.asyncio import AsyncConnection

from services.common.retention import oldest_first
from services.telemetry.rules import (
    SLOWEST,
    BucketCalls,
    BucketRuns,
    ModelCall,
    ModelStats,
    RunListing,
    RunStats,
    SlowRunKey,
    TaskRun,
    buckets_holding,
)

# One statement per batch, whatever its size: the rows travel as eight arrays
# and unnest turns them back into rows. A statement per row would pay a round
# trip per run and cap ingest far below what the stream delivers.
# A batch that wrote anything new clears the kept marks of the series
# buckets it lands in, in the same statement (see _SERIES_LOCK).
_STALE_SERIES = """
    stale as (
        delete from series_buckets s
         using unnest(cast(:stale_widths as integer[]), cast(:stale_starts as timestamptz[])) as b(width, start)
         where s.bucket_seconds = b.width and s.bucket_start = b.start and exists (select from inserted)
    )
    select count(*) from inserted
"""
_INSERT_RUNS = text(
    """
    with inserted as (
        insert into runs (agent_id, task_id, task_type, status, started_at, finished_at, duration_ms, error)
        select * from unnest(
            cast(:agent_ids as text[]), cast(:task_ids as text[]), cast(:task_types as text[]),
            cast(:statuses as text[]), cast(:started as timestamptz[]), cast(:finished as timestamptz[]),
            cast(:durations as double precision[]), cast(:errors as text[])
        )
        on conflict (agent_id, task_id) do nothing
        returning 1
    ),
    """
    + _STALE_SERIES
)


async def insert_runs(conn: AsyncConnection, *, runs: Sequence[TaskRun]) -> int:
    """Write the runs not written before; returns how many were new."""
    if not runs:
        return 0
    await _share_series_lock(conn)
    widths, starts = buckets_holding(r.started_at for r in runs)
    new: int = await conn.scalar(
        _INSERT_RUNS,
        {
            "stale_widths": widths,
            "stale_starts": starts,
            "agent_ids": [r.agent_id for r in runs],
            "task_ids": [r.task_id for r in runs],
            "task_types": [r.task_type for r in runs],
            "statuses": [r.status for r in runs],
            "started": [r.started_at for r in runs],
            "finished": [r.finished_at for r in runs],
            "durations": [r.duration_ms for r in runs],
            "errors": [r.error for r in runs],
        },
    )
    return new


_INSERT_MODEL_CALLS = text(
    """
    with inserted as (
        insert into model_calls (trace_id, span_id, agent_id, operation, provider, request_model, response_model,
                                 input_tokens, output_tokens, status, error_type, started_at, duration_ms)
        select * from unnest(
            cast(:trace_ids as text[]), cast(:span_ids as text[]), cast(:agent_ids as text[]),
            cast(:operations as text[]), cast(:providers as text[]), cast(:request_models as text[]),
            cast(:response_models as text[]), cast(:input_tokens as bigint[]), cast(:output_tokens as bigint[]),
            cast(:statuses as text[]), cast(:error_types as text[]), cast(:started as timestamptz[]),
            cast(:durations as double precision[])
        )
        on conflict (trace_id, span_id) do nothing
        returning 1
    ),
    """
    + _STALE_SERIES
)


async def insert_model_calls(conn: AsyncConnection, *, calls: Sequence[ModelCall]) -> int:
    """Write the model calls not written before; returns how many were new."""
    if not calls:
        return 0
    await _share_series_lock(conn)
    widths, starts = buckets_holding(c.started_at for c in calls)
    new: int = await conn.scalar(
        _INSERT_MODEL_CALLS,
        {
            "stale_widths": widths,
            "stale_starts": starts,
            "trace_ids": [c.trace_id for c in calls],
            "span_ids": [c.span_id for c in calls],
            "agent_ids": [c.agent_id for c in calls],
            "operations": [c.operation for c in calls],
            "providers": [c.provider for c in calls],
            "request_models": [c.request_model for c in calls],
            "response_models": [c.response_model for c in calls],
            "input_tokens": [c.input_tokens for c in calls],
            "output_tokens": [c.output_tokens for c in calls],
            "statuses": [c.status for c in calls],
            "error_types": [c.error_type for c in calls],
            "started": [c.started_at for c in calls],
            "durations": [c.duration_ms for c in calls],
        },
    )
    return new


async def run_agents(conn: AsyncConnection, *, days: int) -> list[str]:
    """The agents that started a run in the last `days` days, sorted.

    A recursive skip through runs_agent_newest: each step finds the next
    agent above the last with one probe and asks the same index whether it
    ran in the window, so a million runs of a dozen agents cost a few dozen
    probes, not a million rows.
    """
    rows = await conn.execute(
        text(
            """
            with recursive seen(agent_id) as (
                (select agent_id from runs order by agent_id limit 1)
                union all
                select (select agent_id from runs where agent_id > seen.agent_id order by agent_id limit 1)
                  from seen where seen.agent_id is not null
            )
            select agent_id from seen
             where agent_id is not null
               and exists (
                   select 1 from runs r
                    where r.agent_id = seen.agent_id and r.started_at >= now() - make_interval(days => :days)
               )
             order by agent_id
            """
        ),
        {"days": days},
    )
    return [row.agent_id for row in rows]


async def model_stats(conn: AsyncConnection, *, start: datetime, end: datetime | None) -> list[ModelStats]:
    """Per agent and model, the calls that started in [start, end); no end
    takes every call since start, one stamped a little ahead by its engine's
    clock included.

    The model is the one that answered, else the one asked for: a request for
    an alias is billed as the model behind it.
    """
    rows = await conn.execute(
        text(
            """
            select agent_id,
                   coalesce(response_model, request_model, '') as model,
                   coalesce(max(provider), '') as provider,
                   count(*) as calls,
                   count(*) filter (where status = 'failed') as failures,
                   coalesce(sum(input_tokens), 0) as input_tokens,
                   coalesce(sum(output_tokens), 0) as output_tokens,
                   avg(duration_ms) as avg_ms,
                   percentile_cont(0.95) within group (order by duration_ms) as p95_ms
              from model_calls
             where started_at >= :start and (cast(:end as timestamptz) is null or started_at < :end)
             group by 1, 2
             order by 1, 2
            """
        ),
        {"start": start, "end": end},
    )
    return [
        ModelStats(
            agent_id=row.agent_id,
            model=row.model,
            provider=row.provider,
            calls=row.calls,
            failures=row.failures,
            input_tokens=int(row.input_tokens),
            output_tokens=int(row.output_tokens),
            avg_ms=float(row.avg_ms),
            p95_ms=float(row.p95_ms),
        )
        for row in rows
    ]


async def run_stats(conn: AsyncConnection, *, start: datetime, end: datetime | None) -> list[RunStats]:
    """Per-agent figures over the runs that started in [start, end) (no end:
    every run since start); an agent's last run is its latest start."""
    rows = await conn.execute(
        text(
            """
            select agent_id,
                   count(*) as runs,
                   count(*) filter (where status = 'failed') as failures,
                   avg(duration_ms) as avg_ms,
                   percentile_cont(0.95) within group (order by duration_ms) as p95_ms,
                   max(started_at) as last_run_at
              from runs
             where started_at >= :start and (cast(:end as timestamptz) is null or started_at < :end)
             group by agent_id
             order by agent_id
            """
        ),
        {"start": start, "end": end},
    )
    return [
        RunStats(
            agent_id=row.agent_id,
            runs=row.runs,
            failures=row.failures,
            avg_ms=float(row.avg_ms),
            p95_ms=float(row.p95_ms),
            last_run_at=row.last_run_at,
        )
        for row in rows
    ]


async def database_now(conn: AsyncConnection) -> datetime:
    now: datetime = await conn.scalar(text("select now()"))
    return now


async def run_counts(
    conn: AsyncConnection, *, origin: datetime, start: datetime, end: datetime, bucket_seconds: int
) -> list[BucketRuns]:
    """Runs, failures and duration percentiles per agent for each bucket that
    had runs between `start` and `end`, each run in the bucket it started in;
    buckets are numbered from `origin`, the window's first."""
    rows = await conn.execute(
        text(
            """
            -- Both percentiles from one aggregate: one sort per bucket, not two.
            select agent_id,
                   floor(extract(epoch from started_at - :origin) / :width)::int as bucket,
                   count(*) as runs,
                   count(*) filter (where status = 'failed') as failures,
                   percentile_cont(array[0.5, 0.95]) within group (order by duration_ms) as percentiles
              from runs
             where started_at >= :start and started_at < :end
             group by 1, 2
            """
        ),
        {"origin": origin, "start": start, "end": end, "width": bucket_seconds},
    )
    return [
        BucketRuns(
            row.agent_id, row.bucket, row.runs, row.failures, float(row.percentiles[0]), float(row.percentiles[1])
        )
        for row in rows
    ]


async def call_counts(
    conn: AsyncConnection, *, origin: datetime, start: datetime, end: datetime, bucket_seconds: int
) -> list[BucketCalls]:
    """Model calls per agent and model for each bucket that had calls
    between `start` and `end`, each call in the bucket it started in, buckets
    numbered from `origin`; tokens summed over the calls that reported them."""
    rows = await conn.execute(
        text(
            """
            select agent_id,
                   coalesce(response_model, request_model, '') as model,
                   floor(extract(epoch from started_at - :origin) / :width)::int as bucket,
                   count(*) as calls,
                   count(*) filter (where input_tokens is not null or output_tokens is not null) as reported_calls,
                   coalesce(sum(input_tokens), 0) as input_tokens,
                   coalesce(sum(output_tokens), 0) as output_tokens
              from model_calls
             where started_at >= :start and started_at < :end
             group by 1, 2, 3
            """
        ),
        {"origin": origin, "start": start, "end": end, "width": bucket_seconds},
    )
    return [
        BucketCalls(
            row.agent_id,
            row.model,
            row.bucket,
            row.calls,
            row.reported_calls,
            int(row.input_tokens),
            int(row.output_tokens),
        )
        for row in rows
    ]


# Keeping an ended bucket's figures races a late write into it: a bucket
# computed before a late run commits, then marked kept after that run's
# write looked for the mark, would stay stale for good. Writers take this
# lock shared in a statement of its own, so the statement that clears marks
# sees every mark kept before, and hold it to their commit; keeping holds it
# exclusive from before it counts to its commit. So each sees the other's
# work, and writers never wait on each other.
_SERIES_LOCK = "hashtextextended('outrider.telemetry.series', 0)"


async def _share_series_lock(conn: AsyncConnection) -> None:
    await conn.execute(text(f"select pg_advisory_xact_lock_shared({_SERIES_LOCK})"))


async def kept_buckets(conn: AsyncConnection, *, bucket_seconds: int, starts: Sequence[datetime]) -> set[datetime]:
    """Which of these buckets have their figures kept."""
    rows = await conn.execute(
        text(
            """
            select bucket_start from series_buckets
             where bucket_seconds = :width and bucket_start = any(cast(:starts as timestamptz[]))
            """
        ),
        {"width": bucket_seconds, "starts": list(starts)},
    )
    return {row.bucket_start for row in rows}


async def lock_series(conn: AsyncConnection) -> None:
    """Hold off writes that would make a bucket stale until this transaction
    ends; call before reading the runs to keep."""
    await conn.execute(text(f"select pg_advisory_xact_lock({_SERIES_LOCK})"))


async def keep_buckets(
    conn: AsyncConnection,
    *,
    origin: datetime,
    bucket_seconds: int,
    starts: Sequence[datetime],
    runs: Sequence[BucketRuns],
    calls: Sequence[BucketCalls],
) -> None:
    """Keep these buckets' figures, replacing any kept before, and mark them
    kept; `runs` and `calls` are numbered from `origin` and hold every row
    of these buckets."""
    width = timedelta(seconds=bucket_seconds)
    params = {"width": bucket_seconds, "starts": list(starts)}
    for table in ("series_runs", "series_calls"):
        await conn.execute(
            text(
                f"delete from {table} where bucket_seconds = :width"
                " and bucket_start = any(cast(:starts as timestamptz[]))"
            ),
            params,
        )
    await conn.execute(
        text(
            """
            insert into series_runs (bucket_seconds, bucket_start, agent_id, runs, failures, p50_ms, p95_ms)
            select :width, * from unnest(
                cast(:bucket_starts as timestamptz[]), cast(:agent_ids as text[]), cast(:runs as integer[]),
                cast(:failures as integer[]), cast(:p50 as double precision[]), cast(:p95 as double precision[])
            )
            """
        ),
        {
            "width": bucket_seconds,
            "bucket_starts": [origin + r.bucket * width for r in runs],
            "agent_ids": [r.agent_id for r in runs],
            "runs": [r.runs for r in runs],
            "failures": [r.failures for r in runs],
            "p50": [r.p50_ms for r in runs],
            "p95": [r.p95_ms for r in runs],
        },
    )
    await conn.execute(
        text(
            """
            insert into series_calls (bucket_seconds, bucket_start, agent_id, model, calls, reported_calls,
                                      input_tokens, output_tokens)
            select :width, * from unnest(
                cast(:bucket_starts as timestamptz[]), cast(:agent_ids as text[]), cast(:models as text[]),
                cast(:calls as integer[]), cast(:reported as integer[]), cast(:input_tokens as bigint[]),
                cast(:output_tokens as bigint[])
            )
            """
        ),
        {
            "width": bucket_seconds,
            "bucket_starts": [origin + c.bucket * width for c in calls],
            "agent_ids": [c.agent_id for c in calls],
            "models": [c.model for c in calls],
            "calls": [c.calls for c in calls],
            "reported": [c.reported_calls for c in calls],
            "input_tokens": [c.input_tokens for c in calls],
            "output_tokens": [c.output_tokens for c in calls],
        },
    )
    await conn.execute(
        text(
            """
            insert into series_buckets (bucket_seconds, bucket_start)
            select :width, unnest(cast(:starts as timestamptz[]))
            on conflict do nothing
            """
        ),
        params,
    )


async def kept_run_counts(
    conn: AsyncConnection, *, origin: datetime, start: datetime, end: datetime, bucket_seconds: int
) -> list[BucketRuns]:
    """run_counts' answer for kept buckets starting between `start` and `end`."""
    rows = await conn.execute(
        text(
            """
            select agent_id, floor(extract(epoch from bucket_start - :origin) / :width)::int as bucket,
                   runs, failures, p50_ms, p95_ms
              from series_runs
             where bucket_seconds = :width and bucket_start >= :start and bucket_start < :end
            """
        ),
        {"origin": origin, "start": start, "end": end, "width": bucket_seconds},
    )
    return [BucketRuns(r.agent_id, r.bucket, r.runs, r.failures, r.p50_ms, r.p95_ms) for r in rows]


async def kept_call_counts(
    conn: AsyncConnection, *, origin: datetime, start: datetime, end: datetime, bucket_seconds: int
) -> list[BucketCalls]:
    """call_counts' answer for kept buckets starting between `start` and `end`."""
    rows = await conn.execute(
        text(
            """
            select agent_id, model, floor(extract(epoch from bucket_start - :origin) / :width)::int as bucket,
                   calls, reported_calls, input_tokens, output_tokens
              from series_calls
             where bucket_seconds = :width and bucket_start >= :start and bucket_start < :end
            """
        ),
        {"origin": origin, "start": start, "end": end, "width": bucket_seconds},
    )
    return [
        BucketCalls(r.agent_id, r.model, r.bucket, r.calls, r.reported_calls, r.input_tokens, r.output_tokens)
        for r in rows
    ]


async def last_received(conn: AsyncConnection) -> tuple[datetime | None, datetime]:
    """When the newest run arrived, and the database's now, read together so
    the comparison uses one clock."""
    row = (await conn.execute(text("select max(received_at) as last, now() as now from runs"))).one()
    return row.last, row.now


_RUN_COLUMNS = "agent_id, task_id, task_type, status, started_at, finished_at, duration_ms, error"


def _run(row: Any) -> TaskRun:
    return TaskRun(
        agent_id=row.agent_id,
        task_id=row.task_id,
        task_type=row.task_type,
        status=row.status,
        started_at=row.started_at,
        finished_at=row.finished_at,
        duration_ms=row.duration_ms,
        error=row.error,
    )


def run_list_query(listing: RunListing) -> tuple[TextClause, dict[str, object]]:
    """The statement behind a page of the run list, and its parameters.

    The row comparison walks runs_newest (or runs_agent_newest for one
    agent's) backwards from the cursor, so a page costs its own rows however
    many runs lie behind it.
    """
    where = ["true"]
    params: dict[str, object] = {"limit": listing.limit + 1}
    for column in ("agent_id", "status", "task_type"):
        value = getattr(listing, column)
        if value is not None:
            where.append(f"{column} = :{column}")
            params[column] = value
    if listing.started_from is not None:
        where.append("started_at >= :started_from")
        params["started_from"] = listing.started_from
    if listing.started_to is not None:
        where.append("started_at < :started_to")
        params["started_to"] = listing.started_to
    if isinstance(listing.after, SlowRunKey):
        params.update(
            after_ms=listing.after.duration_ms, after_agent=listing.after.agent_id, after_task=listing.after.task_id
        )
        where.append("(duration_ms, agent_id, task_id) < (:after_ms, :after_agent, :after_task)")
    elif listing.after is not None:
        params.update(after_started=listing.after.started_at, after_task=listing.after.task_id)
        if listing.after.agent_id == listing.agent_id:
            # The same order within one agent, written on runs_agent_newest's
            # own columns so the cursor is where its walk starts, not a filter.
            where.append("(started_at, task_id) < (:after_started, :after_task)")
        else:
            where.append("(started_at, agent_id, task_id) < (:after_started, :after_agent, :after_task)")
            params["after_agent"] = listing.after.agent_id
    # The slowest first has no index of its own: every run the filters select
    # is read and the longest kept (a top-N sort, by start through runs_newest
    # when a span is asked). An index on duration would cost every write.
    order = "duration_ms desc" if listing.order == SLOWEST else "started_at desc"
    statement = text(
        f"select {_RUN_COLUMNS} from runs where {' and '.join(where)}"
        f" order by {order}, agent_id desc, task_id desc limit :limit"
    )
    return statement, params


async def list_runs(conn: AsyncConnection, listing: RunListing) -> list[TaskRun]:
    """Up to limit + 1 runs after the listing's cursor, newest start first."""
    statement, params = run_list_query(listing)
    return [_run(row) for row in await conn.execute(statement, params)]


async def get_run(conn: AsyncConnection, *, agent_id: str, task_id: str) -> TaskRun | None:
    row = (
        await conn.execute(
            text(f"select {_RUN_COLUMNS} from runs where agent_id = :agent_id and task_id = :task_id"),
            {"agent_id": agent_id, "task_id": task_id},
        )
    ).one_or_none()
    return _run(row) if row is not None else None


_CALL_COLUMNS = """trace_id, span_id, agent_id, operation, provider, request_model, response_model,
                   input_tokens, output_tokens, status, error_type, started_at, duration_ms"""


def _call(row: Any) -> ModelCall:
    return ModelCall(
        trace_id=row.trace_id,
        span_id=row.span_id,
        agent_id=row.agent_id,
        operation=row.operation,
        provider=row.provider,
        request_model=row.request_model,
        response_model=row.response_model,
        input_tokens=row.input_tokens,
        output_tokens=row.output_tokens,
        status=row.status,
        error_type=row.error_type,
        started_at=row.started_at,
        duration_ms=row.duration_ms,
    )


async def trace_model_calls(conn: AsyncConnection, *, trace_id: str, limit: int) -> list[ModelCall]:
    """The first `limit` model calls of one trace, oldest first (the primary key finds them)."""
    rows = await conn.execute(
        text(
            f"select {_CALL_COLUMNS} from model_calls where trace_id = :trace_id"
            " order by started_at, span_id limit :limit"
        ),
        {"trace_id": trace_id, "limit": limit},
    )
    return [_call(row) for row in rows]


async def window_model_calls(
    conn: AsyncConnection, *, agent_id: str, start: datetime, end: datetime, limit: int
) -> list[ModelCall]:
    """The first `limit` of an agent's model calls that started in [start, end], oldest first."""
    rows = await conn.execute(
        text(
            f"select {_CALL_COLUMNS} from model_calls"
            " where agent_id = :agent_id and started_at >= :start and started_at <= :end"
            " order by started_at, span_id limit :limit"
        ),
        {"agent_id": agent_id, "start": start, "end": end, "limit": limit},
    )
    return [_call(row) for row in rows]


_PRUNE_RUNS = oldest_first("runs", "started_at")
_PRUNE_MODEL_CALLS = oldest_first("model_calls", "started_at")


async def prune_runs(conn: AsyncConnection, *, before: datetime, limit: int) -> int:
    """Delete up to `limit` runs that started before `before`, oldest first.

    A run's age is its own time, as every window reads it: a run reported a
    month late is as old as the month it ran in.
    """
    pruned: int = (await conn.execute(_PRUNE_RUNS, {"before": before, "limit": limit})).rowcount
    if pruned:
        await _forget_series_before(conn, before)
    return pruned


async def prune_model_calls(conn: AsyncConnection, *, before: datetime, limit: int) -> int:
    """Delete up to `limit` model calls that started before `before`, oldest first."""
    pruned: int = (await conn.execute(_PRUNE_MODEL_CALLS, {"before": before, "limit": limit})).rowcount
    if pruned:
        await _forget_series_before(conn, before)
    return pruned


async def _forget_series_before(conn: AsyncConnection, before: datetime) -> None:
    """Drop what was kept of buckets starting before `before`: the pruned rows
    were in them, and the bucket straddling `before` is computed again from
    what is left."""
    await _share_series_lock(conn)
    for table in ("series_buckets", "series_runs", "series_calls"):
        await conn.execute(text(f"delete from {table} where bucket_start < :before"), {"before": before})


async def ping(conn: AsyncConnection) -> None:
    """Raises unless the database answers."""
    await conn.execute(text("select 1"))
