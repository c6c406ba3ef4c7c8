"""Do retention's deletes keep up with ingest, and what do they cost it?

    python -m bench.retention.bench                                   # 5,000 events/s for 40 s, 3 rounds
    python -m bench.retention.bench --rate 2000 --seconds 10 --rounds 1   # smoke

Starts its own embedded Postgres and nats-server and the real telemetry
service (`outrider serve telemetry`), whose retention job deletes the runs
past OUTRIDER_TELEMETRY_RETENTION_DAYS at start and every hour, in batches of
services.common.retention.BATCH with PAUSE_S between them: the production
path, none of it in this process. Each round runs two phases, their order
alternating from round to round so drift in the neighbours' load favours
neither:

  alone     a publisher process sends task runs at a steady --rate for
            --seconds (JetStream-acknowledged, as the SDK publishes), with
            nothing past retention in the table;
  deleting  the same, with a backlog of runs that started 31 to 60 days ago
            in the table when the service starts, so its retention pass
            deletes them while the ingest writes.

Both phases report the rate the ingest stored (events over first publish
to the moment the consumer's ack floor covers them all; acks follow commits)
and the ingest latency of every run: from its publish (its finished_at, the
publisher's clock) to its received_at (the writing transaction's start, the
database's clock, on the same machine). The deleting phase reports deletes/s
while the ingest ran and after it, alone, until the backlog is gone, read
from the service's own retention counts (the Retention service /metrics
reads). Every phase checks zero loss and zero duplicates, and that the rows
deleted are exactly the backlog's.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import asyncpg

from bench.telemetry.bench import (
    KEY,
    ROOT,
    SERVICE_KEY,
    Stack,
    acked_through,
    publisher_result,
    start_service,
    stop_service,
)
from outrider.rpc import channel_with
from outrider.v1 import common_pb2, common_pb2_grpc
from services.common.callers import SERVICE_KEY_HEADER
from services.common.retention import BATCH, PAUSE_S
from services.telemetry.ingest import STREAM, SUBJECT
from tests.harness import NATS_SERVICE, create_database, embedded_stack, engine_nats, reserved_port, service_nats

DATABASE = "retention_bench"
RETENTION_DAYS = 30
AGENTS = 24


# --- the publisher, a separate process like an engine ----------------------


async def publish(url: str, round_id: str, rate: int, seconds: float) -> dict[str, float]:
    """Send `rate` runs a second for `seconds`, each acknowledged by the stream.

    A run finishes the moment it is published (finished_at is the publish
    time), so its latency is its received_at less its finished_at.
    """
    client = await engine_nats(url)
    inbox = client.new_inbox()
    answered = failed = 0
    count = int(rate * seconds)
    done = asyncio.Event()

    async def on_ack(msg) -> None:
        nonlocal answered, failed
        answered += 1
        if not msg.data.startswith(b'{"stream"') or b'"error"' in msg.data:
            failed += 1
        if answered == count:
            done.set()

    await client.subscribe(f"{inbox}.*", cb=on_ack, pending_msgs_limit=count + 1)
    started = time.time()
    for n in range(count):
        # Paced against the clock, not by sleeping a fixed step: a late tick
        # catches up instead of lowering the rate.
        due = started + n / rate
        if due > time.time():
            await asyncio.sleep(due - time.time())
        now = datetime.now(UTC)
        ms = 40 + (n * 37) % 4000
        body = {
            "agent_id": f"AGENT_{n % AGENTS:02d}",
            "task_id": f"{round_id}-{n}",
            "task_type": ("stall_response", "assignment_failure", "express_batch_dispatch")[n % 3],
            "status": "failed" if n % 11 == 0 else "succeeded",
            "started_at": (now - timedelta(milliseconds=ms)).isoformat(),
            "finished_at": now.isoformat(),
        }
        await client.publish(SUBJECT, json.dumps(body).encode(), reply=f"{inbox}.{n}")
    finished = time.time()
    await asyncio.wait_for(done.wait(), 300)
    await client.close()
    return {"started": started, "finished": finished, "failed": failed, "count": count}


def run_publisher(stack: Stack, round_id: str, rate: int, seconds: float) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "bench.retention.bench", "_publish", stack.nats_url, round_id, str(rate), str(seconds)],
        stdout=subprocess.PIPE,
        cwd=ROOT,
    )


# --- the harness -------------------------------------------------------------


@dataclass
class Phase:
    offered_per_s: float
    stored_per_s: float
    latency_ms: tuple[float, float, float]
    deletes_during_per_s: float | None = None
    deletes_alone_per_s: float | None = None


async def deleted_runs(stack: Stack) -> int:
    async with channel_with(stack.address, lambda: ((SERVICE_KEY_HEADER, SERVICE_KEY),)) as ch:
        report = await common_pb2_grpc.RetentionStub(ch).GetRetention(common_pb2.GetRetentionRequest())
    return next(table.deleted for table in report.tables if table.table == "runs")


async def reset(stack: Stack, js, backlog: int) -> int:
    """Empty table and stream, then `backlog` runs past retention; returns the stream's last sequence."""
    conn = await asyncpg.connect(stack.dsn)
    try:
        await conn.execute("truncate telemetry.runs")
        # Started 31 to 60 days ago, spread evenly: a month of runs past retention.
        await conn.execute(
            "insert into telemetry.runs (agent_id, task_id, task_type, status, started_at, finished_at, duration_ms)"
            " select 'AGENT_' || lpad((n % $2)::text, 2, '0'), 'old-' || n, 'stall_response', 'succeeded', at, at, 0"
            "   from generate_series(1, $1) as n,"
            "        lateral (select now() - make_interval(days => $3 + 1) - n * interval '29 days' / $1) as t(at)",
            backlog,
            AGENTS,
            RETENTION_DAYS,
        )
        # As a table written for a month would be: vacuumed and analysed.
        await conn.execute("vacuum analyze telemetry.runs")
    finally:
        await conn.close()
    await js.purge_stream(STREAM)
    return (await js.stream_info(STREAM)).state.last_seq


def _rate(samples: list[tuple[float, int]], start: float, end: float) -> float | None:
    """Deletes per second between two instants, from (time, deleted so far) samples."""
    inside = [(at, count) for at, count in samples if start <= at <= end]
    if len(inside) < 2 or inside[-1][0] <= inside[0][0]:
        return None
    return (inside[-1][1] - inside[0][1]) / (inside[-1][0] - inside[0][0])


async def phase(stack: Stack, js, args: argparse.Namespace, round_id: str, *, backlog: int) -> Phase:
    stop_service(stack)
    start_seq = await reset(stack, js, backlog)
    # The service's retention pass starts with the service, on the backlog if there is one.
    await start_service(stack)
    publisher = run_publisher(stack, round_id, args.rate, args.seconds)
    count = int(args.rate * args.seconds)
    samples: list[tuple[float, int]] = []
    try:
        while True:
            samples.append((time.time(), await deleted_runs(stack)))
            if publisher.poll() is not None and (await acked_through(js, start_seq + count))[0]:
                committed = time.time()
                break
            await asyncio.sleep(0.1)
    except BaseException:
        publisher.kill()
        raise
    published = publisher_result(publisher)
    # The deleter goes on alone until the backlog is gone: the counts are
    # then checked against a table nobody is changing.
    while samples[-1][1] < backlog:
        await asyncio.sleep(0.1)
        samples.append((time.time(), await deleted_runs(stack)))
    deleted = samples[-1][1]
    conn = await asyncpg.connect(stack.dsn)
    try:
        young = await conn.fetchval("select count(*) from telemetry.runs where task_id like $1", f"{round_id}-%")
        old = await conn.fetchval("select count(*) from telemetry.runs where task_id like 'old-%'")
        distinct = await conn.fetchval("select count(distinct (agent_id, task_id)) from telemetry.runs")
        total = await conn.fetchval("select count(*) from telemetry.runs")
        p50, p95, p99 = await conn.fetchval(
            "select percentile_cont(array[0.5, 0.95, 0.99]) within group"
            " (order by extract(epoch from received_at - finished_at) * 1000)"
            " from telemetry.runs where task_id like $1",
            f"{round_id}-%",
        )
    finally:
        await conn.close()
    if young != count or distinct != total or total != young + old or old + deleted != backlog:
        raise SystemExit(
            f"LOSS OR DUPLICATES: {young} of {count} runs, {old} old kept + {deleted} deleted of {backlog}"
        )
    result = Phase(
        offered_per_s=count / (published["finished"] - published["started"]),
        stored_per_s=count / (committed - published["started"]),
        latency_ms=(p50, p95, p99),
    )
    if backlog:
        emptied = next(at for at, seen in samples if seen >= backlog)
        # Beside the ingest until either ended; alone from then on, unless
        # the deleter emptied the backlog first.
        result.deletes_during_per_s = _rate(samples, published["started"], min(committed, emptied))
        if emptied > committed:
            result.deletes_alone_per_s = _rate(samples, committed, emptied)
    return result


def _figure(value: float | None) -> str:
    return "—" if value is None else f"{value:,.0f}"


def _print(name: str, result: Phase) -> None:
    p50, p95, p99 = result.latency_ms
    line = (
        f"  {name:<9} offered {result.offered_per_s:>7,.0f}/s stored {result.stored_per_s:>7,.0f}/s,"
        f" latency p50 {p50:5.0f} ms p95 {p95:5.0f} ms p99 {p99:5.0f} ms"
    )
    if name == "deleting":
        line += (
            f"; deletes {_figure(result.deletes_during_per_s)}/s beside the ingest,"
            f" {_figure(result.deletes_alone_per_s)}/s alone"
        )
    print(line, flush=True)


def _median(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return statistics.median(known) if known else None


async def bench(args: argparse.Namespace) -> None:
    # The deleter's ceiling is a full batch per pause; a backlog for that long
    # and then some outlasts the ingest, so the deleter never runs dry beside it.
    backlog = args.backlog if args.backlog is not None else int(BATCH / PAUSE_S * (args.seconds + 10))
    with tempfile.TemporaryDirectory(prefix="outrider-bench-") as tmp, embedded_stack(Path(tmp)) as embedded:
        directory = Path(tmp)
        database_url = await create_database(embedded, DATABASE, migrated=["telemetry"])
        address = f"127.0.0.1:{reserved_port()}"
        stack = Stack(
            directory,
            database_url,
            embedded.nats_url,
            address,
            {
                **os.environ,
                "DATABASE_URL": database_url,
                "NATS_URL": embedded.nats_url,
                "OUTRIDER_INTERNAL_KEY": KEY,
                "OUTRIDER_SERVICE_KEY": SERVICE_KEY,
                "OUTRIDER_JWT_SECRET": KEY,
                "OUTRIDER_NATS_PASSWORD": NATS_SERVICE.password,
                "OUTRIDER_DATA_DIR": str(directory / "data"),
                "OUTRIDER_TELEMETRY_ADDR": address,
                "OUTRIDER_TELEMETRY_BATCH_SIZE": str(args.batch_size),
                "OUTRIDER_TELEMETRY_RETENTION_DAYS": str(RETENTION_DAYS),
                "OUTRIDER_LOG_LEVEL": "WARNING",
            },
            "jetstream",
        )
        # Started once first so the stream exists; every phase restarts it.
        await start_service(stack)
        client = await service_nats(embedded.nats_url)
        js = client.jetstream()
        print(
            f"retention bench: {args.rate:,} runs/s for {args.seconds:g} s per phase, backlog {backlog:,} runs"
            f" past retention, {args.rounds} rounds; deleter batch {BATCH:,}, pause {PAUSE_S * 1000:.0f} ms;"
            f" ingest batch {args.batch_size}; {os.cpu_count()} CPUs",
            flush=True,
        )
        results: dict[str, list[Phase]] = {"alone": [], "deleting": []}
        try:
            for number in range(1, args.rounds + 1):
                print(f"round {number} (load average {os.getloadavg()[0]:.2f})", flush=True)
                for name in ("alone", "deleting") if number % 2 else ("deleting", "alone"):
                    result = await phase(
                        stack, js, args, f"{name}{number}", backlog=backlog if name == "deleting" else 0
                    )
                    results[name].append(result)
                    _print(name, result)
        finally:
            await client.close()
            stop_service(stack)
    print("medians of rounds:")
    print(
        "| phase | stored runs/s | latency p50 ms | p95 ms | p99 ms | deletes/s beside the ingest | deletes/s alone |"
    )
    print("|---|---|---|---|---|---|---|")
    for name, phases in results.items():
        quantiles = [_median([p.latency_ms[i] for p in phases]) for i in range(3)]
        deletes = (
            f"{_figure(_median([p.deletes_during_per_s for p in phases]))} |"
            f" {_figure(_median([p.deletes_alone_per_s for p in phases]))}"
            if name == "deleting"
            else "— | —"
        )
        print(
            f"| {name} | {_figure(_median([p.stored_per_s for p in phases]))} |"
            f" {' | '.join(_figure(q) for q in quantiles)} | {deletes} |"
        )
    ratios = [p.deletes_during_per_s / p.stored_per_s for p in results["deleting"] if p.deletes_during_per_s]
    if ratios:
        print(f"deletes / stored runs, beside each other (median of rounds): {statistics.median(ratios):.2f}")
    print("zero loss, zero duplicates, exactly the backlog deleted, in every phase")


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "_publish":
        url, round_id, rate, seconds = sys.argv[2], sys.argv[3], int(sys.argv[4]), float(sys.argv[5])
        print(json.dumps(asyncio.run(publish(url, round_id, rate, seconds))))
        return
    parser = argparse.ArgumentParser(description="retention deletes against ingest, side by side")
    parser.add_argument("--rate", type=int, default=5_000, help="runs published per second (default 5,000)")
    parser.add_argument("--seconds", type=float, default=40.0, help="seconds of publishing per phase (default 40)")
    parser.add_argument(
        "--backlog", type=int, default=None, help="runs past retention in the deleting phase (default: outlasts it)"
    )
    parser.add_argument("--rounds", type=int, default=3, help="rounds; figures are medians (default 3)")
    parser.add_argument("--batch-size", type=int, default=200, help="OUTRIDER_TELEMETRY_BATCH_SIZE (default 200)")
    asyncio.run(bench(parser.parse_args()))


if __name__ == "__main__":
    main()
