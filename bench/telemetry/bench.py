"""Telemetry ingest throughput: published -> committed, against a bare COPY.

    python -m bench.telemetry.bench                            # 500,000 events, 3 rounds
    python -m bench.telemetry.bench --size 2000 --rounds 1     # smoke

Starts its own embedded Postgres and nats-server in a temporary directory and
the real telemetry service as a subprocess (`outrider serve telemetry`), so
what is measured is the production path: JetStream durable pull consumer,
one statement per batch, ack after commit. Each round measures, side by side:

  live   a publisher process sends N task events while the service ingests;
         time from the first publish to the moment the consumer's ack floor
         covers all N (acks follow commits, so every run is then committed).
         --publisher jetstream (default) has every publish acknowledged by
         the stream, as the engine SDK does; --publisher core sends plain
         NATS publishes the stream captures, as the seed's engine did.
  drain  N events already waiting in the stream (published while the
         consumer was paused, as they pile up behind an outage); rate from
         the first commit after resuming to the last, the service alone on
         the machine.
  copy   the same N rows written by one asyncpg COPY into a table of the same
         shape and indexes: the ceiling, Postgres with nothing else to do.

Every round checks zero loss and zero duplicates: the table holds exactly N
rows, the service counted N inserted and 0 duplicates, nothing is left
pending. Figures are medians over rounds.
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
from pathlib import Path

import asyncpg
import grpc
import psutil
from grpc_health.v1 import health_pb2, health_pb2_grpc

from outrider.rpc import channel_with
from outrider.v1 import telemetry_pb2, telemetry_pb2_grpc
from services.common.callers import SERVICE_KEY_HEADER
from services.telemetry import rules
from services.telemetry.ingest import DURABLE, STREAM, SUBJECT
from tests.harness import NATS_SERVICE, create_database, embedded_stack, engine_nats, reserved_port, service_nats

ROOT = Path(__file__).resolve().parents[2]

KEY = "bench-internal-key-0123456789abcdef"
SERVICE_KEY = "bench-service-key-0123456789abcdef"
DATABASE = "telemetry_bench"
AGENTS = 24
COLUMNS = ["agent_id", "task_id", "task_type", "status", "started_at", "finished_at", "duration_ms", "error"]


def event(round_id: str, n: int) -> bytes:
    """The n-th engine-shaped task event of a round (naive engine times)."""
    ms = 40 + (n * 37) % 4000
    failed = n % 11 == 0
    body = {
        "agent_id": f"AGENT_{n % AGENTS:02d}",
        "task_id": f"{round_id}-{n}",
        "task_type": ("stall_response", "assignment_failure", "express_batch_dispatch")[n % 3],
        "status": "failed" if failed else "succeeded",
        "started_at": "2026-09-29T20:57:00.000",
        "finished_at": f"2026-09-29T20:57:{ms // 1000:02d}.{ms % 1000:03d}",
    }
    if failed:
        body["error"] = "rider unreachable"
    return json.dumps(body).encode()


# --- the publisher, a separate process like an engine ----------------------

WINDOW = 8_000


async def publish(url: str, round_id: str, count: int, mode: str) -> dict[str, float]:
    """Send `count` events and report when the first and last went out.

    `jetstream`: every publish is acknowledged by the stream before it counts,
    with up to WINDOW in flight; one subscription collects the acks, which
    costs a fraction of nats-py's publish_async (a future per message) and
    leaves more of the shared CPUs to what is measured. `core`: plain NATS
    publishes the stream captures, unacknowledged, flushed every 5,000.
    """
    client = await engine_nats(url)
    answered = failed = sent = 0
    room = asyncio.Event()
    done = asyncio.Event()

    async def on_ack(msg) -> None:
        nonlocal answered, failed
        answered += 1
        # A PubAck names the stream; an error or a no-responders status does not.
        if not msg.data.startswith(b'{"stream"') or b'"error"' in msg.data:
            failed += 1
        if sent - answered <= WINDOW // 2:
            room.set()
        if answered == count:
            done.set()

    started = time.time()
    if mode == "jetstream":
        inbox = client.new_inbox()
        await client.subscribe(f"{inbox}.*", cb=on_ack, pending_msgs_limit=WINDOW * 4)
        for n in range(count):
            if sent - answered >= WINDOW:
                room.clear()
                await room.wait()
            await client.publish(SUBJECT, event(round_id, n), reply=f"{inbox}.{n}")
            sent += 1
            if n % 500 == 499:
                await asyncio.sleep(0)
        await asyncio.wait_for(done.wait(), 300)
    else:
        for n in range(count):
            await client.publish(SUBJECT, event(round_id, n))
            if n % 5000 == 4999:
                await client.flush()
        await client.flush()
    finished = time.time()
    await client.close()
    return {"started": started, "finished": finished, "failed": failed}


# --- the harness -------------------------------------------------------------


@dataclass
class Stack:
    directory: Path
    database_url: str
    nats_url: str
    address: str
    service_env: dict[str, str]
    publisher: str
    service: subprocess.Popen[bytes] | None = None

    @property
    def dsn(self) -> str:
        return self.database_url.replace("postgresql+asyncpg://", "postgresql://")


def spawn_service(stack: Stack) -> None:
    log = open(stack.directory / "telemetry.log", "ab")  # noqa: SIM115 - owned by the child
    stack.service = subprocess.Popen(
        [sys.executable, "-m", "launcher.cli", "serve", "telemetry"],
        cwd=ROOT,
        env=stack.service_env,
        stdout=log,
        stderr=log,
    )


async def start_service(stack: Stack) -> None:
    spawn_service(stack)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            async with grpc.aio.insecure_channel(stack.address) as ch:
                reply = await health_pb2_grpc.HealthStub(ch).Check(health_pb2.HealthCheckRequest(), timeout=0.5)
            if reply.status == health_pb2.HealthCheckResponse.SERVING:
                return
        except grpc.aio.AioRpcError:
            pass
        if stack.service.poll() is not None:
            raise SystemExit(f"telemetry service exited; see {stack.directory / 'telemetry.log'}")
        await asyncio.sleep(0.2)
    raise SystemExit("telemetry service did not start within 60 s")


def stop_service(stack: Stack) -> None:
    if stack.service is not None and stack.service.poll() is None:
        stack.service.terminate()
        stack.service.wait(30)
    stack.service = None


async def counters(stack: Stack) -> dict[str, int]:
    # Counters are the platform's own: read with the service key.
    async with channel_with(stack.address, lambda: ((SERVICE_KEY_HEADER, SERVICE_KEY),)) as ch:
        reply = await telemetry_pb2_grpc.TelemetryStub(ch).GetCounters(telemetry_pb2.GetCountersRequest())
    # The totals only: the per-field breakdown of malformed runs is a map.
    return {f.name: getattr(reply, f.name) for f in telemetry_pb2.Counters.DESCRIPTOR.fields if not f.is_repeated}


def service_cpu_s(stack: Stack) -> float:
    """CPU seconds the service process has used: unlike a rate, this does not
    move when a neighbour takes the shared cores."""
    assert stack.service is not None
    times = psutil.Process(stack.service.pid).cpu_times()
    return times.user + times.system


async def reset(stack: Stack, js) -> int:
    """Empty table and stream; returns the stream's last sequence."""
    conn = await asyncpg.connect(stack.dsn)
    try:
        await conn.execute("truncate telemetry.runs; truncate telemetry.runs_copy")
    finally:
        await conn.close()
    await js.purge_stream(STREAM)
    return (await js.stream_info(STREAM)).state.last_seq


def run_publisher(stack: Stack, round_id: str, size: int) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "bench.telemetry.bench",
            "_publish",
            stack.nats_url,
            round_id,
            str(size),
            stack.publisher,
        ],
        stdout=subprocess.PIPE,
        cwd=ROOT,
    )


def publisher_result(process: subprocess.Popen[bytes]) -> dict[str, float]:
    out, _ = process.communicate()
    if process.returncode != 0:
        raise SystemExit("publisher failed")
    result = json.loads(out)
    if result["failed"]:
        raise SystemExit(f"{result['failed']:.0f} publishes were not acked by JetStream")
    return result


async def acked_through(js, last_seq: int) -> tuple[bool, int]:
    info = await js.consumer_info(STREAM, DURABLE)
    return info.ack_floor.stream_seq >= last_seq and info.num_ack_pending == 0, info.ack_floor.stream_seq


async def verify(stack: Stack, size: int, before: dict[str, int]) -> dict[str, int]:
    conn = await asyncpg.connect(stack.dsn)
    try:
        rows = await conn.fetchval("select count(*) from telemetry.runs")
        distinct = await conn.fetchval("select count(distinct (agent_id, task_id)) from telemetry.runs")
    finally:
        await conn.close()
    after = await counters(stack)
    delta = {k: after[k] - before[k] for k in after}
    if rows != size or distinct != size:
        raise SystemExit(f"LOSS OR DUPLICATES: {rows} rows ({distinct} distinct) for {size} events")
    if delta["inserted"] != size or delta["duplicates"] != 0 or delta["malformed"] != 0:
        raise SystemExit(f"counters disagree: {delta}")
    return delta


async def live_round(stack: Stack, js, size: int, round_id: str) -> float:
    last_seq = await reset(stack, js) + size
    before = await counters(stack)
    cpu = service_cpu_s(stack)
    publisher = run_publisher(stack, round_id, size)
    try:
        while True:
            done, _ = await acked_through(js, last_seq)
            if done:
                committed = time.time()
                break
            await asyncio.sleep(0.05)
    except BaseException:
        publisher.kill()
        raise
    cpu_us = (service_cpu_s(stack) - cpu) / size * 1e6
    published = publisher_result(publisher)
    delta = await verify(stack, size, before)
    rate = size / (committed - published["started"])
    publisher_rate = size / (published["finished"] - published["started"])
    print(
        f"  live:  {rate:>9,.0f} events/s  (publisher done at {publisher_rate:,.0f}/s,"
        f" service CPU {cpu_us:.1f} us/event, redelivered {delta['redelivered']})",
        flush=True,
    )
    return rate


async def drain_round(stack: Stack, js, size: int, round_id: str) -> float:
    start_seq = await reset(stack, js)
    last_seq = start_seq + size
    # Paused, the consumer lets the events pile up in the stream as they would
    # behind an outage; the service keeps running and pulling meanwhile.
    await js.pause_consumer(STREAM, DURABLE, "2999-01-01T00:00:00Z")
    before = await counters(stack)
    publisher_result(run_publisher(stack, round_id, size))
    info = await js.consumer_info(STREAM, DURABLE)
    if info.num_pending != size or info.ack_floor.stream_seq != start_seq:
        raise SystemExit(f"backlog not held: {info.num_pending} pending, floor {info.ack_floor.stream_seq}")
    resumed = time.time()
    cpu = service_cpu_s(stack)
    await js.resume_consumer(STREAM, DURABLE)
    # The rate runs from the first commit seen, not from the resume: a pull
    # request made while paused waits out its expiry first, and that start-up
    # gap says nothing about how fast a backlog drains.
    first: tuple[float, int] | None = None
    while True:
        done, floor = await acked_through(js, last_seq)
        committed = time.time()
        if done:
            break
        if first is None and floor > start_seq:
            first = (committed, floor)
        await asyncio.sleep(0.05)
    cpu_us = (service_cpu_s(stack) - cpu) / size * 1e6
    delta = await verify(stack, size, before)
    rate = size / (committed - resumed) if first is None else (last_seq - first[1]) / (committed - first[0])
    print(
        f"  drain: {rate:>9,.0f} events/s  (service CPU {cpu_us:.1f} us/event, redelivered {delta['redelivered']})",
        flush=True,
    )
    return rate


async def copy_round(stack: Stack, size: int, round_id: str) -> float:
    runs = [rules.parse_task(event(round_id, n)) for n in range(size)]
    records = [
        (r.agent_id, r.task_id, r.task_type, r.status, r.started_at, r.finished_at, r.duration_ms, r.error)
        for r in runs
    ]
    conn = await asyncpg.connect(stack.dsn)
    try:
        await conn.execute("truncate telemetry.runs_copy")
        started = time.perf_counter()
        await conn.copy_records_to_table("runs_copy", schema_name="telemetry", records=records, columns=COLUMNS)
        elapsed = time.perf_counter() - started
        rows = await conn.fetchval("select count(*) from telemetry.runs_copy")
    finally:
        await conn.close()
    if rows != size:
        raise SystemExit(f"COPY wrote {rows} rows for {size}")
    rate = size / elapsed
    print(f"  copy:  {rate:>9,.0f} rows/s", flush=True)
    return rate


async def bench(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="outrider-bench-") as tmp, embedded_stack(Path(tmp)) as embedded:
        directory = Path(tmp)
        nats_url = embedded.nats_url
        database_url = await create_database(embedded, DATABASE, migrated=["telemetry"])
        address = f"127.0.0.1:{reserved_port()}"
        stack = Stack(
            directory,
            database_url,
            nats_url,
            address,
            {
                **os.environ,
                "DATABASE_URL": database_url,
                "NATS_URL": nats_url,
                "OUTRIDER_INTERNAL_KEY": KEY,
                "OUTRIDER_SERVICE_KEY": SERVICE_KEY,
                "OUTRIDER_JWT_SECRET": KEY,
                "OUTRIDER_NATS_PASSWORD": NATS_SERVICE.password,
                "OUTRIDER_DATA_DIR": str(directory / "data"),
                "OUTRIDER_TELEMETRY_ADDR": address,
                "OUTRIDER_TELEMETRY_BATCH_SIZE": str(args.batch_size),
                "OUTRIDER_TELEMETRY_BATCH_WAIT_MS": str(args.batch_wait_ms),
                "OUTRIDER_LOG_LEVEL": "WARNING",
            },
            args.publisher,
        )
        conn = await asyncpg.connect(stack.dsn)
        await conn.execute("create table telemetry.runs_copy (like telemetry.runs including all)")
        await conn.close()
        await start_service(stack)
        client = await service_nats(nats_url)
        js = client.jetstream()
        print(
            f"telemetry bench: {args.size:,} events x {args.rounds} rounds, batch {args.batch_size}"
            f" / {args.batch_wait_ms} ms, {args.publisher} publisher, {os.cpu_count()} CPUs",
            flush=True,
        )
        results: dict[str, list[float]] = {"live": [], "drain": [], "copy": []}
        try:
            for number in range(1, args.rounds + 1):
                # The machine may be shared; its load says how far to trust a round.
                print(f"round {number} (load average {os.getloadavg()[0]:.2f})", flush=True)
                results["live"].append(await live_round(stack, js, args.size, f"live{number}"))
                results["drain"].append(await drain_round(stack, js, args.size, f"drain{number}"))
                results["copy"].append(await copy_round(stack, args.size, f"live{number}"))
                print(
                    f"  ratio to COPY: live {results['live'][-1] / results['copy'][-1]:.3f},"
                    f" drain {results['drain'][-1] / results['copy'][-1]:.3f}",
                    flush=True,
                )
        finally:
            await client.close()
            stop_service(stack)
        live, drain, copy = (statistics.median(results[k]) for k in ("live", "drain", "copy"))
        # Ratios are taken round by round, each against the COPY measured
        # next to it, so a busy neighbour slows both sides of a ratio.
        live_ratio = statistics.median(a / b for a, b in zip(results["live"], results["copy"], strict=True))
        drain_ratio = statistics.median(a / b for a, b in zip(results["drain"], results["copy"], strict=True))
        print(f"median live  {live:,.0f} events/s; median ratio to COPY {live_ratio:.3f}")
        print(f"median drain {drain:,.0f} events/s; median ratio to COPY {drain_ratio:.3f}")
        print(f"median COPY  {copy:,.0f} rows/s")
        print("zero loss, zero duplicates in every round")


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "_publish":
        url, round_id, count, mode = sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
        print(json.dumps(asyncio.run(publish(url, round_id, count, mode))))
        return
    parser = argparse.ArgumentParser(description="telemetry ingest throughput, published -> committed")
    parser.add_argument("--size", type=int, default=500_000, help="events per round (default 500,000)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds; figures are medians (default 3)")
    parser.add_argument("--batch-size", type=int, default=200, help="OUTRIDER_TELEMETRY_BATCH_SIZE (default 200)")
    parser.add_argument(
        "--publisher",
        choices=("jetstream", "core"),
        default="jetstream",
        help="acked JetStream publishes (default) or plain NATS publishes",
    )
    parser.add_argument(
        "--batch-wait-ms", type=int, default=2000, help="OUTRIDER_TELEMETRY_BATCH_WAIT_MS (default 2000)"
    )
    asyncio.run(bench(parser.parse_args()))


if __name__ == "__main__":
    main()
