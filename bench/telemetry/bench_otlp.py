"""OTLP traces in: spans/s accepted and committed, beside the NATS task-run path.

    python -m bench.telemetry.bench_otlp                          # 200,000 spans, 3 rounds
    python -m bench.telemetry.bench_otlp --size 4000 --rounds 1   # smoke

Starts its own embedded Postgres and nats-server in a temporary directory,
the real telemetry service (`outrider serve telemetry`) and the real gateway
(`outrider gateway`) as subprocesses. Each round measures, side by side:

  otlp   a sender process (an instrumented engine's exporter) posts N spans
         to POST /v1/traces as protobuf export requests of 512 spans (the
         SDK's default batch), 4 at a time. Every trace is an agent's root
         span and one chat span with model and token attributes, so N spans
         become N/2 task runs and N/2 model calls. "accepted" runs from the
         first request to the last 200 (the spans are then stored in
         JetStream); "committed" from the first request until the service's
         counters show all N written (counters move after the commit).
  nats   N task events published to telemetry.task by the NATS path's own
         publisher (bench.telemetry.bench, JetStream-acked), committed when
         the task consumer's ack floor covers them.

Every round checks zero loss and zero duplicates on both paths: exactly N/2
runs and N/2 model calls with distinct keys, the counters moved by exactly
that, nothing malformed, refused or left in the stream.
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
from pathlib import Path

import asyncpg
import httpx
import psutil
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1 import trace_pb2

from bench.telemetry.bench import KEY, Stack, counters, live_round, start_service, stop_service
from tests.harness import NATS_SERVICE, create_database, embedded_stack, reserved_port, service_nats

ROOT = Path(__file__).resolve().parents[2]
DATABASE = "telemetry_otlp_bench"
SPANS_PER_REQUEST = 512
CONCURRENCY = 4
AGENTS = 24
START = 1_790_000_000_000_000_000


def _kv(key: str, value: str | int) -> KeyValue:
    if isinstance(value, int):
        return KeyValue(key=key, value=AnyValue(int_value=value))
    return KeyValue(key=key, value=AnyValue(string_value=value))


def bodies(round_id: int, size: int) -> list[bytes]:
    """`size` spans as export requests: per trace, an agent's root span and a chat span."""
    requests: list[bytes] = []
    traces = size // 2
    per_request = SPANS_PER_REQUEST // 2
    for first in range(0, traces, per_request):
        request = ExportTraceServiceRequest()
        by_agent: dict[int, trace_pb2.ScopeSpans] = {}
        for n in range(first, min(first + per_request, traces)):
            agent = n % AGENTS
            scope = by_agent.get(agent)
            if scope is None:
                resource_spans = request.resource_spans.add()
                resource_spans.resource.attributes.append(_kv("service.name", f"AGENT_{agent:02d}"))
                scope = by_agent[agent] = resource_spans.scope_spans.add()
            trace_id = (round_id << 64 | n + 1).to_bytes(16, "big")
            ms = 40 + (n * 37) % 4000
            failed = n % 11 == 0
            scope.spans.append(
                trace_pb2.Span(
                    trace_id=trace_id,
                    span_id=(1).to_bytes(8, "big"),
                    name=("stall_response", "assignment_failure", "express_batch_dispatch")[n % 3],
                    start_time_unix_nano=START,
                    end_time_unix_nano=START + ms * 1_000_000,
                    status=trace_pb2.Status(code=2 if failed else 0, message="rider unreachable" if failed else ""),
                )
            )
            scope.spans.append(
                trace_pb2.Span(
                    trace_id=trace_id,
                    span_id=(2).to_bytes(8, "big"),
                    parent_span_id=(1).to_bytes(8, "big"),
                    name="chat claude-sonnet-4",
                    start_time_unix_nano=START,
                    end_time_unix_nano=START + (ms // 2) * 1_000_000,
                    attributes=[
                        _kv("gen_ai.operation.name", "chat"),
                        _kv("gen_ai.provider.name", "anthropic"),
                        _kv("gen_ai.request.model", "claude-sonnet-4"),
                        _kv("gen_ai.response.model", "claude-sonnet-4-20250514"),
                        _kv("gen_ai.usage.input_tokens", 800 + n % 500),
                        _kv("gen_ai.usage.output_tokens", 40 + n % 90),
                        _kv("gen_ai.input.messages", '[{"role": "user", "content": "where is booking 1001?"}]'),
                    ],
                )
            )
        requests.append(request.SerializeToString())
    return requests


# --- the sender, a separate process like an engine's exporter -----------------


async def send(url: str, round_id: int, size: int) -> dict[str, float]:
    prepared = bodies(round_id, size)
    queue = list(reversed(prepared))
    refused = 0
    headers = {"Content-Type": "application/x-protobuf", "X-Internal-Key": KEY}

    async def worker(client: httpx.AsyncClient) -> None:
        nonlocal refused
        while queue:
            body = queue.pop()
            reply = await client.post("/v1/traces", content=body, headers=headers)
            # An empty protobuf answer is full success; anything else refused spans.
            if reply.status_code != 200 or reply.content:
                refused += 1

    async with httpx.AsyncClient(base_url=url, timeout=60) as client:
        started = time.time()
        await asyncio.gather(*(worker(client) for _ in range(CONCURRENCY)))
        finished = time.time()
    return {"started": started, "finished": finished, "refused": refused, "requests": len(prepared)}


# --- the harness -------------------------------------------------------------


def start_gateway(stack: Stack, port: int) -> subprocess.Popen[bytes]:
    log = open(stack.directory / "gateway.log", "ab")  # noqa: SIM115 - owned by the child
    return subprocess.Popen(
        [sys.executable, "-m", "launcher.cli", "gateway"],
        cwd=ROOT,
        env={**stack.service_env, "OUTRIDER_HTTP_PORT": str(port)},
        stdout=log,
        stderr=log,
    )


async def wait_healthy(url: str, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    async with httpx.AsyncClient(base_url=url) as client:
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise SystemExit("gateway exited; see gateway.log")
            try:
                if (await client.get("/healthz")).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            await asyncio.sleep(0.2)
    raise SystemExit("gateway did not start within 60 s")


def cpu_s(pid: int) -> float:
    times = psutil.Process(pid).cpu_times()
    return times.user + times.system


async def reset(stack: Stack, js) -> None:
    conn = await asyncpg.connect(stack.dsn)
    try:
        await conn.execute("truncate telemetry.runs; truncate telemetry.model_calls; truncate telemetry.runs_copy")
    finally:
        await conn.close()
    await js.purge_stream("TELEMETRY")


def send_spans(url: str, round_id: int, size: int) -> subprocess.Popen[bytes]:
    """A child process posting `size` spans to the gateway at `url`."""
    return subprocess.Popen(
        [sys.executable, "-m", "bench.telemetry.bench_otlp", "_send", url, str(round_id), str(size)],
        stdout=subprocess.PIPE,
        cwd=ROOT,
    )


async def otlp_round(
    stack: Stack, js, url: str, gateway: subprocess.Popen[bytes], size: int, round_id: int
) -> tuple[float, float]:
    await reset(stack, js)
    before = await counters(stack)
    service_cpu, gateway_cpu = cpu_s(stack.service.pid), cpu_s(gateway.pid)
    sender = send_spans(url, round_id, size)
    half = size // 2
    try:
        while True:
            seen = await counters(stack)
            if (
                seen["otlp_runs_inserted"] - before["otlp_runs_inserted"] >= half
                and seen["model_calls_inserted"] - before["model_calls_inserted"] >= half
            ):
                committed = time.time()
                break
            if sender.poll() not in (None, 0):
                raise SystemExit("sender failed")
            await asyncio.sleep(0.05)
    except BaseException:
        sender.kill()
        raise
    out, _ = sender.communicate()
    sent = json.loads(out)
    if sent["refused"]:
        raise SystemExit(f"{sent['refused']:.0f} export requests were not fully accepted")
    service_us = (cpu_s(stack.service.pid) - service_cpu) / size * 1e6
    gateway_us = (cpu_s(gateway.pid) - gateway_cpu) / size * 1e6
    await verify(stack, js, size, before)
    accepted = size / (sent["finished"] - sent["started"])
    rate = size / (committed - sent["started"])
    print(
        f"  otlp:  {rate:>9,.0f} spans/s committed, {accepted:,.0f} spans/s accepted"
        f" ({sent['requests']:.0f} requests; CPU per span: gateway {gateway_us:.1f} us,"
        f" service {service_us:.1f} us)",
        flush=True,
    )
    return accepted, rate


async def verify(stack: Stack, js, size: int, before: dict[str, int]) -> None:
    half = size // 2
    conn = await asyncpg.connect(stack.dsn)
    try:
        runs = await conn.fetchval("select count(*) from telemetry.runs")
        run_keys = await conn.fetchval("select count(distinct (agent_id, task_id)) from telemetry.runs")
        calls = await conn.fetchval("select count(*) from telemetry.model_calls")
        call_keys = await conn.fetchval("select count(distinct (trace_id, span_id)) from telemetry.model_calls")
        tokens = await conn.fetchval("select sum(input_tokens) from telemetry.model_calls")
    finally:
        await conn.close()
    if (runs, run_keys, calls, call_keys) != (half, half, half, half):
        raise SystemExit(
            f"LOSS OR DUPLICATES: {runs} runs ({run_keys} distinct), {calls} model calls"
            f" ({call_keys} distinct) for {half} traces"
        )
    if tokens != sum(800 + n % 500 for n in range(half)):
        raise SystemExit(f"token counts differ: {tokens}")
    after = await counters(stack)
    delta = {k: after[k] - before[k] for k in after}
    written = (delta["otlp_runs_inserted"], delta["model_calls_inserted"])
    refused = (
        delta["otlp_duplicates"],
        delta["otlp_malformed"],
        delta["otlp_spans_rejected"],
        delta["otlp_unwritable"],
    )
    if written != (half, half) or refused != (0, 0, 0, 0):
        raise SystemExit(f"counters disagree: {delta}")
    info = await js.consumer_info("TELEMETRY", "telemetry-otlp-ingest")
    if info.num_pending or info.num_ack_pending:
        raise SystemExit(f"left in the stream: {info.num_pending} pending, {info.num_ack_pending} unacked")


async def bench(args: argparse.Namespace) -> None:
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
                "OUTRIDER_JWT_SECRET": KEY,
                "OUTRIDER_NATS_PASSWORD": NATS_SERVICE.password,
                "OUTRIDER_DATA_DIR": str(directory / "data"),
                "OUTRIDER_TELEMETRY_ADDR": address,
                "OUTRIDER_TELEMETRY_BATCH_SIZE": str(args.batch_size),
                "OUTRIDER_TELEMETRY_BATCH_WAIT_MS": str(args.batch_wait_ms),
                "OUTRIDER_LOG_LEVEL": "WARNING",
            },
            "jetstream",
        )
        conn = await asyncpg.connect(stack.dsn)
        await conn.execute("create table telemetry.runs_copy (like telemetry.runs including all)")
        await conn.close()
        await start_service(stack)
        port = reserved_port()
        url = f"http://127.0.0.1:{port}"
        gateway = start_gateway(stack, port)
        client = await service_nats(embedded.nats_url)
        js = client.jetstream()
        print(
            f"OTLP bench: {args.size:,} spans x {args.rounds} rounds, {SPANS_PER_REQUEST} spans per request,"
            f" {CONCURRENCY} in flight; batch {args.batch_size} / {args.batch_wait_ms} ms;"
            f" {os.cpu_count()} CPUs",
            flush=True,
        )
        results: dict[str, list[float]] = {"accepted": [], "otlp": [], "nats": []}
        try:
            await wait_healthy(url, gateway)
            for number in range(1, args.rounds + 1):
                print(f"round {number} (load average {os.getloadavg()[0]:.2f})", flush=True)
                accepted, committed = await otlp_round(stack, js, url, gateway, args.size, number)
                results["accepted"].append(accepted)
                results["otlp"].append(committed)
                await reset(stack, js)
                results["nats"].append(await live_round(stack, js, args.size, f"nats{number}"))
                print(f"  ratio otlp / nats (committed): {results['otlp'][-1] / results['nats'][-1]:.3f}", flush=True)
        finally:
            await client.close()
            if gateway.poll() is None:
                gateway.terminate()
                gateway.wait(30)
            stop_service(stack)
        accepted, otlp, via_nats = (statistics.median(results[k]) for k in ("accepted", "otlp", "nats"))
        ratio = statistics.median(a / b for a, b in zip(results["otlp"], results["nats"], strict=True))
        print(f"median OTLP accepted  {accepted:,.0f} spans/s")
        print(f"median OTLP committed {otlp:,.0f} spans/s")
        print(f"median NATS committed {via_nats:,.0f} task events/s")
        print(f"median ratio OTLP / NATS (committed, per round) {ratio:.3f}")
        print("zero loss, zero duplicates in every round")


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "_send":
        url, round_id, size = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
        print(json.dumps(asyncio.run(send(url, round_id, size))))
        return
    parser = argparse.ArgumentParser(description="OTLP traces in, accepted and committed, beside the NATS path")
    parser.add_argument("--size", type=int, default=200_000, help="spans per round, even (default 200,000)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds; figures are medians (default 3)")
    parser.add_argument("--batch-size", type=int, default=200, help="OUTRIDER_TELEMETRY_BATCH_SIZE (default 200)")
    parser.add_argument(
        "--batch-wait-ms", type=int, default=2000, help="OUTRIDER_TELEMETRY_BATCH_WAIT_MS (default 2000)"
    )
    args = parser.parse_args()
    if args.size % 2:
        parser.error("--size must be even: every trace is two spans")
    asyncio.run(bench(args))


if __name__ == "__main__":
    main()
