"""The run list over a million runs: what a page costs, first and deep.

    python -m bench.telemetry.bench_run_list                      # 1,000,000 runs, 200 reads per shape
    python -m bench.telemetry.bench_run_list --runs 20000 --reads 20   # smoke

Starts its own embedded Postgres in a temporary directory, migrates the
telemetry schema and fills `runs` with --runs rows spread over 30 days
(24 agents, three task types, one run in 11 failed) and `model_calls` with
three calls per run of one agent in twenty. Then, for each shape of page
the console asks for (the newest runs; one agent's; the failures; one
agent's failures; a day's range; the slowest of all, of one agent and of a
day), it reads the first page and a page deep
in the list (its cursor half way down), each --reads times through the
store's own statement (services.telemetry.store.run_list_query), and a
run's detail (get_run and its calls by trace, then by window), and the
agents that ran in 30 days (the run list's facets). It prints
each read's median and p95 in milliseconds, and the plan Postgres chose
for it: an index walked from the cursor, or rows fetched and then sorted.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from services.common.db import context_engine
from services.telemetry import rules, store
from tests.harness import create_database, embedded_stack

DATABASE = "telemetry_run_list_bench"
AGENTS = 24
PAGE = 50

_FILL_RUNS = """
insert into runs (agent_id, task_id, task_type, status, started_at, finished_at, duration_ms, error, received_at)
select 'AGENT_' || lpad((g % :agents)::text, 2, '0'),
       'task-' || g,
       (array['stall_response', 'assignment_failure', 'express_batch_dispatch'])[g % 3 + 1],
       case when g % 11 = 0 then 'failed' else 'succeeded' end,
       now() - make_interval(secs => g * 2592000.0 / :runs),
       now() - make_interval(secs => g * 2592000.0 / :runs) + make_interval(secs => (40 + g * 37 % 4000) / 1000.0),
       40 + g * 37 % 4000,
       case when g % 11 = 0 then 'rider unreachable' end,
       now()
  from generate_series(1, :runs) as g
"""
# Three calls in each run of AGENT_00 and AGENT_12's (one agent in twelve,
# every twelfth run): a trace per run, named as an OTLP run's task id names it.
_FILL_CALLS = """
insert into model_calls (trace_id, span_id, agent_id, operation, request_model, input_tokens, output_tokens,
                         status, started_at, duration_ms)
select md5(r.task_id), lpad(to_hex(c), 16, '0'), r.agent_id, 'chat', 'claude-sonnet-4-5', 1200, 80,
       'succeeded', r.started_at + make_interval(secs => c * 0.01), 10
  from runs r, generate_series(1, 3) as c
 where r.agent_id in ('AGENT_00', 'AGENT_12')
"""


def listing(limit: int = PAGE, **filters: Any) -> rules.RunListing:
    fields: dict[str, Any] = {
        "agent_id": None,
        "status": None,
        "task_type": None,
        "started_from": None,
        "started_to": None,
        "after": None,
    }
    fields.update(filters)
    return rules.RunListing(limit=limit, **fields)


async def timed(read: Callable[[], Awaitable[object]], reads: int) -> tuple[float, float]:
    """Median and p95 of `reads` reads, in milliseconds."""
    took = []
    for _ in range(reads):
        began = time.perf_counter()
        await read()
        took.append((time.perf_counter() - began) * 1000)
    took.sort()
    return statistics.median(took), took[int(0.95 * (len(took) - 1))]


def _nodes(plan: dict[str, Any]) -> list[dict[str, Any]]:
    found = [plan]
    for child in plan.get("Plans", []):
        found.extend(_nodes(child))
    return found


async def plan_of(conn: AsyncConnection, page: rules.RunListing) -> str:
    """The plan's nodes in words, "sorted" when Postgres sorts rather than walks an index."""
    statement, params = store.run_list_query(page)
    raw = await conn.scalar(text("explain (format json) " + statement.text), params)
    nodes = _nodes(raw[0]["Plan"])
    kinds = [node["Node Type"] for node in nodes]
    scans = [
        f"{node['Node Type']} {node.get('Scan Direction', '')} on {node.get('Index Name', node.get('Relation Name'))}"
        for node in nodes
        if "Scan" in node["Node Type"]
    ]
    sorted_ = " after a sort" if "Sort" in kinds or "Incremental Sort" in kinds else ""
    return "; ".join(scans) + sorted_


async def middle_key(conn: AsyncConnection, page: rules.RunListing, total: int) -> rules.RunKey | rules.SlowRunKey:
    """The key half way down a listing: where a deep page's cursor points."""
    statement, params = store.run_list_query(listing(limit=total // 2, **_filters(page)))
    rows = (await conn.execute(statement, params)).all()
    row = rows[-1]
    if page.order == rules.SLOWEST:
        return rules.SlowRunKey(row.duration_ms, row.agent_id, row.task_id)
    return rules.RunKey(row.started_at, row.agent_id, row.task_id)


def _filters(page: rules.RunListing) -> dict[str, Any]:
    return {
        "agent_id": page.agent_id,
        "status": page.status,
        "task_type": page.task_type,
        "started_from": page.started_from,
        "started_to": page.started_to,
        "order": page.order,
    }


async def bench(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="outrider-bench-") as tmp, embedded_stack(Path(tmp)) as embedded:
        url = await create_database(embedded, DATABASE, migrated=["telemetry"])
        engine = context_engine(url, "telemetry")
        try:
            began = time.perf_counter()
            async with engine.begin() as conn:
                await conn.execute(text(_FILL_RUNS), {"runs": args.runs, "agents": AGENTS})
                await conn.execute(text(_FILL_CALLS))
            async with engine.connect() as conn:
                # VACUUM runs outside a transaction.
                await conn.execution_options(isolation_level="AUTOCOMMIT")
                await conn.execute(text("vacuum analyze runs"))
                await conn.execute(text("vacuum analyze model_calls"))
                calls = await conn.scalar(text("select count(*) from model_calls"))
                now = await store.database_now(conn)
            print(f"filled {args.runs:,} runs and {calls:,} model calls in {time.perf_counter() - began:.0f}s")

            shapes = {
                "newest": listing(),
                "one agent": listing(agent_id="AGENT_07"),
                "failures": listing(status="failed"),
                "one agent's failures": listing(agent_id="AGENT_07", status="failed"),
                "one day": listing(started_from=now - timedelta(days=11), started_to=now - timedelta(days=10)),
                "slowest": listing(order=rules.SLOWEST),
                "one agent's slowest": listing(agent_id="AGENT_07", order=rules.SLOWEST),
                "one day's slowest": listing(
                    started_from=now - timedelta(days=11), started_to=now - timedelta(days=10), order=rules.SLOWEST
                ),
            }
            async with engine.connect() as conn:
                for name, first in shapes.items():
                    statement, params = store.run_list_query(listing(limit=10**9, **_filters(first)))
                    total = await conn.scalar(text(f"select count(*) from ({statement.text}) as listed"), params)
                    deep = listing(**_filters(first), after=await middle_key(conn, first, total))
                    for depth, page in (("first page", first), ("half way", deep)):
                        plan = await plan_of(conn, page)
                        median, p95 = await timed(lambda page=page: store.list_runs(conn, page), args.reads)
                        print(
                            f"{name:>22}, {depth:<10} ({total:>9,} listed): median {median:6.2f} ms,"
                            f" p95 {p95:6.2f} ms  [{plan}]"
                        )

                median, p95 = await timed(lambda: store.run_agents(conn, days=30), args.reads)
                print(f"{'agents that ran':>22}, 30 days: median {median:6.2f} ms, p95 {p95:6.2f} ms")

                traced = await conn.execute(
                    text("select agent_id, task_id from runs where agent_id = 'AGENT_00' offset 100 limit 1")
                )
                agent_id, task_id = traced.one()
                run = await store.get_run(conn, agent_id=agent_id, task_id=task_id)
                assert run is not None
                trace_id = (await conn.scalar(text("select md5(:task_id)"), {"task_id": task_id})) or ""
                median, p95 = await timed(lambda: store.get_run(conn, agent_id=agent_id, task_id=task_id), args.reads)
                print(f"{'a run':>22}, by key: median {median:6.2f} ms, p95 {p95:6.2f} ms")
                median, p95 = await timed(
                    lambda: store.trace_model_calls(conn, trace_id=trace_id, limit=rules.MAX_RUN_MODEL_CALLS + 1),
                    args.reads,
                )
                print(f"{'its calls':>22}, by trace: median {median:6.2f} ms, p95 {p95:6.2f} ms")
                start, end = rules.calls_window(run)
                median, p95 = await timed(
                    lambda: store.window_model_calls(
                        conn, agent_id=agent_id, start=start, end=end, limit=rules.MAX_RUN_MODEL_CALLS + 1
                    ),
                    args.reads,
                )
                print(f"{'its calls':>22}, by window: median {median:6.2f} ms, p95 {p95:6.2f} ms")
        finally:
            await engine.dispose()


def main() -> None:
    parser = argparse.ArgumentParser(description="the run list's pages over a large runs table")
    parser.add_argument("--runs", type=int, default=1_000_000, help="runs in the table (default 1,000,000)")
    parser.add_argument("--reads", type=int, default=200, help="reads per page shape (default 200)")
    asyncio.run(bench(parser.parse_args()))


if __name__ == "__main__":
    main()
