"""The rollout guard's count: both arms of every running rollout in one call.

    .venv/bin/python -m bench.rollouts.bench_arms                              # 1,000,000 decisions, 100 rollouts
    .venv/bin/python -m bench.rollouts.bench_arms --decisions 20000 --calls 5  # smoke run

Starts the test harness's embedded Postgres, migrates the decisions schema
(2-dimensional embeddings: vectors are not what is measured) and loads
--decisions decisions in one statement, --in-rollouts of them spread over
--rollouts rollouts and both arms, the rest outside any rollout, with
outcomes mixed as a sweep leaves them (success, failure, unknown, pending).
The HNSW index is dropped for the load (no precedent search runs here).
Then it times the call the guard makes each pass, CountRolloutArms's own
work (services.decisions.memory.count_rollout_arms: the statement and the
tallies), for all --rollouts at once, --calls times, and prints the median
and the worst with the plan Postgres chose, which must read the partial
index decisions_rollout_arms and not the table.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
import uuid
from pathlib import Path

import asyncpg

from services.common.db import context_engine, migrate
from services.decisions import memory
from tests.harness import create_database, embedded_stack

DATABASE = "rollout_arms_bench"


async def load(raw_dsn: str, *, decisions: int, in_rollouts: int, rollouts: list[uuid.UUID]) -> None:
    conn = await asyncpg.connect(raw_dsn, server_settings={"search_path": "decisions, public"})
    try:
        await conn.execute("drop index decisions_judged_embedding")
        await conn.execute(
            """
            insert into decisions (id, decision_type, agent_id, subject_id, context, action, confidence,
                                   embedding, decided_at, outcome, judged_at, judged_by, rollout_id, rollout_arm)
            select gen_random_uuid(), 'stall_response', 'EXCEPTION_AGENT', 'b-' || n, '{}', 'reassign', 0.8,
                   '[1,0]', now() - make_interval(secs => n),
                   (array['success', 'success', 'failure', 'unknown', null])[1 + n % 5],
                   case when n % 5 < 4 then now() end, case when n % 5 < 4 then 'sweeper' end,
                   case when n <= $2 then ($3::uuid[])[1 + n % cardinality($3::uuid[])] end,
                   case when n <= $2 then (array['control', 'candidate'])[1 + (n / 7) % 2] end
              from generate_series(1, $1) as n
            """,
            decisions,
            in_rollouts,
            rollouts,
        )
        await conn.execute("vacuum analyze decisions")
    finally:
        await conn.close()


async def plan(raw_dsn: str, rollouts: list[uuid.UUID]) -> list[str]:
    conn = await asyncpg.connect(raw_dsn, server_settings={"search_path": "decisions, public"})
    try:
        rows = await conn.fetch(
            """
            explain (analyze, costs off, timing off)
            select rollout_id, rollout_arm, outcome, count(*) from decisions
             where rollout_id = any($1::uuid[]) group by rollout_id, rollout_arm, outcome
            """,
            rollouts,
        )
        # The index condition lists every id; its first words say enough.
        return [line if len(line) < 100 else f"{line[:96]} ..." for line in (row[0] for row in rows)]
    finally:
        await conn.close()


async def run(args: argparse.Namespace) -> dict[str, object]:
    rollouts = [uuid.uuid4() for _ in range(args.rollouts)]
    with tempfile.TemporaryDirectory(prefix="outrider-bench-arms-") as workdir, embedded_stack(Path(workdir)) as stack:
        url = await create_database(stack, DATABASE)
        engine = context_engine(url, "decisions")
        try:
            await migrate(engine, "decisions", extra={"outrider.embedding_dim": "2"})
            started = time.perf_counter()
            await load(
                stack.raw_dsn(DATABASE), decisions=args.decisions, in_rollouts=args.in_rollouts, rollouts=rollouts
            )
            loaded_s = time.perf_counter() - started
            await memory.count_rollout_arms(engine, rollouts)  # warm the pool and the cache
            times_ms = []
            for _ in range(args.calls):
                started = time.perf_counter()
                counts = await memory.count_rollout_arms(engine, rollouts)
                times_ms.append((time.perf_counter() - started) * 1000)
            explained = await plan(stack.raw_dsn(DATABASE), rollouts)
        finally:
            await engine.dispose()
    counted = sum(c.successes + c.failures + c.unknown + c.pending for c in counts)
    if counted != args.in_rollouts or len(counts) != 2 * args.rollouts:
        raise SystemExit(f"counted {counted} decisions in {len(counts)} arms; loaded {args.in_rollouts}")
    return {
        "decisions": args.decisions,
        "in_rollouts": args.in_rollouts,
        "rollouts": args.rollouts,
        "load_s": round(loaded_s, 1),
        "calls": args.calls,
        "median_ms": round(statistics.median(times_ms), 1),
        "max_ms": round(max(times_ms), 1),
        "plan": explained,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--decisions", type=int, default=1_000_000)
    parser.add_argument("--in-rollouts", type=int, default=None, help="decisions that carry a rollout; default half")
    parser.add_argument("--rollouts", type=int, default=100)
    parser.add_argument("--calls", type=int, default=20)
    args = parser.parse_args()
    if args.in_rollouts is None:
        args.in_rollouts = args.decisions // 2
    print(json.dumps(asyncio.run(run(args)), indent=2))


if __name__ == "__main__":
    main()
