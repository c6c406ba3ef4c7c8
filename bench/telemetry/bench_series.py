"""The run series over a month of runs and model calls: what each window's
read costs, and whether Postgres reads only the window through an index;
then the series as the service reads it, keeping ended buckets, beside the
same series computed from the runs.

    python -m bench.telemetry.bench_series                      # 1,000,000 runs, 50 reads per window
    python -m bench.telemetry.bench_series --runs 20000 --reads 5    # smoke

Starts its own embedded Postgres in a temporary directory, migrates the
telemetry schema and fills `runs` with --runs rows spread over 60 days (24
agents, one run in 11 failed) and `model_calls` with two calls in each run of
one agent in six, one call in five without usage. Then for the 1, 7 and 30
day windows it reads the series through the store's own statements
(run_counts with its percentiles, call_counts) --reads times, and the run
counts without percentiles beside them, and prints each read's median and
p95 in milliseconds and the scans Postgres chose. Last, for each window,
insights.run_series itself: its first read (computing and keeping every
ended bucket), its later reads, and reads each after a late run written
into an ended bucket, beside the whole window computed from the runs.
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import random
import statistics
import tempfile
import time
from collections.abc import Awaitable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from services.common.db import context_engine
from services.telemetry import insights, rules, store
from tests.harness import create_database, embedded_stack

DATABASE = "telemetry_series_bench"
AGENTS = 24
SPAN_SECONDS = 60 * 86400

_FILL_RUNS = """
insert into runs (agent_id, task_id, task_type, status, started_at, finished_at, duration_ms, error, received_at)
select 'AGENT_' || lpad((g % :agents)::text, 2, '0'),
       'task-' || g,
       'stall_response',
       case when g % 11 = 0 then 'failed' else 'succeeded' end,
       now() - make_interval(secs => g * cast(:span as double precision) / :runs),
       now() - make_interval(secs => g * cast(:span as double precision) / :runs)
             + make_interval(secs => (40 + g * 37 % 4000) / 1000.0),
       40 + g * 37 % 4000,
       case when g % 11 = 0 then 'rider unreachable' end,
       now()
  from generate_series(1, :runs) as g
"""
_FILL_CALLS = """
insert into model_calls (trace_id, span_id, agent_id, operation, request_model, input_tokens, output_tokens,
                         status, started_at, duration_ms)
select md5(r.task_id), lpad(to_hex(c), 16, '0'), r.agent_id, 'chat',
       case when c = 1 then 'claude-sonnet-4-5' else 'claude-haiku-4-5' end,
       case when hashtext(r.task_id) % 5 = 0 then null else 1200 end,
       case when hashtext(r.task_id) % 5 = 0 then null else 80 end,
       'succeeded', r.started_at + make_interval(secs => c * 0.01), 10
  from runs r, generate_series(1, 2) as c
 where right(r.agent_id, 2)::int % 6 = 0
"""

_RUN_COUNTS = "run_counts"
_CALL_COUNTS = "call_counts"
# The series' run read before it carried percentiles: what they add.
_COUNTS_ONLY = """
select agent_id,
       floor(extract(epoch from started_at - :start) / :width)::int as bucket,
       count(*) as runs,
       count(*) filter (where status = 'failed') as failures
  from runs
 where started_at >= :start and started_at < :end
 group by 1, 2
"""


def _nodes(plan: dict[str, Any]) -> list[dict[str, Any]]:
    found = [plan]
    for child in plan.get("Plans", []):
        found.extend(_nodes(child))
    return found


async def plan_of(conn: AsyncConnection, statement: str, params: dict[str, Any]) -> str:
    raw = await conn.scalar(text("explain (format json) " + statement), params)
    scans = [
        f"{node['Node Type']} on {node.get('Index Name', node.get('Relation Name'))}"
        for node in _nodes(raw[0]["Plan"])
        if "Scan" in node["Node Type"]
    ]
    return "; ".join(scans)


def _statement(name: str) -> str:
    """The SQL text a store read runs, taken from the store's own source so
    the plan is of the statement the service sends."""
    source = inspect.getsource(getattr(store, name))
    return source.split('"""', 3)[3].split('"""')[0]


async def bench(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="outrider-bench-") as tmp, embedded_stack(Path(tmp)) as embedded:
        url = await create_database(embedded, DATABASE, migrated=["telemetry"])
        engine = context_engine(url, "telemetry")
        try:
            began = time.perf_counter()
            async with engine.begin() as conn:
                await conn.execute(text(_FILL_RUNS), {"runs": args.runs, "agents": AGENTS, "span": float(SPAN_SECONDS)})
                await conn.execute(text(_FILL_CALLS))
            async with engine.connect() as conn:
                await conn.execution_options(isolation_level="AUTOCOMMIT")
                await conn.execute(text("vacuum analyze runs"))
                await conn.execute(text("vacuum analyze model_calls"))
                calls = await conn.scalar(text("select count(*) from model_calls"))
            took_s = time.perf_counter() - began
            print(f"filled {args.runs:,} runs over 60 days and {calls:,} model calls in {took_s:.0f}s")
            print("| window | runs in it | read | median ms | p95 ms | plan |")
            print("|---|---|---|---|---|---|")
            async with engine.connect() as conn:
                for days in (1, 7, 30):
                    window = rules.series_window(rules.AskedWindow(days=days).span(await store.database_now(conn)))
                    params = {
                        "origin": window.start,
                        "start": window.start,
                        "end": window.end,
                        "width": window.bucket_seconds,
                    }
                    held = await conn.scalar(
                        text("select count(*) from runs where started_at >= :start and started_at < :end"), params
                    )
                    for name in (_RUN_COUNTS, "counts only", _CALL_COUNTS):
                        statement = _COUNTS_ONLY if name == "counts only" else _statement(name)
                        took = []
                        for _ in range(args.reads):
                            start = time.perf_counter()
                            (await conn.execute(text(statement), params)).all()
                            took.append((time.perf_counter() - start) * 1000)
                        took.sort()
                        plan = await plan_of(conn, statement, params)
                        print(
                            f"| {days} d | {held:,} | {name} | {statistics.median(took):.1f} | "
                            f"{took[int(0.95 * (len(took) - 1))]:.1f} | {plan} |"
                        )
            await kept_reads(engine, args.reads)
        finally:
            await engine.dispose()


async def _timed_ms(read: Awaitable[object]) -> float:
    start = time.perf_counter()
    await read
    return (time.perf_counter() - start) * 1000


async def computed_series(engine: AsyncEngine, days: int) -> rules.SeriesReport:
    """The whole window from the runs and calls, as the series was read
    before ended buckets were kept."""
    async with engine.connect() as conn:
        window = rules.series_window(rules.AskedWindow(days=days).span(await store.database_now(conn)))
        origin, end, width = window.start, window.end, window.bucket_seconds
        runs = await store.run_counts(conn, origin=origin, start=origin, end=end, bucket_seconds=width)
        calls = await store.call_counts(conn, origin=origin, start=origin, end=end, bucket_seconds=width)
    return rules.SeriesReport(window, rules.dense_series(window, runs), rules.usage_series(window, calls, {}))


async def late_run(engine: AsyncEngine, window: rules.SeriesWindow, n: int) -> None:
    """One run reported late into a random ended bucket of the window."""
    started = random.Random(n).choice(rules.ended_buckets(window, datetime.now(UTC))) + timedelta(seconds=1)
    run = rules.TaskRun("AGENT_00", f"late-{n}", "stall_response", "succeeded", started, started, 40.0)
    async with engine.begin() as conn:
        await store.insert_runs(conn, runs=[run])


async def kept_reads(engine: AsyncEngine, reads: int) -> None:
    print()
    print(
        "| window | computed from the runs, median ms | first read, keeping, ms | kept, median ms "
        "| after a late run, median ms | computed ÷ kept | answer |"
    )
    print("|---|---|---|---|---|---|---|")
    late = 0
    for days in (1, 7, 30):
        series = insights.run_series(engine, asked=rules.AskedWindow(days=days), prices={})
        first = await _timed_ms(series)
        async with engine.connect() as conn:
            window = rules.series_window(rules.AskedWindow(days=days).span(await store.database_now(conn)))
        # Interleaved, so the machine's other work weighs on all three alike.
        computed, kept, after_late = [], [], []
        for _ in range(reads):
            computed.append(await _timed_ms(computed_series(engine, days)))
            kept.append(await _timed_ms(insights.run_series(engine, asked=rules.AskedWindow(days=days), prices={})))
            late += 1
            await late_run(engine, window, late)
            after_late.append(
                await _timed_ms(insights.run_series(engine, asked=rules.AskedWindow(days=days), prices={}))
            )
        served, computed_now = (
            await insights.run_series(engine, asked=rules.AskedWindow(days=days), prices={}),
            await computed_series(engine, days),
        )
        same = (
            "same"
            if served == computed_now
            else "DIFFERENT"
            if served.window == computed_now.window
            else "(hour turned)"
        )
        print(
            f"| {days} d | {statistics.median(computed):.1f} | {first:.1f} | {statistics.median(kept):.1f} "
            f"| {statistics.median(after_late):.1f} | {statistics.median(computed) / statistics.median(kept):.1f}× "
            f"| {same} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=1_000_000)
    parser.add_argument("--reads", type=int, default=50)
    asyncio.run(bench(parser.parse_args()))


if __name__ == "__main__":
    main()
