"""The listing by model, by part of a model's name and by subject, and the filters' choices, over a million decisions.

    .venv/bin/python -m bench.decisions.bench_decision_search                 # 1,000,000 decisions
    .venv/bin/python -m bench.decisions.bench_decision_search --decisions 20000 --calls 3  # smoke run

Loads decisions as bench_evidence does (five models spread evenly, one
decision a second back from now), then gives --rare of them, spread over the
whole span, a sixth model, so one model is rare, and the --retired oldest
a seventh, as a model retired long ago leaves them; four decisions spread
over the span are about one booking. Each ask is timed --calls
times after a warm-up, first with decisions_model_decided and
decisions_subject_decided dropped (the listing as it was: a filter over the
decision-time index; a substring there is an ILIKE), then with both rebuilt
and the listing as it is (services.decisions.memory). Both answers must be
the same page. Last, the cost of keeping the two indexes: one bulk insert
of --inserted decisions with and without them.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import asyncpg
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from bench.decisions.bench_evidence import load, timed
from services.common.db import context_engine, migrate
from services.decisions import memory
from services.decisions.queries import DecisionListing
from tests.harness import create_database, embedded_stack

DATABASE = "decision_search_bench"
RARE_MODEL = "claude-rare-1"
RETIRED_MODEL = "claude-retired-0"
PAGE = 25
BOOKING = "booking-4711"
INDEXES = (
    "create index decisions_model_decided on decisions (model, decided_at desc, id desc) where model is not null",
    "create index decisions_subject_decided on decisions (subject_id, decided_at desc, id desc)",
)

ASKS = {
    "one_common_model": {"model": "m-0"},
    "one_rare_model": {"model": RARE_MODEL},
    "one_retired_model": {"model": RETIRED_MODEL},
    "substring_of_the_retired_model": {"model_contains": "retired"},
    "substring_of_every_common_model": {"model_contains": "M-"},
    "substring_of_the_rare_model": {"model_contains": "RARE"},
    "substring_of_no_model": {"model_contains": "nothing"},
    "rare_substring_and_an_agent": {"model_contains": "rare", "agent_id": "agent_3"},
    "one_booking": {"subject_id": BOOKING},
    "one_booking_and_a_model_substring": {"subject_id": BOOKING, "model_contains": "m-"},
}


def listing(ask: dict[str, str]) -> DecisionListing:
    return DecisionListing(
        decision_type=None,
        outcome=None,
        agent_id=ask.get("agent_id"),
        model=ask.get("model"),
        decided_from=None,
        decided_to=None,
        after=None,
        limit=PAGE,
        model_contains=ask.get("model_contains"),
        subject_id=ask.get("subject_id"),
    )


async def before(engine: AsyncEngine, ask: dict[str, str]) -> list[str]:
    """The listing's statement without the model index: a filter over decisions_decided."""
    where, params = [], {}
    if "model" in ask:
        where.append("model = :model")
        params["model"] = ask["model"]
    if "model_contains" in ask:
        where.append("model ilike :pattern")
        params["pattern"] = f"%{ask['model_contains']}%"
    if "agent_id" in ask:
        where.append("agent_id = :agent_id")
        params["agent_id"] = ask["agent_id"]
    if "subject_id" in ask:
        where.append("subject_id = :subject_id")
        params["subject_id"] = ask["subject_id"]
    async with engine.connect() as conn:
        rows = await conn.execute(
            text(
                f"select id from decisions where {' and '.join(where)} order by decided_at desc, id desc limit {PAGE}"
            ),
            params,
        )
        return [str(row.id) for row in rows]


async def after(engine: AsyncEngine, ask: dict[str, str]) -> list[str]:
    page, _ = await memory.list_decisions(engine, listing(ask))
    return [str(row.id) for row in page]


async def bulk_insert_ms(raw_dsn: str, count: int, older_than_s: int) -> float:
    # Older than every loaded decision, so no page compared here changes.
    conn = await asyncpg.connect(raw_dsn, server_settings={"search_path": "decisions, public"})
    try:
        started = time.perf_counter()
        await conn.execute(
            """
            insert into decisions (id, decision_type, agent_id, subject_id, context, action, confidence,
                                   embedding, decided_at, model)
            select gen_random_uuid(), 'type_0', 'agent_0', 'b-' || n, '{}', 'reassign', 0.8, '[1,0]',
                   now() - make_interval(secs => $2 + n), 'm-' || (n % 5)
              from generate_series(1, $1) as n
            """,
            count,
            older_than_s,
        )
        return (time.perf_counter() - started) * 1000
    finally:
        await conn.close()


async def run(args: argparse.Namespace) -> dict[str, object]:
    with (
        tempfile.TemporaryDirectory(prefix="outrider-bench-search-") as workdir,
        embedded_stack(Path(workdir)) as stack,
    ):
        url = await create_database(stack, DATABASE)
        raw = stack.raw_dsn(DATABASE)
        engine = context_engine(url, "decisions")
        try:
            await migrate(engine, "decisions", extra={"outrider.embedding_dim": "2"})
            started = time.perf_counter()
            await load(raw, decisions=args.decisions, types=10, agents=50)
            conn = await asyncpg.connect(raw, server_settings={"search_path": "decisions, public"})
            try:
                await conn.execute(
                    "update decisions set model = $1 where id in"
                    " (select id from decisions order by decided_at offset 7 limit $2)",
                    RARE_MODEL,
                    args.rare,
                )
                # Spread the rare model's decisions over the whole span.
                await conn.execute(
                    "update decisions set decided_at = now() - make_interval(secs => $2::bigint * random())"
                    " where model = $1",
                    RARE_MODEL,
                    args.decisions,
                )
                # And a model retired long ago: only the oldest decisions name it.
                await conn.execute(
                    "update decisions set model = $1"
                    " where id in (select id from decisions order by decided_at limit $2)",
                    RETIRED_MODEL,
                    args.retired,
                )
                for offset, count in ((args.decisions // 3, 3), (args.decisions // 10, 1)):
                    await conn.execute(
                        "update decisions set subject_id = $1 where id in"
                        " (select id from decisions order by decided_at offset $2 limit $3)",
                        BOOKING,
                        offset,
                        count,
                    )
                await conn.execute("drop index decisions_model_decided")
                await conn.execute("drop index decisions_subject_decided")
                await conn.execute("vacuum analyze decisions")
            finally:
                await conn.close()
            loaded_s = time.perf_counter() - started
            measured: dict[str, dict[str, object]] = {}
            for name, ask in ASKS.items():
                figures, page = await timed(args.calls, lambda ask=ask: before(engine, ask))
                measured[name] = {"ask": ask, "before": figures, "_page": page}
            without_index_ms = await bulk_insert_ms(raw, args.inserted, 2 * args.decisions)
            conn = await asyncpg.connect(raw, server_settings={"search_path": "decisions, public"})
            try:
                for index in INDEXES:
                    await conn.execute(index)
                await conn.execute("vacuum analyze decisions")
            finally:
                await conn.close()
            for name, ask in ASKS.items():
                figures, page = await timed(args.calls, lambda ask=ask: after(engine, ask))
                if page != measured[name].pop("_page"):
                    raise SystemExit(f"{name}: the listing with the index answered another page")
                measured[name]["after"] = figures
                measured[name]["rows"] = len(page)
            facets, answer = await timed(args.calls, lambda: memory.list_facets(engine, 30, now=datetime.now(UTC)))
            with_index_ms = await bulk_insert_ms(raw, args.inserted, 2 * args.decisions + args.inserted)
        finally:
            await engine.dispose()
    return {
        "decisions": args.decisions,
        "rare": args.rare,
        "retired": args.retired,
        "load_s": round(loaded_s, 1),
        "calls": args.calls,
        **measured,
        "facets_30_days": {
            **facets,
            "decision_types": len(answer.decision_types),
            "agents": len(answer.agent_ids),
            "models": len(answer.models),
        },
        "bulk_insert": {
            "decisions": args.inserted,
            "without_the_two_indexes_ms": round(without_index_ms, 1),
            "with_them_ms": round(with_index_ms, 1),
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--decisions", type=int, default=1_000_000)
    parser.add_argument("--rare", type=int, default=600)
    parser.add_argument("--retired", type=int, default=50)
    parser.add_argument("--inserted", type=int, default=100_000)
    parser.add_argument("--calls", type=int, default=10)
    args = parser.parse_args()
    print(json.dumps(asyncio.run(run(args)), indent=2))


if __name__ == "__main__":
    main()
