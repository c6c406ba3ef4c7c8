"""Outcome judge benchmark: one sweep over pending decisions, end to end, beside
one set-based SQL update that judges the same rows.

    .venv/bin/python -m bench.outcomes.bench_sweep                # 100,000 pending decisions
    .venv/bin/python -m bench.outcomes.bench_sweep --size 2000 --indexed-size 200 --rounds 1   # smoke

What it does, in one run so every figure shares the machine's state:

1. Starts an embedded Postgres and NATS (or uses --database-url), migrates
   the decisions and outcomes schemas into a template database and loads
   --size pending decisions, each about its own booking, all past the
   outcome window so every one is judgeable, plus that booking's merged
   facts in the outcomes schema. Types and facts are mixed so every branch
   of the rules is taken: on-time, late, cancelled and undelivered stalls;
   assignments after, before and never; and a type with no rule (unknown).
2. For each round, for each path, clones the template into a fresh database
   (identical starting state for every measurement) and times:
   - sweep-N: `outrider serve decisions` and `outrider serve outcomes` as
     their own processes, one Sweep call with batch_size N: ListPending
     pages over gRPC, facts read from the outcomes schema, the pure judge,
     SetOutcomes over gRPC (conditional update plus history rows);
   - sql: the same verdicts computed and written by one statement straight
     against both schemas (update plus history rows), the floor any
     service-shaped sweep is compared with.
   Paths run in a rotated order each round; medians are reported.
3. Checks that every path judged every decision with the same outcome counts.

Two data sets. The main one (--size) is swept without the decisions
context's precedent index (the partial HNSW graph over judged embeddings):
every success or failure verdict inserts one vector into that graph, which
costs milliseconds a row on any path, and would measure pgvector rather
than the sweep. The second (--indexed-size, smaller because of that cost)
keeps the index, to show what judging costs in the production schema and
that both paths pay it alike.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

import asyncpg
import grpc
import psutil
from grpc_health.v1 import health_pb2, health_pb2_grpc

from outrider.rpc import keyed_channel as channel
from outrider.v1 import outcomes_pb2, outcomes_pb2_grpc
from services.common.db import context_engine, migrate
from services.outcomes.rules.facts import BookingFactsEvent, SubjectFacts
from tests.harness import NATS_SERVICE, Stack, embedded_stack, reserved_port

ROOT = Path(__file__).resolve().parents[2]
INTERNAL_KEY = "bench-internal-key-0123456789abcdef"
JWT_SECRET = "bench-jwt-secret-0123456789abcdef"
TEMPLATE = "bench_outcomes_template"
RUN_DB = "bench_outcomes_run"
DIMENSION = 384
WINDOW_HOURS = 48


# ─── data ────────────────────────────────────────────────────────────────────

# Decision i's type and booking story, by i mod 20 (so every share is exact):
# stall_response 12/20, assignment_failure 6/20, a type with no rule 2/20.
STORIES = (
    ["stall:on_time"] * 6
    + ["stall:late"] * 2
    + ["stall:cancelled"]
    + ["stall:in_transit"]
    + ["stall:no_facts"] * 2
    + ["assign:after"] * 3
    + ["assign:before"]
    + ["assign:cancelled"]
    + ["assign:no_facts"]
    + ["novel:delivered"] * 2
)
EXPECTED = {
    "stall:on_time": "success",
    "stall:late": "failure",
    "stall:cancelled": "failure",
    "stall:in_transit": "failure",
    "stall:no_facts": "failure",
    "assign:after": "success",
    "assign:before": "failure",
    "assign:cancelled": "failure",
    "assign:no_facts": "failure",
    "novel:delivered": "unknown",
}
TYPE_OF = {"stall": "stall_response", "assign": "assignment_failure", "novel": "reroute_advice"}


def story(index: int) -> str:
    return STORIES[index % len(STORIES)]


def decided_at(index: int, now: datetime) -> datetime:
    # Past the window by up to an hour: all judgeable, spread over distinct instants.
    return now - timedelta(hours=WINDOW_HOURS + 1, seconds=index % 3600, microseconds=index)


def facts_document(index: int, now: datetime) -> dict | None:
    kind = story(index)
    decided = decided_at(index, now)
    subject = f"bk-{index}"
    seen = decided + timedelta(hours=2)
    events: list[dict] = []
    if kind == "stall:on_time":
        events = [{"sla_due_at": decided + timedelta(hours=6), "delivered_at": decided + timedelta(hours=3)}]
    elif kind == "stall:late":
        events = [{"sla_due_at": decided + timedelta(hours=2), "delivered_at": decided + timedelta(hours=5)}]
    elif kind in ("stall:cancelled", "assign:cancelled"):
        events = [{"cancelled": True, "status": "cancelled"}]
    elif kind == "stall:in_transit":
        events = [{"status": "in_transit", "sla_due_at": decided + timedelta(hours=6)}]
    elif kind == "assign:after":
        events = [{"assigned_at": decided + timedelta(minutes=20), "status": "assigned"}]
    elif kind == "assign:before":
        events = [{"assigned_at": decided - timedelta(minutes=20), "status": "assigned"}]
    elif kind == "novel:delivered":
        events = [{"delivered_at": decided + timedelta(hours=1), "status": "delivered"}]
    if not events:
        return None
    state = SubjectFacts(subject)
    for values in events:
        state = state.merge(BookingFactsEvent(subject_id=subject, at=seen, **values))
    return state.to_json()


def expected_counts(size: int) -> dict[str, int]:
    counts = Counter(EXPECTED[story(i)] for i in range(size))
    return {outcome: counts.get(outcome, 0) for outcome in ("success", "failure", "unknown")}


LOAD_DECISIONS = f"""
insert into decisions.decisions (id, decision_type, agent_id, subject_id, context, action, confidence,
                                 model, embedding, decided_at)
select gen_random_uuid(), t.decision_type, 'bench-agent', 'bk-' || t.i, '{{}}'::jsonb, 'nudge', 0.7,
       'model-' || (t.i % 3),
       -- A situation recurs with variations: 200 cluster centres plus noise.
       -- Uniform random vectors would make the graph's inserts far dearer
       -- than any real embedding does.
       (select array_agg(sin(k * (t.i % 200 + 1)) + 0.1 * (random() - 0.5))::real[]
          from generate_series(1, {DIMENSION}) as k)::vector,
       t.decided_at
  from unnest($1::int[], $2::text[], $3::timestamptz[]) as t(i, decision_type, decided_at)
"""


PRECEDENT_INDEX = "decisions.decisions_judged_embedding"


async def load(template_url: str, size: int, *, keep_index: bool) -> dict[str, float]:
    for context in ("decisions", "outcomes"):
        engine = context_engine(template_url, context)
        try:
            await migrate(engine, context, extra={"outrider.embedding_dim": str(DIMENSION)})
        finally:
            await engine.dispose()
    now = datetime.now(UTC)
    conn = await asyncpg.connect(template_url.replace("postgresql+asyncpg://", "postgresql://"))
    started = time.perf_counter()
    try:
        for start in range(0, size, 10_000):
            chunk = range(start, min(size, start + 10_000))
            await conn.execute(
                LOAD_DECISIONS,
                list(chunk),
                [TYPE_OF[story(i).split(":")[0]] for i in chunk],
                [decided_at(i, now) for i in chunk],
            )
        rows = [(f"bk-{i}", json.dumps(doc)) for i in range(size) if (doc := facts_document(i, now)) is not None]
        await conn.copy_records_to_table(
            "subject_facts", records=rows, columns=["subject_id", "facts"], schema_name="outcomes"
        )
        if not keep_index:
            await conn.execute(f"drop index {PRECEDENT_INDEX}")
        await conn.execute("vacuum analyze decisions.decisions")
        await conn.execute("vacuum analyze outcomes.subject_facts")
        table_mb = await conn.fetchval("select pg_total_relation_size('decisions.decisions') / 1048576.0::float8")
    finally:
        await conn.close()
    return {"load_s": time.perf_counter() - started, "facts_rows": len(rows), "decisions_table_mb": table_mb}


# ─── the two paths ───────────────────────────────────────────────────────────

SET_BASED = f"""
with facts as (
    select subject_id,
           cast(facts -> 'cancelled' ->> 'value' as boolean) as cancelled,
           cast(facts -> 'assigned_at' ->> 'value' as timestamptz) as assigned_at,
           cast(facts -> 'delivered_at' ->> 'value' as timestamptz) as delivered_at,
           cast(facts -> 'sla_due_at' ->> 'value' as timestamptz) as sla_due_at
      from outcomes.subject_facts
), verdict as (
    select d.id,
           case d.decision_type
             when 'stall_response' then
               case when f.cancelled then 'failure'
                    when f.delivered_at is not null then
                      case when f.sla_due_at is not null and f.delivered_at > f.sla_due_at
                           then 'failure' else 'success' end
                    when d.decided_at <= cast($1 as timestamptz) - interval '{WINDOW_HOURS} hours' then 'failure' end
             when 'assignment_failure' then
               case when f.cancelled then 'failure'
                    when f.assigned_at > d.decided_at then 'success'
                    when d.decided_at <= cast($1 as timestamptz) - interval '{WINDOW_HOURS} hours' then 'failure' end
             else case when d.decided_at <= cast($1 as timestamptz) - interval '{WINDOW_HOURS} hours' then 'unknown' end
           end as outcome
      from decisions.decisions d
      left join facts f on f.subject_id = d.subject_id
     where d.outcome is null and d.decided_at < cast($1 as timestamptz) - interval '30 minutes'
), judged as (
    update decisions.decisions d
       set outcome = v.outcome, outcome_reason = 'set-based', judged_at = now(), judged_by = 'sweeper'
      from verdict v
     where d.id = v.id and v.outcome is not null and d.outcome is null
    returning d.id, d.outcome, d.outcome_reason, d.judged_at
)
insert into decisions.outcome_history (decision_id, old_outcome, new_outcome, reason, judged_by, judged_at)
select id, null, outcome, outcome_reason, 'sweeper', judged_at from judged
returning new_outcome
"""


async def time_sql(run_url: str) -> tuple[float, dict[str, int]]:
    conn = await asyncpg.connect(run_url.replace("postgresql+asyncpg://", "postgresql://"))
    try:
        started = time.perf_counter()
        async with conn.transaction():
            rows = await conn.fetch(SET_BASED, datetime.now(UTC))
        elapsed = time.perf_counter() - started
    finally:
        await conn.close()
    counts = Counter(row["new_outcome"] for row in rows)
    return elapsed, {o: counts.get(o, 0) for o in ("success", "failure", "unknown")}


def _env(run_url: str, nats_url: str, workdir: Path, ports: dict[str, int]) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        {
            "DATABASE_URL": run_url,
            "NATS_URL": nats_url,
            "OUTRIDER_NATS_PASSWORD": NATS_SERVICE.password,
            "OUTRIDER_DATA_DIR": str(workdir / "data"),
            "OUTRIDER_DECISIONS_ADDR": f"127.0.0.1:{ports['decisions']}",
            "OUTRIDER_OUTCOMES_ADDR": f"127.0.0.1:{ports['outcomes']}",
            "OUTRIDER_INTERNAL_KEY": INTERNAL_KEY,
            "OUTRIDER_JWT_SECRET": JWT_SECRET,
            "OUTRIDER_EMBEDDING_DIM": str(DIMENSION),
            "AGENT_OUTCOME_WINDOW_HOURS": str(WINDOW_HOURS),
            # The timer must not sweep behind the measured call's back.
            "OUTRIDER_SWEEP_INTERVAL_S": "86400",
            "OUTRIDER_LOG_LEVEL": "WARNING",
            "PYTHONPATH": str(ROOT),
        }
    )
    return env


@contextmanager
def services(env: dict[str, str], workdir: Path) -> Iterator[dict[str, subprocess.Popen]]:
    processes = {
        context: subprocess.Popen(
            [sys.executable, "-m", "launcher.cli", "serve", context],
            env=env,
            cwd=ROOT,
            stdout=(workdir / f"{context}.log").open("a"),
            stderr=subprocess.STDOUT,
        )
        for context in ("decisions", "outcomes")
    }
    try:
        yield processes
    finally:
        for process in processes.values():
            process.terminate()
        for process in processes.values():
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()


async def _ready(addresses: list[str], workdir: Path, timeout: float = 60.0) -> None:
    """Wait until every context answers its health check."""
    deadline = time.monotonic() + timeout
    for address in addresses:
        async with channel(address, INTERNAL_KEY) as ch:
            health = health_pb2_grpc.HealthStub(ch)
            while True:
                try:
                    reply = await health.Check(health_pb2.HealthCheckRequest(), timeout=2)
                    if reply.status == health_pb2.HealthCheckResponse.SERVING:
                        break
                except grpc.aio.AioRpcError:
                    pass
                if time.monotonic() > deadline:
                    logs = await asyncio.to_thread(
                        lambda: "\n".join(p.read_text()[-2000:] for p in workdir.glob("*.log"))
                    )
                    raise RuntimeError(f"{address} did not start:\n{logs}")
                await asyncio.sleep(0.3)


def _cpu_seconds(process: psutil.Process) -> float:
    times = process.cpu_times()
    return times.user + times.system


async def time_sweep(
    env: dict[str, str], workdir: Path, outcomes_addr: str, batch: int
) -> tuple[float, dict[str, int], dict[str, float]]:
    """Seconds for one Sweep call, its counts, and the CPU seconds each service spent in it."""
    with services(env, workdir) as processes:
        await _ready([env["OUTRIDER_DECISIONS_ADDR"], outcomes_addr], workdir)
        watched = {context: psutil.Process(p.pid) for context, p in processes.items()}
        async with channel(outcomes_addr, INTERNAL_KEY) as ch:
            stub = outcomes_pb2_grpc.OutcomesStub(ch)
            before = {context: _cpu_seconds(p) for context, p in watched.items()}
            started = time.perf_counter()
            reply = await stub.Sweep(outcomes_pb2.SweepRequest(batch_size=batch))
            elapsed = time.perf_counter() - started
            cpu = {context: _cpu_seconds(p) - before[context] for context, p in watched.items()}
    counts = {"judged": reply.judged, **{o: reply.by_outcome[o] for o in ("success", "failure", "unknown")}}
    return elapsed, counts, cpu


async def clone(admin_dsn: str, template: str) -> None:
    admin = await asyncpg.connect(admin_dsn)
    try:
        await admin.execute(f"drop database if exists {RUN_DB} with (force)")
        await admin.execute(f"create database {RUN_DB} template {template}")
        # Flush what the copy dirtied, so no measurement pays for the last one's clone.
        await admin.execute("checkpoint")
    finally:
        await admin.close()


async def measure(stack: Stack, *, label: str, size: int, keep_index: bool, batches: list[int], rounds: int) -> str:
    template = f"{TEMPLATE}_{label.replace('-', '_')}"
    admin = await asyncpg.connect(stack.raw_dsn("postgres"))
    try:
        await admin.execute(f"drop database if exists {RUN_DB} with (force)")
        await admin.execute(f"drop database if exists {template} with (force)")
        await admin.execute(f"create database {template}")
    finally:
        await admin.close()
    print(f"[{label}] loading {size:,} pending decisions and their facts ...", flush=True)
    facts = await load(stack.database_url(template), size, keep_index=keep_index)
    print(f"[{label}] {json.dumps(facts)}", flush=True)

    expected = expected_counts(size)
    ports = {"decisions": reserved_port(), "outcomes": reserved_port()}
    env = _env(stack.database_url(RUN_DB), stack.nats_url, stack.data_dir, ports)
    paths = [f"sweep-{b}" for b in batches] + ["sql"]
    timings: dict[str, list[float]] = {path: [] for path in paths}
    cpu_seconds: dict[str, dict[str, list[float]]] = {path: {"decisions": [], "outcomes": []} for path in paths}
    for round_no in range(rounds):
        order = paths[round_no % len(paths) :] + paths[: round_no % len(paths)]
        for path in order:
            await clone(stack.raw_dsn("postgres"), template)
            cpu_note = ""
            if path == "sql":
                elapsed, counts = await time_sql(stack.database_url(RUN_DB))
                judged = sum(counts.values())
            else:
                elapsed, result, cpu = await time_sweep(
                    env, stack.data_dir, f"127.0.0.1:{ports['outcomes']}", int(path.split("-")[1])
                )
                judged = result.pop("judged")
                counts = result
                for context, seconds in cpu.items():
                    cpu_seconds[path][context].append(seconds)
                cpu_note = ", cpu s " + ", ".join(f"{c} {s:.2f}" for c, s in cpu.items())
            if judged != size or counts != expected:
                raise RuntimeError(f"{path} judged {judged} as {counts}; expected {size} as {expected}")
            timings[path].append(elapsed)
            busy = os.getloadavg()[0]
            print(
                f"[{label}] round {round_no + 1} {path}: {elapsed:.2f} s ({size / elapsed:,.0f} judged/s),"
                f" load average {busy:.1f}{cpu_note}",
                flush=True,
            )
    return report(label, size, rounds, facts, timings, cpu_seconds)


# ─── report ──────────────────────────────────────────────────────────────────


def report(
    label: str,
    size: int,
    rounds: int,
    facts: dict,
    timings: dict[str, list[float]],
    cpu_seconds: dict[str, dict[str, list[float]]],
) -> str:
    sql = statistics.median(timings["sql"])
    lines = [
        f"{label}: {size:,} pending decisions, {facts['facts_rows']:,} subjects with facts, "
        f"{rounds} rounds, decisions table {facts['decisions_table_mb']:.0f} MB",
        "",
        "| path | median s | runs (s) | judged/s | ratio to sql | CPU s: decisions / outcomes (median) |",
        "|---|---|---|---|---|---|",
    ]
    for path, runs in timings.items():
        median = statistics.median(runs)
        spent = cpu_seconds[path]
        cpu = (
            f"{statistics.median(spent['decisions']):.2f} / {statistics.median(spent['outcomes']):.2f}"
            if spent["decisions"]
            else "n/a (one statement in Postgres)"
        )
        lines.append(
            f"| {path} | {median:.2f} | {', '.join(f'{r:.2f}' for r in runs)} | "
            f"{size / median:,.0f} | {median / sql:.2f} | {cpu} |"
        )
    return "\n".join(lines)


async def main(args: argparse.Namespace) -> None:
    workdir = Path(tempfile.mkdtemp(prefix="outrider-bench-outcomes-"))
    try:
        with embedded_stack(workdir) as embedded:
            # Another Postgres server, when asked for, in place of the embedded one.
            stack = Stack(workdir, args.database_url, embedded.nats_url) if args.database_url else embedded
            await measure_all(stack, args)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


async def measure_all(stack: Stack, args: argparse.Namespace) -> None:
    tables = [
        await measure(
            stack,
            label="without-precedent-index",
            size=args.size,
            keep_index=False,
            batches=args.batch,
            rounds=args.rounds,
        )
    ]
    if args.indexed_size:
        tables.append(
            await measure(
                stack,
                label="with-precedent-index",
                size=args.indexed_size,
                keep_index=True,
                batches=args.batch,
                rounds=args.rounds,
            )
        )
    print("\n\n".join(tables), flush=True)


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=100_000, help="pending decisions to sweep (default 100,000)")
    parser.add_argument("--rounds", type=int, default=3, help="measurements of each path")
    parser.add_argument(
        "--batch",
        type=lambda s: [int(x) for x in s.split(",")],
        default=[500, 1000],
        help="sweep batch sizes to measure (default 500,1000)",
    )
    parser.add_argument(
        "--indexed-size",
        type=int,
        default=5_000,
        help="pending decisions swept with the precedent index kept (0 skips that set)",
    )
    parser.add_argument("--database-url", default="", help="use this Postgres server instead of an embedded one")
    args = parser.parse_args(argv)
    if args.size < 20 or (args.indexed_size and args.indexed_size < 20):
        parser.error("--size and --indexed-size must be at least 20")
    return args


if __name__ == "__main__":
    asyncio.run(main(parse()))
