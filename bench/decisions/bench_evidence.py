"""The three counts DESIGN §10's evidence is built from, over a million decisions.

    .venv/bin/python -m bench.decisions.bench_evidence                              # 1,000,000 decisions
    .venv/bin/python -m bench.decisions.bench_evidence --decisions 20000 --calls 5 --window 10  # smoke run

Starts the test harness's embedded Postgres, migrates the decisions schema
(2-dimensional embeddings: vectors are not what is measured) and loads
--decisions decisions in one statement: --types decision types, --agents
agents, five models, outcomes mixed as a sweep leaves them (success,
failure, unknown, pending), about four in five with a propensity and each way of
carrying out an action plus the unsaid. The HNSW index is dropped for the
load (no precedent search runs here).

Then it times each count's own work (services.decisions.memory: the
statements and the folding), --calls times each, and prints the median and
the worst with the plan Postgres chose, which must read the evidence
indexes of 0006_evidence, not the table:

- WeighDecisions for one decision type (a tenth of the decisions) and one model;
- CountExecutions for one agent, every type;
- CountJudgedWindows with a window of --window, over every agent × type.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import asyncpg
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from services.common.db import context_engine, migrate
from services.decisions import memory, rules, store
from tests.harness import create_database, embedded_stack

DATABASE = "evidence_bench"
MODELS = ["m-0", "m-1", "m-2", "m-3", "m-4"]


async def load(raw_dsn: str, *, decisions: int, types: int, agents: int) -> None:
    conn = await asyncpg.connect(raw_dsn, server_settings={"search_path": "decisions, public"})
    try:
        await conn.execute("drop index decisions_judged_embedding")
        # Type and agent spread evenly (n = types·q + type, agent = q mod
        # agents); outcome, propensity, model and execution drawn apart from them.
        await conn.execute("select setseed(0.42)")
        await conn.execute(
            """
            insert into decisions (id, decision_type, agent_id, subject_id, context, action, confidence,
                                   embedding, decided_at, outcome, judged_at, judged_by, model,
                                   model_propensity, execution)
            select gen_random_uuid(), 'type_' || (n % $2), 'agent_' || ((n / $2) % $3), 'b-' || n, '{}',
                   'reassign', 0.8, '[1,0]', now() - make_interval(secs => n),
                   (array['success', 'success', 'failure', 'unknown', null])[1 + o],
                   case when o < 4 then now() end, case when o < 4 then 'sweeper' end,
                   ($4::text[])[1 + m], case when p < 19 then 0.05 + p / 20.0 end,
                   (array['autonomous', 'confirmed', 'overridden', 'proposed', null])[1 + e]
              from (
                  select n, floor(random() * 5)::int as o, floor(random() * cardinality($4::text[]))::int as m,
                         floor(random() * 24)::int as p, floor(random() * 5)::int as e
                    from generate_series(1, $1) as n
              ) as drawn
            """,
            decisions,
            types,
            agents,
            MODELS,
        )
        await conn.execute("vacuum analyze decisions")
    finally:
        await conn.close()


PLANS = {
    "weigh_decisions": (
        f"""
        select count(*), count(model_propensity), sum(1 / model_propensity) filter (where model = $2)
          from decisions where {store.JUDGED} and decision_type = $1
        """,
        ("type_0", "m-0"),
    ),
    "weigh_decisions_unjudged": (
        f"select count(*) filter (where outcome is null) from decisions where {store.UNJUDGED} and decision_type = $1",
        ("type_0",),
    ),
    "count_executions": (
        "select decision_type, execution, outcome, count(*) from decisions where agent_id = $1 group by 1, 2, 3",
        ("agent_0",),
    ),
}


async def plans(raw_dsn: str) -> dict[str, list[str]]:
    conn = await asyncpg.connect(raw_dsn, server_settings={"search_path": "decisions, public"})
    try:
        explained = {}
        for name, (sql, params) in PLANS.items():
            rows = await conn.fetch(f"explain (analyze, costs off, timing off) {sql}", *params)
            explained[name] = [row[0] for row in rows]
        return explained
    finally:
        await conn.close()


async def windows_plan(engine: AsyncEngine, window: int) -> list[str]:
    """The judged windows' own statement, explained: its scans only, which must all be index-only."""
    async with engine.connect() as conn:
        rows = await conn.execute(
            text(f"explain (analyze, costs off, timing off) {store.JUDGED_WINDOWS_SQL}"),
            {"window": window, "twice": 2 * window},
        )
        return [line.strip() for (line,) in rows if "Scan" in line or "Heap Fetches" in line or "Time" in line]


async def timed(calls: int, work: Callable[[], Awaitable[Any]]) -> tuple[dict[str, float], Any]:
    answer = await work()  # warm the pool and the cache
    times_ms = []
    for _ in range(calls):
        started = time.perf_counter()
        answer = await work()
        times_ms.append((time.perf_counter() - started) * 1000)
    return {"median_ms": round(statistics.median(times_ms), 1), "max_ms": round(max(times_ms), 1)}, answer


async def run(args: argparse.Namespace) -> dict[str, object]:
    with (
        tempfile.TemporaryDirectory(prefix="outrider-bench-evidence-") as workdir,
        embedded_stack(Path(workdir)) as stack,
    ):
        url = await create_database(stack, DATABASE)
        engine = context_engine(url, "decisions")
        try:
            await migrate(engine, "decisions", extra={"outrider.embedding_dim": "2"})
            started = time.perf_counter()
            await load(stack.raw_dsn(DATABASE), decisions=args.decisions, types=args.types, agents=args.agents)
            loaded_s = time.perf_counter() - started
            weigh, weights = await timed(
                args.calls, lambda: memory.weigh_decisions(engine, rules.Weighing("type_0", "m-0"))
            )
            executions, counts = await timed(
                args.calls, lambda: memory.count_executions(engine, rules.ExecutionsAsked("agent_0", None))
            )
            windows, judged_windows = await timed(args.calls, lambda: memory.count_judged_windows(engine, args.window))
            explained = await plans(stack.raw_dsn(DATABASE))
            explained["count_judged_windows"] = await windows_plan(engine, args.window)
        finally:
            await engine.dispose()
    counted = sum(c.successes + c.failures + c.unknown + c.pending for c in counts)
    pairs = args.types * args.agents
    if len(judged_windows) != pairs or any(w.latest_judged != args.window for w in judged_windows):
        raise SystemExit(f"{len(judged_windows)} windows for {pairs} pairs, or one short of {args.window}")
    if weights.decisions != args.decisions // args.types or not weights.matched:
        raise SystemExit(f"weighed {weights.decisions} decisions, {weights.matched} matched")
    return {
        "decisions": args.decisions,
        "types": args.types,
        "agents": args.agents,
        "load_s": round(loaded_s, 1),
        "calls": args.calls,
        "weigh_decisions": {**weigh, "weighed": weights.decisions, "matched": weights.matched},
        "count_executions": {
            **executions,
            "counted": counted,
        },
        "count_judged_windows": {**windows, "window": args.window, "pairs": len(judged_windows)},
        "plans": explained,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--decisions", type=int, default=1_000_000)
    parser.add_argument("--types", type=int, default=10)
    parser.add_argument("--agents", type=int, default=50)
    parser.add_argument("--window", type=int, default=100)
    parser.add_argument("--calls", type=int, default=20)
    args = parser.parse_args()
    print(json.dumps(asyncio.run(run(args)), indent=2))


if __name__ == "__main__":
    main()
