"""One rollout guard pass over --rollouts running rollouts: the count and the verdicts.

    .venv/bin/python -m bench.rollouts.bench_guard_pass                              # 1,000,000 decisions, 100 rollouts
    .venv/bin/python -m bench.rollouts.bench_guard_pass --decisions 20000 --passes 3  # smoke run

Loads decisions as bench_arms does (embedded Postgres, the decisions schema
at head, half of them in the rollouts, both arms, outcomes mixed), then times
--passes passes of what the guard does between listing the rollouts and
handing the verdicts over: the arm count for all rollouts at once (the
decisions context's own function, without gRPC) and the rule's judgement of
each rollout (services.outcomes.rules.rollout_guard.judge, p_harm and both
posteriors included). The registry's listing and JudgeRollout writes are
not in it: one read and one small write per rollout, timed by the registry's
own benches.
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

from bench.rollouts.bench_arms import DATABASE, load
from services.common.db import context_engine, migrate
from services.decisions import memory
from services.outcomes.rules.rollout_guard import ArmCounts, GuardSettings, judge
from tests.harness import create_database, embedded_stack

STEPS = (5, 25, 50, 100)


async def run(args: argparse.Namespace) -> dict[str, object]:
    rollouts = [uuid.uuid4() for _ in range(args.rollouts)]
    with tempfile.TemporaryDirectory(prefix="outrider-bench-guard-") as workdir, embedded_stack(Path(workdir)) as stack:
        url = await create_database(stack, DATABASE)
        engine = context_engine(url, "decisions")
        try:
            await migrate(engine, "decisions", extra={"outrider.embedding_dim": "2"})
            await load(
                stack.raw_dsn(DATABASE), decisions=args.decisions, in_rollouts=args.decisions // 2, rollouts=rollouts
            )
            await memory.count_rollout_arms(engine, rollouts)  # warm the pool and the cache
            count_ms, judge_ms, total_ms = [], [], []
            for _ in range(args.passes):
                started = time.perf_counter()
                counts = await memory.count_rollout_arms(engine, rollouts)
                counted = time.perf_counter()
                by_arm = {
                    (c.rollout_id, c.arm.value): ArmCounts(c.successes, c.failures, c.unknown, c.pending)
                    for c in counts
                }
                verdicts = [
                    judge(
                        control=by_arm[(r, "control")],
                        candidate=by_arm[(r, "candidate")],
                        settings=GuardSettings(),
                        steps=STEPS,
                        step=1,
                    ).verdict
                    for r in rollouts
                ]
                done = time.perf_counter()
                count_ms.append((counted - started) * 1000)
                judge_ms.append((done - counted) * 1000)
                total_ms.append((done - started) * 1000)
        finally:
            await engine.dispose()
    return {
        "decisions": args.decisions,
        "rollouts": args.rollouts,
        "passes": args.passes,
        "verdicts": sorted({v.value for v in verdicts}),
        "median_count_ms": round(statistics.median(count_ms), 1),
        "median_judge_ms": round(statistics.median(judge_ms), 1),
        "median_pass_ms": round(statistics.median(total_ms), 1),
        "max_pass_ms": round(max(total_ms), 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--decisions", type=int, default=1_000_000)
    parser.add_argument("--rollouts", type=int, default=100)
    parser.add_argument("--passes", type=int, default=10)
    print(json.dumps(asyncio.run(run(parser.parse_args())), indent=2))


if __name__ == "__main__":
    main()
