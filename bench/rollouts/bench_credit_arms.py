"""The rollout guard's credit count: every arm's episode credit of every running rollout in one read.

    .venv/bin/python -m bench.rollouts.bench_credit_arms                              # 1,000,000 credits, 100 rollouts
    .venv/bin/python -m bench.rollouts.bench_credit_arms --credits 20000 --calls 5    # smoke run

Starts the test harness's embedded Postgres, migrates the outcomes schema and
loads --credits credits in one statement (ten per conversation), --in-rollouts
of them (default a tenth) on --rollouts rollouts' two arms and the rest outside any rollout, with
a deferred turn for one conversation in fifty. Then it times the read the
guard makes each pass (services.outcomes.store.tally_rollout_credits) for
all --rollouts at once, --calls times, and prints the median and the worst
with the plan Postgres chose, which must read the partial index
credits_rollout_arms and not the table.
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
from services.outcomes import store
from tests.harness import create_database, embedded_stack

DATABASE = "rollout_credit_bench"


async def load(raw_dsn: str, *, credits: int, in_rollouts: int, rollouts: list[uuid.UUID]) -> None:
    conn = await asyncpg.connect(raw_dsn, server_settings={"search_path": "outcomes, public"})
    try:
        await conn.execute(
            "insert into conversations (conversation_id) select 'c-' || n from generate_series(0, $1 / 10) as n",
            credits,
        )
        await conn.execute(
            """
            insert into credits (conversation_id, turn_ref, episode_id, model, trace_id, decision_type,
                                 credit, confidence, resolution, rollout_id, rollout_arm)
            select 'c-' || n / 10, 't' || n % 10, n % 10, 'm1', 'tr-' || n, 'stall_response',
                   (array['success', 'failure', 'success'])[1 + n % 3], (array[0.85, 0.595, 0.6, 1.0])[1 + n % 4],
                   'resolved',
                   case when n <= $2 then ($3::uuid[])[1 + n % cardinality($3::uuid[])] end,
                   case when n <= $2 then (array['control', 'candidate'])[1 + (n / 7) % 2] end
              from generate_series(1, $1) as n
            """,
            credits,
            in_rollouts,
            rollouts,
        )
        await conn.execute(
            """
            insert into deferred_turns (conversation_id, turn_ref, episode_id, rollout_id, rollout_arm)
            select 'c-' || n, 'd', 99, ($2::uuid[])[1 + n % cardinality($2::uuid[])],
                   (array['control', 'candidate'])[1 + n % 2]
              from generate_series(0, $1 / 10, 50) as n
            """,
            credits,
            rollouts,
        )
        await conn.execute("vacuum analyze credits")
        await conn.execute("vacuum analyze deferred_turns")
    finally:
        await conn.close()


async def plan(raw_dsn: str, rollouts: list[uuid.UUID]) -> list[str]:
    conn = await asyncpg.connect(raw_dsn, server_settings={"search_path": "outcomes, public"})
    try:
        rows = await conn.fetch(
            """
            explain (analyze, costs off, timing off)
            select rollout_id, rollout_arm,
                   coalesce(sum(confidence) filter (where credit = 'success'), 0),
                   coalesce(sum(confidence) filter (where credit = 'failure'), 0)
              from credits where rollout_id = any($1::uuid[]) group by rollout_id, rollout_arm
            """,
            rollouts,
        )
        return [line if len(line) < 100 else f"{line[:96]} ..." for line in (row[0] for row in rows)]
    finally:
        await conn.close()


async def run(args: argparse.Namespace) -> dict[str, object]:
    rollouts = [uuid.uuid4() for _ in range(args.rollouts)]
    ids = [str(r) for r in rollouts]
    with tempfile.TemporaryDirectory(prefix="outrider-credit-") as workdir, embedded_stack(Path(workdir)) as stack:
        url = await create_database(stack, DATABASE)
        engine = context_engine(url, "outcomes")
        try:
            await migrate(engine, "outcomes")
            started = time.perf_counter()
            await load(stack.raw_dsn(DATABASE), credits=args.credits, in_rollouts=args.in_rollouts, rollouts=rollouts)
            loaded_s = time.perf_counter() - started
            async with engine.connect() as conn:
                await store.tally_rollout_credits(conn, rollout_ids=ids)  # warm the pool and the cache
            times_ms = []
            for _ in range(args.calls):
                started = time.perf_counter()
                async with engine.connect() as conn:
                    tallies = await store.tally_rollout_credits(conn, rollout_ids=ids)
                times_ms.append((time.perf_counter() - started) * 1000)
            explained = await plan(stack.raw_dsn(DATABASE), rollouts)
        finally:
            await engine.dispose()
    if len(tallies) != 2 * args.rollouts:
        raise SystemExit(f"counted {len(tallies)} arms; loaded {2 * args.rollouts}")
    return {
        "credits": args.credits,
        "in_rollouts": args.in_rollouts,
        "rollouts": args.rollouts,
        "arms_counted": len(tallies),
        "load_s": round(loaded_s, 1),
        "calls": args.calls,
        "median_ms": round(statistics.median(times_ms), 1),
        "max_ms": round(max(times_ms), 1),
        "plan": explained,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--credits", type=int, default=1_000_000)
    parser.add_argument("--in-rollouts", type=int, default=None, help="credits that carry a rollout; default a tenth")
    parser.add_argument("--rollouts", type=int, default=100)
    parser.add_argument("--calls", type=int, default=20)
    args = parser.parse_args()
    if args.in_rollouts is None:
        args.in_rollouts = args.credits // 10
    print(json.dumps(asyncio.run(run(args)), indent=2))


if __name__ == "__main__":
    main()
