"""GET /admin/ai/evaluate over a million decisions, through the gateway.

    .venv/bin/python -m bench.evidence.bench_evaluate                     # 1,000,000 decisions
    .venv/bin/python -m bench.evidence.bench_evaluate --decisions 20000   # smoke run

Starts the test harness's embedded Postgres and NATS, migrates every
context, loads --decisions decisions of --types decision types in one
statement (five models, outcomes mixed as a sweep leaves them, about four in
five with a propensity), and serves the decisions and outcomes contexts and
the gateway in this process. Then it times --calls requests for one decision
type (a tenth of the decisions) and one model, and checks the answer
against the same estimate computed by Postgres from the rows themselves.
Target: a median at or under 2 s.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from pathlib import Path

import asyncpg

from services.outcomes.rules.evaluation import DecisionWeights, snips
from tests.harness import (
    bearer,
    build_template,
    embedded_stack,
    fresh_database,
    gateway_client,
    make_settings,
    reset_nats,
    running,
)

MODELS = ["m-0", "m-1", "m-2", "m-3", "m-4"]
DIMENSION = 384
TARGET_S = 2.0


async def load(raw_dsn: str, *, decisions: int, types: int) -> None:
    conn = await asyncpg.connect(raw_dsn, server_settings={"search_path": "decisions, public"})
    try:
        # No precedent search runs here: the vector index would only slow the load.
        await conn.execute("drop index if exists decisions_judged_embedding")
        await conn.execute("select setseed(0.42)")
        await conn.execute(
            """
            insert into decisions (id, decision_type, agent_id, subject_id, context, action, confidence,
                                   embedding, decided_at, outcome, judged_at, judged_by, model,
                                   model_propensity)
            select gen_random_uuid(), 'type_' || (n % $2), 'agent_' || (n % 50), 'b-' || n, '{}',
                   'reassign', 0.8, $4::vector, now() - make_interval(secs => n),
                   (array['success', 'success', 'failure', 'unknown', null])[1 + o],
                   case when o < 4 then now() end, case when o < 4 then 'sweeper' end,
                   ($3::text[])[1 + m], case when p < 19 then 0.05 + p / 20.0 end
              from (
                  select n, floor(random() * 5)::int as o, floor(random() * cardinality($3::text[]))::int as m,
                         floor(random() * 24)::int as p
                    from generate_series(1, $1) as n
              ) as drawn
            """,
            decisions,
            types,
            MODELS,
            "[" + ",".join(["0.1"] * DIMENSION) + "]",
        )
        await conn.execute("vacuum analyze decisions")
    finally:
        await conn.close()


async def from_rows(raw_dsn: str, decision_type: str, model: str) -> DecisionWeights:
    """The sums straight from the table, to check the served answer against."""
    conn = await asyncpg.connect(raw_dsn, server_settings={"search_path": "decisions, public"})
    try:
        row = await conn.fetchrow(
            """
            with judged as (
                select model, model_propensity as p, (outcome = 'success')::int as r
                  from decisions where decision_type = $1 and outcome in ('success', 'failure'))
            select (select count(*) from decisions where decision_type = $1) as decisions,
                   count(*) as judged, coalesce(sum(r), 0) as successes, count(p) as with_p,
                   count(*) filter (where model = $2 and p is not null) as matched,
                   coalesce(sum(1 / p) filter (where model = $2), 0) as sw,
                   coalesce(sum(r / p) filter (where model = $2), 0) as swr,
                   coalesce(sum(1 / (p * p)) filter (where model = $2), 0) as sw2,
                   coalesce(sum(r / (p * p)) filter (where model = $2), 0) as sw2r
              from judged
            """,
            decision_type,
            model,
        )
    finally:
        await conn.close()
    return DecisionWeights(
        decisions=row["decisions"],
        judged=row["judged"],
        unknown=0,
        pending=0,
        logged_successes=row["successes"],
        with_propensity=row["with_p"],
        matched=row["matched"],
        sum_w=float(row["sw"]),
        sum_w_r=float(row["swr"]),
        sum_w2=float(row["sw2"]),
        sum_w2_r=float(row["sw2r"]),
    )


async def run(args: argparse.Namespace) -> dict[str, object]:
    with tempfile.TemporaryDirectory(prefix="outrider-bench-evaluate-") as workdir:
        with embedded_stack(Path(workdir)) as stack:
            await build_template(stack)
            await reset_nats(stack.nats_url)
            async with fresh_database(stack) as database:
                raw_dsn = stack.raw_dsn(database)
                started = time.perf_counter()
                await load(raw_dsn, decisions=args.decisions, types=args.types)
                loaded_s = time.perf_counter() - started
                expected = snips(await from_rows(raw_dsn, "type_0", "m-0"), model="m-0")
                settings = make_settings(stack, database)
                params = {"decision_type": "type_0", "model": "m-0"}
                async with running(settings, ["decisions", "outcomes"]), gateway_client(settings) as client:
                    await client.get("/admin/ai/evaluate", params=params, headers=bearer(3))  # warm
                    times_s = []
                    for _ in range(args.calls):
                        started = time.perf_counter()
                        reply = await client.get("/admin/ai/evaluate", params=params, headers=bearer(3))
                        times_s.append(time.perf_counter() - started)
                        reply.raise_for_status()
    body = reply.json()
    estimate = body["estimate"]
    if expected.estimate is None or estimate is None or abs(estimate["mean"] - expected.estimate.mean) > 1e-9:
        raise SystemExit(f"served {estimate}, the rows give {expected.estimate}")
    median = statistics.median(times_s)
    return {
        "decisions": args.decisions,
        "types": args.types,
        "load_s": round(loaded_s, 1),
        "calls": args.calls,
        "median_s": round(median, 3),
        "max_s": round(max(times_s), 3),
        "within_target": median <= TARGET_S,
        "answer": {k: body[k] for k in ("estimate", "logged", "matched", "effective_sample_size")},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--decisions", type=int, default=1_000_000)
    parser.add_argument("--types", type=int, default=10)
    parser.add_argument("--calls", type=int, default=20)
    args = parser.parse_args()
    print(json.dumps(asyncio.run(run(args)), indent=2))


if __name__ == "__main__":
    main()
