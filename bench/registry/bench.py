"""Registry benchmarks, each measured side by side with its bare baseline:

    python -m bench.registry.bench                      # 20,000 requests per measurement, 3 rounds
    python -m bench.registry.bench --size 300 --rounds 1   # smoke
    python -m bench.registry.bench --rollouts 200          # the same with 200 running rollouts

Starts its own embedded Postgres in a temporary directory and runs, each as
its own process as in production: the registry (`outrider serve registry`),
the gateway (`outrider gateway`), and the two baselines of
bench/registry/baseline.py. This process only drives them.

  poll    GET /internal/ai/registry with If-None-Match equal to the current
          ETag through the gateway: the engine's steady-state poll, a 304
          answered from the gateway's watched copy. Side by side with GET
          /constant on a bare FastAPI app under the same uvicorn options.
          Keep-alive connections, --http-concurrency in flight.
  grpc    GetSnapshot(if_none_match=current) on the registry: not modified,
          through the internal-key interceptor. Side by side with a bare
          grpc.aio echo, no interceptor, of the same request message with the
          same metadata, so the client's work is the same for both.
          --grpc-concurrency calls in flight on one channel.
  patch   PATCH /admin/ai/skills/{id} through the gateway, each request a
          real change (a threshold flips between two valid values), so each
          bumps the version, writes its audit row and notifies every replica.
          Each worker edits its own skill, as operators edit different ones.
          Afterwards the audit table must hold exactly one row per request.

With --rollouts N, N running rollouts (one agent, N decision types) are
written before the first round, so the snapshot every poll names carries
them; the 304 poll should cost what it costs without them.

Within a round, baseline and subject take turns in ten slices each; the
figures are medians over rounds. Beside throughput, each server's CPU per
request (from /proc) is reported: on shared cores it is the steadier figure.
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
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

import asyncpg
import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from bench.registry.baseline import ECHO_METHOD
from gateway.auth import issue_token
from outrider.v1 import registry_pb2, registry_pb2_grpc
from tests.harness import Stack as EmbeddedStack
from tests.harness import create_database, embedded_stack, reserved_port

ROOT = Path(__file__).resolve().parents[2]
KEY = "bench-internal-key-0123456789abcdef"
JWT_SECRET = "bench-jwt-secret-0123456789abcdef"
DATABASE = "registry_bench"
# One tunable threshold of each skill the patch workers edit.
PATCH_TARGETS = (
    ("stall_response", "stallMinutes"),
    ("assignment_failure_triage", "realertEvery"),
    ("sla_guardian", "warnMinutesBeforeDue"),
    ("doorstep_stall", "stallMinutes"),
)


@dataclass
class Stack:
    workdir: Path
    database_url: str
    raw_dsn: str
    registry_port: int = field(default_factory=reserved_port)
    gateway_port: int = field(default_factory=reserved_port)
    bare_http_port: int = field(default_factory=reserved_port)
    echo_port: int = field(default_factory=reserved_port)
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)

    def env(self) -> dict[str, str]:
        return {
            **os.environ,
            "OUTRIDER_DATA_DIR": str(self.workdir / "data"),
            "DATABASE_URL": self.database_url,
            "OUTRIDER_INTERNAL_KEY": KEY,
            "OUTRIDER_JWT_SECRET": JWT_SECRET,
            "OUTRIDER_REGISTRY_ADDR": f"127.0.0.1:{self.registry_port}",
            "OUTRIDER_HTTP_PORT": str(self.gateway_port),
            "OUTRIDER_LOG_LEVEL": "WARNING",
        }

    def spawn(self, name: str, *args: str) -> None:
        self.processes[name] = subprocess.Popen(
            [sys.executable, "-m", *args], cwd=ROOT, env=self.env(), stdout=subprocess.DEVNULL
        )

    def cpu_seconds(self, name: str) -> float:
        """CPU time the named server has used so far (user + system, from /proc)."""
        fields = Path(f"/proc/{self.processes[name].pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self) -> None:
        for process in self.processes.values():
            process.terminate()
        for process in self.processes.values():
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()


async def start(workdir: Path, embedded: EmbeddedStack) -> Stack:
    database_url = await create_database(embedded, DATABASE)
    stack = Stack(workdir, database_url, embedded.raw_dsn(DATABASE))
    stack.spawn("registry", "launcher.cli", "serve", "registry")
    await wait_grpc_serving(f"127.0.0.1:{stack.registry_port}")
    stack.spawn("gateway", "launcher.cli", "gateway")
    stack.spawn("bare_http", "bench.registry.baseline", "http", str(stack.bare_http_port))
    stack.spawn("echo", "bench.registry.baseline", "grpc", str(stack.echo_port))
    for port in (stack.gateway_port, stack.bare_http_port, stack.echo_port):
        await wait_port(port)
    return stack


async def wait_grpc_serving(address: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    async with grpc.aio.insecure_channel(address) as ch:
        while time.monotonic() < deadline:
            try:
                reply = await health_pb2_grpc.HealthStub(ch).Check(health_pb2.HealthCheckRequest(), timeout=0.5)
                if reply.status == health_pb2.HealthCheckResponse.SERVING:
                    return
            except grpc.aio.AioRpcError:
                pass
            await asyncio.sleep(0.2)
    raise SystemExit(f"the registry at {address} did not become healthy")


async def wait_port(port: int, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.close()
            return
        except OSError:
            await asyncio.sleep(0.1)
    raise SystemExit(f"nothing listens on port {port}")


# ─── A minimal keep-alive HTTP/1.1 client ──────────────────────────────────
# httpx costs more CPU per request than the servers under test; on two shared
# cores it would measure itself.


class Connection:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    @classmethod
    async def open(cls, port: int) -> Connection:
        return cls(*await asyncio.open_connection("127.0.0.1", port))

    async def send(self, request: bytes) -> tuple[int, bytes]:
        self.writer.write(request)
        head = await self.reader.readuntil(b"\r\n\r\n")
        lines = head.split(b"\r\n")
        status = int(lines[0].split(b" ", 2)[1])
        length = 0
        for line in lines[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        body = await self.reader.readexactly(length) if length and status not in (204, 304) else b""
        return status, body

    def close(self) -> None:
        self.writer.close()


def http_request(method: str, path: str, headers: dict[str, str], body: bytes = b"") -> bytes:
    lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1", *(f"{k}: {v}" for k, v in headers.items())]
    if body:
        lines += ["Content-Type: application/json", f"Content-Length: {len(body)}"]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


@dataclass
class Measured:
    calls: int
    seconds: float
    latencies: list[float]
    server_cpu_s: float = 0.0

    @property
    def cpu_us_per_call(self) -> float:
        """The server's CPU per call: steadier than throughput when other work shares the cores."""
        return self.server_cpu_s / self.calls * 1e6

    @property
    def rate(self) -> float:
        return self.calls / self.seconds

    @property
    def p99_ms(self) -> float:
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000

    @property
    def p50_ms(self) -> float:
        return statistics.median(self.latencies) * 1000


async def drive(workers: list[Callable[[], Awaitable[None]]], size: int) -> Measured:
    """Run `size` calls spread over the workers, each call timed."""
    latencies: list[float] = []
    share = size // len(workers)

    async def loop(call: Callable[[], Awaitable[None]]) -> None:
        for _ in range(share):
            began = time.perf_counter()
            await call()
            latencies.append(time.perf_counter() - began)

    began = time.perf_counter()
    await asyncio.gather(*(loop(call) for call in workers))
    return Measured(share * len(workers), time.perf_counter() - began, latencies)


SLICES = 10


async def side_by_side(
    stack: Stack, subjects: dict[str, tuple[str, Callable[[int], Awaitable[Measured]]]], size: int
) -> dict[str, Measured]:
    """Measure every subject in SLICES turns, alternating between them.

    Other work comes and goes on two shared cores; taking turns spreads it
    over all subjects alike instead of letting it fall on whichever ran last.
    """
    totals = {name: Measured(0, 0.0, []) for name in subjects}
    for _ in range(SLICES):
        for name, (server, run) in subjects.items():
            part = await measured_on(stack, server, run(size // SLICES))
            total = totals[name]
            total.calls += part.calls
            total.seconds += part.seconds
            total.latencies += part.latencies
            total.server_cpu_s += part.server_cpu_s
    return totals


async def measured_on(stack: Stack, server: str, run: Awaitable[Measured]) -> Measured:
    """Run one measurement and charge it the CPU the named server spent meanwhile."""
    before = stack.cpu_seconds(server)
    result = await run
    result.server_cpu_s = stack.cpu_seconds(server) - before
    return result


async def http_measure(port: int, request: bytes, expect: int, size: int, concurrency: int) -> Measured:
    connections = [await Connection.open(port) for _ in range(concurrency)]

    def caller(connection: Connection) -> Callable[[], Awaitable[None]]:
        async def call() -> None:
            status, _ = await connection.send(request)
            if status != expect:
                raise SystemExit(f"expected {expect}, got {status} from port {port}")

        return call

    try:
        return await drive([caller(c) for c in connections], size)
    finally:
        for connection in connections:
            connection.close()


# ─── The three measurements ────────────────────────────────────────────────


async def current_etag(stack: Stack) -> str:
    connection = await Connection.open(stack.gateway_port)
    try:
        request = http_request("GET", "/internal/ai/registry", {"X-Internal-Key": KEY})
        connection.writer.write(request)
        head = await connection.reader.readuntil(b"\r\n\r\n")
    finally:
        connection.close()
    for line in head.split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"etag":
            return value.strip().decode()
    raise SystemExit("the gateway sent no ETag")


async def settled_etag(stack: Stack) -> str:
    """The gateway's etag once it stops moving: the previous round's patches have all arrived."""
    etag = await current_etag(stack)
    while True:
        await asyncio.sleep(0.5)
        again = await current_etag(stack)
        if again == etag:
            return etag
        etag = again


async def poll_round(stack: Stack, size: int, concurrency: int) -> dict[str, Measured]:
    etag = await settled_etag(stack)
    poll = http_request("GET", "/internal/ai/registry", {"X-Internal-Key": KEY, "If-None-Match": etag})
    bare = http_request("GET", "/constant", {})
    await http_measure(stack.bare_http_port, bare, 200, min(size, 200), 1)  # warm-up
    await http_measure(stack.gateway_port, poll, 304, min(size, 200), 1)
    return await side_by_side(
        stack,
        {
            "bare": ("bare_http", lambda n: http_measure(stack.bare_http_port, bare, 200, n, concurrency)),
            "poll": ("gateway", lambda n: http_measure(stack.gateway_port, poll, 304, n, concurrency)),
        },
        size,
    )


async def grpc_round(stack: Stack, size: int, concurrency: int) -> dict[str, Measured]:
    metadata = (("x-internal-key", KEY),)
    async with (
        grpc.aio.insecure_channel(f"127.0.0.1:{stack.registry_port}") as registry_channel,
        grpc.aio.insecure_channel(f"127.0.0.1:{stack.echo_port}") as echo_channel,
    ):
        registry = registry_pb2_grpc.RegistryStub(registry_channel)
        etag = (await registry.GetSnapshot(registry_pb2.GetSnapshotRequest(), metadata=metadata)).snapshot.etag
        request = registry_pb2.GetSnapshotRequest(if_none_match=etag)
        echo = echo_channel.unary_unary(
            ECHO_METHOD,
            request_serializer=registry_pb2.GetSnapshotRequest.SerializeToString,
            response_deserializer=registry_pb2.GetSnapshotRequest.FromString,
        )

        async def get() -> None:
            reply = await registry.GetSnapshot(request, metadata=metadata)
            if not reply.not_modified:
                raise SystemExit("GetSnapshot answered a full snapshot for the current etag")

        async def ping() -> None:
            await echo(request, metadata=metadata)

        await drive([ping], min(size, 200))
        await drive([get], min(size, 200))
        return await side_by_side(
            stack,
            {
                "echo": ("echo", lambda n: drive([ping] * concurrency, n)),
                "get": ("registry", lambda n: drive([get] * concurrency, n)),
            },
            size,
        )


async def patch_round(stack: Stack, size: int, concurrency: int) -> Measured:
    token = issue_token(JWT_SECRET, sub="bench", role=1, email="bench@example.com")
    connections = [await Connection.open(stack.gateway_port) for _ in range(concurrency)]
    targets = await patch_targets(stack)

    def caller(index: int) -> Callable[[], Awaitable[None]]:
        skill_id, key, values = targets[index % len(targets)]
        connection = connections[index]
        flip = [0]

        async def call() -> None:
            flip[0] ^= 1
            body = json.dumps({"thresholds": {key: values[flip[0]]}}).encode()
            headers = {"Authorization": f"Bearer {token}"}
            status, answer = await connection.send(http_request("PATCH", f"/admin/ai/skills/{skill_id}", headers, body))
            if status != 200:
                raise SystemExit(f"PATCH {skill_id} answered {status}: {answer[:200]!r}")

        return call

    try:
        return await drive([caller(i) for i in range(concurrency)], size)
    finally:
        for connection in connections:
            connection.close()


async def patch_targets(stack: Stack) -> list[tuple[str, str, tuple[int, int]]]:
    """Each target skill's key and two values its schema accepts, the current one first."""
    conn = await asyncpg.connect(stack.raw_dsn, server_settings={"search_path": "registry"})
    try:
        targets = []
        for skill_id, key in PATCH_TARGETS:
            row = await conn.fetchrow("select thresholds, thresholds_schema from skills where id = $1", skill_id)
            spec = json.loads(row["thresholds_schema"])[key]
            current = json.loads(row["thresholds"])[key]
            other = current + spec["step"] if current + spec["step"] <= spec["max"] else current - spec["step"]
            targets.append((skill_id, key, (current, other)))
        return targets
    finally:
        await conn.close()


async def add_rollouts(stack: Stack, count: int) -> None:
    """`count` running rollouts of one agent's model pin, written straight into
    the registry's tables (the API's create path is not what is measured),
    then announced so the registry rebuilds its snapshot with them."""
    conn = await asyncpg.connect(stack.raw_dsn, server_settings={"search_path": "registry"})
    try:
        await conn.execute(
            """
            insert into rollouts (id, agent_id, decision_type, change, baseline, steps, step, percent, state,
                                  max_drop, confidence, min_judged, created_by)
            select gen_random_uuid(), 'EXCEPTION_AGENT', 'bench_type_' || n, '{"model": "claude-opus-5-5"}',
                   '{"model": null}', '{5,25,50,100}', 0, 5, 'running', 0.05, 0.95, 50, 'bench'
              from generate_series(1, $1) as n
            """,
            count,
        )
        await conn.execute("select pg_notify('registry_changed', 'rollout:bench')")
    finally:
        await conn.close()


async def snapshot_bytes(stack: Stack) -> int:
    connection = await Connection.open(stack.gateway_port)
    try:
        status, body = await connection.send(http_request("GET", "/internal/ai/registry", {"X-Internal-Key": KEY}))
    finally:
        connection.close()
    if status != 200:
        raise SystemExit(f"the snapshot answered {status}")
    return len(body)


async def audit_rows(stack: Stack) -> int:
    conn = await asyncpg.connect(stack.raw_dsn, server_settings={"search_path": "registry"})
    try:
        return await conn.fetchval("select count(*) from audit where changed_by = 'bench'")
    finally:
        await conn.close()


# ─── Report ────────────────────────────────────────────────────────────────


def median(values: list[float]) -> float:
    return statistics.median(values)


async def run(args: argparse.Namespace) -> dict[str, object]:
    with (
        tempfile.TemporaryDirectory(prefix="outrider-bench-registry-") as workdir,
        embedded_stack(Path(workdir)) as embedded,
    ):
        stack = await start(Path(workdir), embedded)
        try:
            if args.rollouts:
                await add_rollouts(stack, args.rollouts)
                await settled_etag(stack)
            document_bytes = await snapshot_bytes(stack)
            polls, grpcs, patches = [], [], []
            for _ in range(args.rounds):
                polls.append(await poll_round(stack, args.size, args.http_concurrency))
                grpcs.append(await grpc_round(stack, args.size, args.grpc_concurrency))
                patches.append(
                    await patch_round(stack, max(args.size // 10, args.patch_concurrency), args.patch_concurrency)
                )
            audited = await audit_rows(stack)
        finally:
            stack.stop()
    patched = sum(m.calls for m in patches)
    if audited != patched:
        raise SystemExit(f"{patched} patches succeeded but {audited} audit rows were written")
    bare_rate = median([r["bare"].rate for r in polls])
    poll_rate = median([r["poll"].rate for r in polls])
    echo_rate = median([r["echo"].rate for r in grpcs])
    get_rate = median([r["get"].rate for r in grpcs])
    return {
        "rounds": args.rounds,
        "size": args.size,
        "rollouts": args.rollouts,
        "snapshot_bytes": document_bytes,
        "poll": {
            "bare_rps": round(bare_rate),
            "gateway_304_rps": round(poll_rate),
            "bare_p99_ms": round(median([r["bare"].p99_ms for r in polls]), 2),
            "gateway_304_p99_ms": round(median([r["poll"].p99_ms for r in polls]), 2),
            "slowdown_vs_bare": round(bare_rate / poll_rate, 2),
            "p99_ratio_vs_bare": round(median([r["poll"].p99_ms / r["bare"].p99_ms for r in polls]), 2),
            "bare_server_cpu_us_per_request": round(median([r["bare"].cpu_us_per_call for r in polls])),
            "gateway_server_cpu_us_per_request": round(median([r["poll"].cpu_us_per_call for r in polls])),
            "cpu_ratio_vs_bare": round(
                median([r["poll"].cpu_us_per_call / r["bare"].cpu_us_per_call for r in polls]), 2
            ),
        },
        "grpc": {
            "echo_cps": round(echo_rate),
            "get_snapshot_not_modified_cps": round(get_rate),
            "ratio_to_echo": round(median([r["get"].rate / r["echo"].rate for r in grpcs]), 2),
            "echo_p99_ms": round(median([r["echo"].p99_ms for r in grpcs]), 2),
            "get_p99_ms": round(median([r["get"].p99_ms for r in grpcs]), 2),
            "echo_server_cpu_us_per_call": round(median([r["echo"].cpu_us_per_call for r in grpcs])),
            "registry_server_cpu_us_per_call": round(median([r["get"].cpu_us_per_call for r in grpcs])),
            "cpu_ratio_echo_to_get": round(
                median([r["echo"].cpu_us_per_call / r["get"].cpu_us_per_call for r in grpcs]), 2
            ),
        },
        "patch": {
            "requests_per_round": patches[0].calls,
            "rps": round(median([m.rate for m in patches]), 1),
            "p50_ms": round(median([m.p50_ms for m in patches]), 2),
            "p99_ms": round(median([m.p99_ms for m in patches]), 2),
            "audit_rows": audited,
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=20000, help="requests per measurement (patch: a tenth)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--http-concurrency", type=int, default=8)
    parser.add_argument("--grpc-concurrency", type=int, default=16)
    parser.add_argument("--patch-concurrency", type=int, default=4)
    parser.add_argument("--rollouts", type=int, default=0, help="running rollouts in the snapshot while measuring")
    args = parser.parse_args()
    print(json.dumps(asyncio.run(run(args)), indent=2))


if __name__ == "__main__":
    main()
