"""CountOutcomeSeries (the console's judged-success chart) over a million decisions.

    .venv/bin/python -m bench.decisions.bench_outcome_series                 # 1,000,000 decisions
    .venv/bin/python -m bench.decisions.bench_outcome_series --decisions 20000 --calls 3  # smoke run

Loads decisions as bench_evidence does (--types types spread evenly, one a
second back from now, so a million span 11.6 days; outcomes mixed as a sweep
leaves them), then times services.decisions.memory.count_outcome_series
(the statement and the folding into buckets), --calls times each, and prints
the median and the worst with the scans of the plan Postgres chose:

- one decision type over the default week (what the chart asks for);
- one decision type over 30 days in hours (the most buckets an ask may get);
- every decision type over the default week.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from bench.decisions.bench_evidence import load, timed
from services.common.db import context_engine, migrate
from services.decisions import memory, rules, store
from tests.harness import create_database, embedded_stack

DATABASE = "outcome_series_bench"

ASKS = {
    "one_type_week": rules.OutcomeSeriesAsked(days=7, bucket_seconds=None, decision_type="type_0"),
    "one_type_month_hourly": rules.OutcomeSeriesAsked(days=30, bucket_seconds=3600, decision_type="type_0"),
    "every_type_week": rules.OutcomeSeriesAsked(days=7, bucket_seconds=None, decision_type=None),
}


async def plan(engine: AsyncEngine, asked: rules.OutcomeSeriesAsked) -> list[str]:
    """The series' own statement, explained: its scans, heap fetches and times."""
    window = rules.outcome_window(datetime.now(UTC), asked)
    only_type = "and decision_type = :decision_type" if asked.decision_type is not None else ""
    async with engine.connect() as conn:
        rows = await conn.execute(
            text(f"explain (analyze, costs off, timing off) {store.OUTCOME_SERIES_SQL.format(only_type=only_type)}"),
            {
                "start": window.start,
                "end": window.end,
                "start_epoch": int(window.start.timestamp()),
                "width": window.bucket_seconds,
                "decision_type": asked.decision_type,
            },
        )
        return [line.strip() for (line,) in rows if "Scan" in line or "Heap Fetches" in line or "Time" in line]


async def run(args: argparse.Namespace) -> dict[str, object]:
    with (
        tempfile.TemporaryDirectory(prefix="outrider-bench-series-") as workdir,
        embedded_stack(Path(workdir)) as stack,
    ):
        url = await create_database(stack, DATABASE)
        engine = context_engine(url, "decisions")
        try:
            await migrate(engine, "decisions", extra={"outrider.embedding_dim": "2"})
            started = time.perf_counter()
            await load(stack.raw_dsn(DATABASE), decisions=args.decisions, types=args.types, agents=args.agents)
            loaded_s = time.perf_counter() - started
            measured: dict[str, object] = {}
            for name, asked in ASKS.items():
                figures, (window, series) = await timed(
                    args.calls, lambda asked=asked: memory.count_outcome_series(engine, asked, now=datetime.now(UTC))
                )
                counted = sum(b.successes + b.failures + b.unknown + b.pending for s in series for b in s.buckets)
                measured[name] = {
                    **figures,
                    "buckets": window.buckets,
                    "types": len(series),
                    "counted": counted,
                    "plan": await plan(engine, asked),
                }
        finally:
            await engine.dispose()
    return {
        "decisions": args.decisions,
        "types": args.types,
        "load_s": round(loaded_s, 1),
        "calls": args.calls,
        **measured,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--decisions", type=int, default=1_000_000)
    parser.add_argument("--types", type=int, default=10)
    parser.add_argument("--agents", type=int, default=50)
    parser.add_argument("--calls", type=int, default=20)
    args = parser.parse_args()
    print(json.dumps(asyncio.run(run(args)), indent=2))


if __name__ == "__main__":
    main()
