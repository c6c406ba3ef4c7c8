"""Decision memory benchmark: precedent-search recall and speed, record throughput.

    .venv/bin/python -m bench.decisions.bench_similar                 # 200,000 judged decisions
    .venv/bin/python -m bench.decisions.bench_similar --size 2000     # smoke run, under a minute

What it does, in one run so every figure shares the machine's state:

1. Starts an embedded Postgres (or uses --database-url), migrates the
   decisions schema, and loads --size judged decisions (plus a tenth as many
   pending and unknown ones, which precedent search must never read) with
   COPY and binary vectors. The partial HNSW index is dropped for the load and
   rebuilt afterwards from its own definition, as a bulk import should.
2. Recall@10 against exact search (the same query with the distance written
   as a function, which no index serves), per decision type, for several
   ef_search values and for the plan the service chooses itself.
3. Starts the decisions context and the gateway as their own processes, as
   `outrider serve decisions` and `outrider gateway` run them, then measures
   similar-search queries/s and p50/p99 latency for the bare SQL, gRPC and
   gateway paths side by side, in interleaved rounds; reports medians.
4. Record throughput through gRPC and through the gateway.

Data: vectors are synthetic. A decision type is a set of situations (50 per
10,000 decisions); a situation's centre mixes a direction all decisions
share, one its type shares and its own, so situations are related rather
than orthogonal; a vector is a centre plus a few situation-specific
directions with random weights plus isotropic noise. Queries are fresh draws
from the same situations, like a new decision in a familiar situation. The
10% type shares the 60% type's situations, so its neighbours in the graph
are mostly rows the type filter drops.
Uniform random vectors would be a harsher test than any real embedding,
tighter clusters a kinder one.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

import asyncpg
import grpc
import httpx
import psutil
from pgvector.asyncpg import register_vector

from outrider.v1 import decisions_pb2, decisions_pb2_grpc
from outrider.wire import json_bytes
from services.common.clients import channel
from services.common.db import context_engine, migrate
from services.common.embedded import EmbeddedPostgres, free_port
from services.decisions import store
from services.decisions.queries import EF_PER_RESULT, EF_SEARCH_FLOOR, EF_SEARCH_MAX, EXACT_SEARCH_ROWS, plan_search

ROOT = Path(__file__).resolve().parents[2]
INTERNAL_KEY = "bench-internal-key-0123456789abcdef"
JWT_SECRET = "bench-jwt-secret-0123456789abcdef"
DATABASE = "bench_decisions"
INDEX = "decisions_judged_embedding"
K = 10

# (type, share of judged rows): one dominant type, one common, one minor, so
# the type filter is exercised at three selectivities.
TYPES = (("stall_response", 0.6), ("assignment_failure", 0.3), ("eta_breach", 0.1))
# The minor type is drawn from the dominant type's situations: in vector
# space it is interleaved with ten times as many rows of another type, the
# hardest case for a type filter applied after the graph walk.
SAME_SITUATIONS = {"eta_breach": "stall_response"}
# Situations per 10,000 decisions; each is a cluster of similar decisions.
CLUSTERS_PER_10K = 50
# A centre mixes a direction every decision shares, one its type shares and
# its own; neighbouring situations are then related, as embeddings of
# related facts are, not orthogonal strangers.
SHARED_WEIGHT = 0.6
TYPE_WEIGHT = 0.5
OWN_WEIGHT = 0.6
CLUSTER_DIRECTIONS = 4
DIRECTION_WEIGHT = 0.3
NOISE = 0.25


# ─── data ────────────────────────────────────────────────────────────────────


def _unit(values: list[float]) -> list[float]:
    norm = math.sqrt(sum(x * x for x in values)) or 1.0
    return [x / norm for x in values]


@dataclass
class Cluster:
    centre: list[float]
    directions: list[list[float]]


@dataclass
class Generator:
    dimension: int
    seed: int
    clusters: dict[str, list[Cluster]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)

    def prepare(self, size: int) -> None:
        def random_unit() -> list[float]:
            return _unit([self.rng.gauss(0, 1) for _ in range(self.dimension)])

        count = max(4, size * CLUSTERS_PER_10K // 10_000)
        shared = random_unit()
        for decision_type, share in TYPES:
            if decision_type in SAME_SITUATIONS:
                continue
            kind = random_unit()
            clusters = []
            for _ in range(max(2, int(count * share))):
                own = random_unit()
                centre = [SHARED_WEIGHT * a + TYPE_WEIGHT * b + OWN_WEIGHT * c for a, b, c in zip(shared, kind, own)]
                clusters.append(Cluster(centre=_unit(centre),
                                        directions=[random_unit() for _ in range(CLUSTER_DIRECTIONS)]))
            self.clusters[decision_type] = clusters
        for decision_type, like in SAME_SITUATIONS.items():
            self.clusters[decision_type] = self.clusters[like]

    def vector(self, decision_type: str) -> list[float]:
        rng = self.rng
        cluster = rng.choice(self.clusters[decision_type])
        out = list(cluster.centre)
        for direction in cluster.directions:
            weight = rng.gauss(0, DIRECTION_WEIGHT)
            out = [a + weight * b for a, b in zip(out, direction)]
        scale = NOISE / math.sqrt(self.dimension)
        return [a + scale * rng.gauss(0, 1) for a in out]

    def decision_type(self) -> str:
        roll, acc = self.rng.random(), 0.0
        for decision_type, share in TYPES:
            acc += share
            if roll < acc:
                return decision_type
        return TYPES[-1][0]


COPY_COLUMNS = ("id", "decision_type", "agent_id", "subject_id", "context", "action", "confidence",
                "reasoning", "model", "embedding", "decided_at", "outcome", "outcome_reason", "judged_at",
                "judged_by")


def _row(gen: Generator, index: int, now: datetime, judged: bool) -> tuple:
    decision_type = gen.decision_type()
    outcome = (("success", "failure")[index % 2] if judged else (None, "unknown")[index % 2])
    decided = now - timedelta(minutes=index % 100_000)
    context = json.dumps({"facts": {"stall_minutes": index % 60, "zone": f"z{index % 17}"}})
    return (
        uuid.uuid4(), decision_type, "EXCEPTION_AGENT", f"booking-{index}", context,
        ("reassign", "escalate", "wait")[index % 3], 0.5 + (index % 50) / 100, "bench", "claude-sonnet-4-5",
        gen.vector(decision_type), decided, outcome, None, now if outcome else None,
        "sweeper" if outcome else None,
    )


async def load(dsn: str, gen: Generator, size: int) -> dict[str, float]:
    conn = await asyncpg.connect(dsn, server_settings={"search_path": "decisions,public"})
    await register_vector(conn)
    timings: dict[str, float] = {}
    try:
        definition = await conn.fetchval("select indexdef from pg_indexes where indexname = $1", INDEX)
        await conn.execute(f"drop index {INDEX}")
        now = datetime.now(timezone.utc)
        extra = max(1, size // 10)
        started = time.perf_counter()
        chunk: list[tuple] = []
        for index in range(size + extra):
            chunk.append(_row(gen, index, now, judged=index < size))
            if len(chunk) == 5000:
                await conn.copy_records_to_table("decisions", records=chunk, columns=COPY_COLUMNS,
                                                 schema_name="decisions")
                chunk = []
        if chunk:
            await conn.copy_records_to_table("decisions", records=chunk, columns=COPY_COLUMNS,
                                             schema_name="decisions")
        timings["load_s"] = time.perf_counter() - started
        timings["rows"] = size + extra
        started = time.perf_counter()
        await conn.execute("set maintenance_work_mem = '3GB'")
        await conn.execute("set max_parallel_maintenance_workers = 1")
        await conn.execute(definition)
        timings["index_build_s"] = time.perf_counter() - started
        await conn.execute("vacuum analyze decisions")
        timings["index_mb"] = await conn.fetchval(f"select pg_relation_size('{INDEX}') / 1048576.0::float8")
        timings["table_mb"] = await conn.fetchval("select pg_total_relation_size('decisions') / 1048576.0::float8")
    finally:
        await conn.close()
    return timings


# ─── recall ──────────────────────────────────────────────────────────────────


GRAPH_SQL = store.SIMILAR_GRAPH_SQL
EXACT_SQL = store.SIMILAR_EXACT_SQL


async def _connect(dsn: str) -> asyncpg.Connection:
    # JIT compiles the exact scans that make the ground truth, then throws
    # the code away; it only slows the measurement.
    conn = await asyncpg.connect(dsn, server_settings={"search_path": "decisions,public", "jit": "off"})
    await register_vector(conn)
    return conn


@dataclass
class Query:
    decision_type: str
    vector: list[float]
    exact: list[uuid.UUID] = field(default_factory=list)


def recall(found: list, truth: list) -> float:
    return len(set(found) & set(truth)) / len(truth) if truth else 1.0


async def ground_truth(dsn: str, queries: list[Query]) -> float:
    conn = await _connect(dsn)
    started = time.perf_counter()
    try:
        for query in queries:
            rows = await conn.fetch(EXACT_SQL, query.vector, query.decision_type, K)
            query.exact = [row["id"] for row in rows]
    finally:
        await conn.close()
    return (time.perf_counter() - started) / max(1, len(queries)) * 1000


async def judged_counts(dsn: str) -> dict[str, int]:
    conn = await asyncpg.connect(dsn, server_settings={"search_path": "decisions,public"})
    try:
        rows = await conn.fetch(f"select decision_type, count(*) from decisions where {store.JUDGED} group by 1")
    finally:
        await conn.close()
    return {r[0]: r[1] for r in rows}


async def recall_curve(dsn: str, queries: list[Query], efs: list[int]) -> dict[str, dict[int, dict[str, float]]]:
    """Recall@10 and single-query latency of the graph alone, per type and ef_search."""
    conn = await _connect(dsn)
    out: dict[str, dict[int, dict[str, float]]] = {}
    try:
        for decision_type, _ in TYPES:
            mine = [q for q in queries if q.decision_type == decision_type]
            out[decision_type] = {}
            for ef in efs:
                await conn.execute(f"set hnsw.ef_search = {ef}")
                scores, times, short = [], [], 0
                for query in mine:
                    started = time.perf_counter()
                    rows = await conn.fetch(GRAPH_SQL, query.vector, decision_type, K)
                    times.append(time.perf_counter() - started)
                    scores.append(recall([r["id"] for r in rows], query.exact))
                    short += len(rows) < K
                out[decision_type][ef] = {
                    "recall": statistics.fmean(scores), "p50_ms": statistics.median(times) * 1000,
                    "short": short, "queries": len(mine),
                }
    finally:
        await conn.close()
    return out


# ─── processes ───────────────────────────────────────────────────────────────


def _env(database_url: str, decisions_port: int, http_port: int, dimension: int) -> dict[str, str]:
    env = dict(os.environ)
    env.update({
        "DATABASE_URL": database_url,
        "OUTRIDER_DECISIONS_ADDR": f"127.0.0.1:{decisions_port}",
        "OUTRIDER_HTTP_PORT": str(http_port),
        "OUTRIDER_INTERNAL_KEY": INTERNAL_KEY,
        "OUTRIDER_JWT_SECRET": JWT_SECRET,
        "OUTRIDER_EMBEDDING_DIM": str(dimension),
        "OUTRIDER_LOG_LEVEL": "WARNING",
        "PYTHONPATH": str(ROOT),
    })
    return env


def _spawn(args: list[str], env: dict[str, str], log: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "outrider.cli", *args], env=env, cwd=ROOT,
        stdout=log.open("w"), stderr=subprocess.STDOUT,
    )


async def _wait_ready(decisions_addr: str, http_port: int, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    async with channel(decisions_addr, INTERNAL_KEY) as ch, httpx.AsyncClient() as client:
        stub = decisions_pb2_grpc.DecisionsStub(ch)
        while True:
            try:
                await stub.CountOutcomes(decisions_pb2.CountOutcomesRequest(), timeout=2)
                if (await client.get(f"http://127.0.0.1:{http_port}/healthz")).status_code == 200:
                    return
            except (grpc.aio.AioRpcError, httpx.HTTPError):
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("the decisions context or the gateway did not start; see the bench logs")
            await asyncio.sleep(0.5)


# ─── load generation ─────────────────────────────────────────────────────────


class KeepAliveClient:
    """HTTP/1.1 POSTs over one kept-alive connection per client task.

    The load generator shares the machine's two cores with everything it
    measures; httpx spends several times more CPU per request than this, and
    that CPU would be taken from the gateway and Postgres.
    """

    def __init__(self, port: int) -> None:
        self._port = port
        self._streams: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None

    async def post(self, path: str, body: bytes) -> tuple[int, bytes]:
        request = (
            f"POST {path} HTTP/1.1\r\nhost: bench\r\nx-internal-key: {INTERNAL_KEY}\r\n"
            f"content-type: application/json\r\ncontent-length: {len(body)}\r\n\r\n".encode() + body
        )
        line = b""
        for _ in range(2):
            if self._streams is None:
                self._streams = await asyncio.open_connection("127.0.0.1", self._port)
            reader, writer = self._streams
            writer.write(request)
            line = await reader.readline()
            if line:
                break
            # The server closed a connection left idle between phases; redial.
            writer.close()
            self._streams = None
        status = int(line.split()[1])
        length = 0
        while (line := await reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        return status, await reader.readexactly(length)

    def close(self) -> None:
        if self._streams is not None:
            self._streams[1].close()


class CpuMeter:
    """CPU seconds spent by each part of the system, read from the kernel.

    Wall-clock rates on a shared machine move with whatever else runs on it;
    CPU time per query does not, so the overhead ratios are taken from it.
    """

    def __init__(self, postmaster: int, servers: dict[str, int]) -> None:
        self._postmaster = psutil.Process(postmaster)
        self._servers = {name: psutil.Process(pid) for name, pid in servers.items()}

    @staticmethod
    def _cpu(process: psutil.Process) -> float:
        try:
            times = process.cpu_times()
        except psutil.NoSuchProcess:
            return 0.0
        return times.user + times.system

    def sample(self) -> dict[str, dict[int, float]]:
        postgres = [self._postmaster, *self._postmaster.children()]
        return {
            "postgres": {p.pid: self._cpu(p) for p in postgres},
            **{name: {p.pid: self._cpu(p)} for name, p in self._servers.items()},
            "client": {os.getpid(): self._cpu(psutil.Process())},
        }

    @staticmethod
    def spent(before: dict[str, dict[int, float]], after: dict[str, dict[int, float]]) -> dict[str, float]:
        return {
            group: sum(cpu - before.get(group, {}).get(pid, 0.0) for pid, cpu in pids.items())
            for group, pids in after.items()
        }


@dataclass
class Phase:
    name: str
    concurrency: int
    calls: int
    seconds: float
    latencies: list[float]
    cpu: dict[str, float] = field(default_factory=dict)

    def cpu_ms(self, *groups: str) -> float:
        """CPU milliseconds per call spent by these parts of the system."""
        return sum(self.cpu.get(group, 0.0) for group in groups) / max(1, self.calls) * 1000

    @property
    def qps(self) -> float:
        return self.calls / self.seconds

    def percentile(self, p: float) -> float:
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, int(p * len(ordered)))] * 1000


async def drive(
    name: str, call: Callable[[int], Awaitable[None]], *, concurrency: int, seconds: float,
    meter: CpuMeter | None = None,
) -> Phase:
    latencies: list[float] = []
    stop = time.perf_counter() + seconds
    counter = 0

    async def worker(offset: int) -> None:
        nonlocal counter
        i = offset
        while time.perf_counter() < stop:
            started = time.perf_counter()
            await call(i)
            latencies.append(time.perf_counter() - started)
            counter += 1
            i += concurrency

    before = meter.sample() if meter else {}
    started = time.perf_counter()
    await asyncio.gather(*(worker(n) for n in range(concurrency)))
    elapsed = time.perf_counter() - started
    cpu = CpuMeter.spent(before, meter.sample()) if meter else {}
    return Phase(name, concurrency, counter, elapsed, latencies, cpu)


async def similar_paths(
    dsn: str, decisions_addr: str, http_port: int, queries: list[Query], counts: dict[str, int], *,
    concurrency: int, seconds: float, rounds: int, meter: CpuMeter,
) -> tuple[dict[str, list[Phase]], dict[str, float]]:
    total = sum(counts.values())
    plans = {t: plan_search(k=K, type_rows=counts.get(t, 0), judged_rows=total) for t, _ in TYPES}
    pool = await asyncpg.create_pool(dsn, min_size=concurrency, max_size=concurrency, init=register_vector,
                                     server_settings={"search_path": "decisions,public"})
    ef_of: dict[int, int] = {}
    grpc_recall: list[float] = []
    http_recall: list[float] = []

    async def bare(i: int) -> None:
        # The floor: the service's own statement, with only the work a
        # hand-written client could not skip (ef_search set when it changes).
        query = queries[i % len(queries)]
        plan = plans[query.decision_type]
        async with pool.acquire() as conn:
            sql = EXACT_SQL if plan.exact else GRAPH_SQL
            if not plan.exact and ef_of.get(id(conn)) != plan.ef_search:
                await conn.execute(f"set hnsw.ef_search = {plan.ef_search}")
                ef_of[id(conn)] = plan.ef_search
            await conn.fetch(sql, query.vector, query.decision_type, K)

    results: dict[str, list[Phase]] = {"bare SQL": [], "gRPC": [], "gateway": []}
    try:
        async with channel(decisions_addr, INTERNAL_KEY) as ch:
            stub = decisions_pb2_grpc.DecisionsStub(ch)
            requests = [decisions_pb2.FindSimilarRequest(decision_type=q.decision_type, embedding=q.vector, k=K)
                        for q in queries]
            bodies = [json.dumps({"decision_type": q.decision_type, "embedding": q.vector, "k": K}).encode()
                      for q in queries]

            async def via_grpc(i: int) -> None:
                reply = await stub.FindSimilar(requests[i % len(requests)])
                if len(grpc_recall) < len(queries):
                    grpc_recall.append(recall([uuid.UUID(d.id) for d in reply.items], queries[i % len(queries)].exact))

            clients = [KeepAliveClient(http_port) for _ in range(concurrency)]

            async def via_gateway(i: int) -> None:
                status, body = await clients[i % concurrency].post("/internal/agent-decisions/similar",
                                                                   bodies[i % len(bodies)])
                if status != 200:
                    raise RuntimeError(f"gateway answered {status}: {body[:200]!r}")
                if len(http_recall) < len(queries):
                    items = json.loads(body)["items"]
                    http_recall.append(recall([uuid.UUID(d["id"]) for d in items], queries[i % len(queries)].exact))

            paths = {"bare SQL": bare, "gRPC": via_grpc, "gateway": via_gateway}
            for call in paths.values():  # warm every path: plans, pools, channels, the counts cache
                await drive("warm", call, concurrency=concurrency, seconds=min(2.0, seconds))
            grpc_recall.clear()
            http_recall.clear()
            for name, call in paths.items():
                results[name].append(await drive(name, call, concurrency=1, seconds=seconds, meter=meter))
            for _ in range(rounds):
                for name, call in paths.items():
                    results[name].append(
                        await drive(name, call, concurrency=concurrency, seconds=seconds, meter=meter)
                    )
            for client in clients:
                client.close()
    finally:
        await pool.close()
    quality = {
        "gRPC recall@10": statistics.fmean(grpc_recall) if grpc_recall else float("nan"),
        "gateway recall@10": statistics.fmean(http_recall) if http_recall else float("nan"),
    }
    return results, quality


async def record_paths(
    decisions_addr: str, http_port: int, *, concurrency: int, seconds: float, meter: CpuMeter
) -> list[Phase]:
    def payload(i: int) -> dict:
        return {
            "decision_type": "stall_response", "agent_id": "EXCEPTION_AGENT", "subject_id": f"rec-{i}",
            "context": {"facts": {"stall_minutes": i % 60, "zone": f"z{i % 17}", "vehicle": "bike"}},
            "decision": {"action": "reassign", "confidence": 0.8}, "reasoning": "bench",
        }

    clients = [KeepAliveClient(http_port) for _ in range(concurrency)]
    async with channel(decisions_addr, INTERNAL_KEY) as ch:
        stub = decisions_pb2_grpc.DecisionsStub(ch)

        async def via_grpc(i: int) -> None:
            body = payload(i)
            request = decisions_pb2.RecordDecisionRequest(
                decision_type=body["decision_type"], agent_id=body["agent_id"], subject_id=body["subject_id"],
                action="reassign", confidence=0.8, reasoning="bench", context_json=json_bytes(body["context"]),
            )
            await stub.RecordDecision(request)

        async def via_gateway(i: int) -> None:
            status, body = await clients[i % concurrency].post("/internal/agent-decisions",
                                                               json.dumps(payload(i + 10**9)).encode())
            if status != 201:
                raise RuntimeError(f"gateway answered {status}: {body[:200]!r}")

        phases = [
            await drive("record gRPC", via_grpc, concurrency=concurrency, seconds=seconds, meter=meter),
            await drive("record gateway", via_gateway, concurrency=concurrency, seconds=seconds, meter=meter),
        ]
    for client in clients:
        client.close()
    return phases


# ─── report ──────────────────────────────────────────────────────────────────


def _median_phase(phases: list[Phase]) -> Phase:
    return sorted(phases, key=lambda p: p.qps)[len(phases) // 2]


def report(args: argparse.Namespace, facts: dict, curve: dict, plans: dict, paths: dict[str, list[Phase]],
           quality: dict, records: list[Phase]) -> str:
    lines = [f"## Run: --size {args.size}, {args.dimension} dims, k={K}, concurrency {args.concurrency}", ""]
    lines.append(
        f"Loaded {facts['rows']:,} rows ({args.size:,} judged) in {facts['load_s']:.1f} s by COPY; "
        f"HNSW build {facts['index_build_s']:.1f} s; index {facts['index_mb']:.0f} MB, "
        f"table with indexes {facts['table_mb']:.0f} MB. Exact search: {facts['exact_ms']:.1f} ms/query."
    )
    lines += ["", "### Recall@10 of the partial HNSW index against exact search", "",
              "| type (share) | ef_search | recall@10 | short answers | p50 ms (1 client) |", "|---|---|---|---|---|"]
    for decision_type, share in TYPES:
        for ef, row in curve[decision_type].items():
            lines.append(f"| {decision_type} ({share:.0%}) | {ef} | {row['recall']:.3f} | "
                         f"{row['short']}/{row['queries']} | {row['p50_ms']:.2f} |")
    lines += ["", f"Plan the service chooses (queries.plan_search: ef_search = {EF_PER_RESULT} x k / type share, "
              f"at least {EF_SEARCH_FLOOR}; exact at or under {EXACT_SEARCH_ROWS:,} judged rows of the type or "
              f"past ef_search {EF_SEARCH_MAX}):", ""]
    for decision_type, plan in plans.items():
        lines.append(f"- {decision_type}: {'exact' if plan.exact else f'graph, ef_search {plan.ef_search}'}")
    lines += ["", f"End-to-end recall@10 of the service's answers: gRPC {quality['gRPC recall@10']:.3f}, "
              f"gateway {quality['gateway recall@10']:.3f}.", ""]
    lines += [f"1-minute load average before and after the timed phases: {facts['load_average'][0]:.1f}, "
              f"{facts['load_average'][1]:.1f} (this process and the ones it measures make about 2 of it).", ""]
    lines += ["### Similar search, side by side (median of rounds)", "",
              "CPU ms per query, read from the kernel for each process: Postgres (all its processes), "
              "the decisions server, the gateway, and the driving client.", "",
              "| path | clients | q/s | p50 ms | p99 ms | CPU Postgres | CPU decisions | CPU gateway | CPU client |",
              "|---|---|---|---|---|---|---|---|---|"]
    single = {name: phases[0] for name, phases in paths.items()}
    loaded = {name: _median_phase(phases[1:]) for name, phases in paths.items()}
    for table in (single, loaded):
        for name, phase in table.items():
            lines.append(
                f"| {name} | {phase.concurrency} | {phase.qps:.0f} | {phase.percentile(0.5):.2f} | "
                f"{phase.percentile(0.99):.2f} | {phase.cpu_ms('postgres'):.2f} | {phase.cpu_ms('decisions'):.2f} | "
                f"{phase.cpu_ms('gateway'):.2f} | {phase.cpu_ms('client'):.2f} |"
            )
    bare1, grpc1 = single["bare SQL"], single["gRPC"]
    bare, grpc_, gateway = loaded["bare SQL"], loaded["gRPC"], loaded["gateway"]
    server_cpu = {
        "bare SQL": bare.cpu_ms("postgres"),
        "gRPC": grpc_.cpu_ms("postgres", "decisions"),
        "gateway": gateway.cpu_ms("postgres", "decisions", "gateway"),
    }
    lines += [
        "",
        f"gRPC overhead vs bare SQL: latency p50 {grpc1.percentile(0.5) / bare1.percentile(0.5):.2f}x (1 client), "
        f"throughput {bare.qps / grpc_.qps:.2f}x ({args.concurrency} clients), "
        f"server-side CPU per query {server_cpu['gRPC'] / server_cpu['bare SQL']:.2f}x "
        f"({server_cpu['bare SQL']:.2f} ms Postgres alone, {server_cpu['gRPC']:.2f} ms Postgres + decisions). "
        f"Gateway vs gRPC throughput: {grpc_.qps / gateway.qps:.2f}x.",
        "Queries/s two dedicated cores could serve, from server-side CPU per query (client excluded): " + ", ".join(
            f"{name} {2000 / cpu:.0f}" for name, cpu in server_cpu.items()) + ".",
        f"Rounds at {args.concurrency} clients, q/s: " + "; ".join(
            f"{name} " + ", ".join(f"{p.qps:.0f}" for p in phases[1:]) for name, phases in paths.items()),
        "",
        "### Record throughput", "",
        "| path | clients | records/s | p50 ms | p99 ms | CPU Postgres | CPU decisions | CPU gateway |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for phase in records:
        lines.append(
            f"| {phase.name} | {phase.concurrency} | {phase.qps:.0f} | {phase.percentile(0.5):.2f} | "
            f"{phase.percentile(0.99):.2f} | {phase.cpu_ms('postgres'):.2f} | {phase.cpu_ms('decisions'):.2f} | "
            f"{phase.cpu_ms('gateway'):.2f} |"
        )
    return "\n".join(lines)


async def main(args: argparse.Namespace) -> None:
    workdir = Path(tempfile.mkdtemp(prefix="outrider-bench-"))
    embedded = None
    processes: list[subprocess.Popen] = []
    try:
        if args.database_url:
            server_url = args.database_url
        else:
            embedded = EmbeddedPostgres(workdir)
            server_url = embedded.start()
            # Sized as a deployment would be: the index and the hot part of
            # the table in shared buffers, not the embedded default of 128 MB.
            admin = await asyncpg.connect(server_url.replace("postgresql+asyncpg://", "postgresql://"))
            try:
                await admin.execute(f"alter system set shared_buffers = '{args.shared_buffers}'")
            finally:
                await admin.close()
            embedded.stop()
            server_url = embedded.start()
        head, _, query = server_url.partition("?")
        database_url = f"{head.rsplit('/', 1)[0]}/{DATABASE}?{query}"
        raw = database_url.replace("postgresql+asyncpg://", "postgresql://")
        admin = await asyncpg.connect(server_url.replace("postgresql+asyncpg://", "postgresql://"))
        try:
            await admin.execute(f"drop database if exists {DATABASE} with (force)")
            await admin.execute(f"create database {DATABASE}")
        finally:
            await admin.close()
        engine = context_engine(database_url, "decisions")
        try:
            await migrate(engine, "decisions", extra={"outrider.embedding_dim": str(args.dimension)})
        finally:
            await engine.dispose()

        gen = Generator(args.dimension, seed=20260929)
        gen.prepare(args.size)
        print(f"loading {args.size:,} judged decisions ...", flush=True)
        facts = await load(raw, gen, args.size)
        print(json.dumps(facts), flush=True)

        per_type = max(5, args.queries // len(TYPES))
        queries = [Query(t, gen.vector(t)) for t, _ in TYPES for _ in range(per_type)]
        random.Random(7).shuffle(queries)
        facts["exact_ms"] = await ground_truth(raw, queries)
        counts = await judged_counts(raw)
        total = sum(counts.values())
        plans = {t: plan_search(k=K, type_rows=counts.get(t, 0), judged_rows=total) for t, _ in TYPES}
        curve = await recall_curve(raw, queries, args.ef)
        print(json.dumps(curve), flush=True)

        decisions_port, http_port = free_port(), free_port()
        env = _env(database_url, decisions_port, http_port, args.dimension)
        processes.append(_spawn(["serve", "decisions"], env, workdir / "decisions.log"))
        processes.append(_spawn(["gateway"], env, workdir / "gateway.log"))
        addr = f"127.0.0.1:{decisions_port}"
        await _wait_ready(addr, http_port)
        probe = await asyncpg.connect(raw)
        try:
            postmaster = psutil.Process(await probe.fetchval("select pg_backend_pid()")).ppid()
        finally:
            await probe.close()
        meter = CpuMeter(postmaster, {"decisions": processes[0].pid, "gateway": processes[1].pid})
        load_before = os.getloadavg()[0]
        paths, quality = await similar_paths(
            raw, addr, http_port, queries, counts,
            concurrency=args.concurrency, seconds=args.seconds, rounds=args.rounds, meter=meter,
        )
        records = await record_paths(addr, http_port, concurrency=args.concurrency, seconds=args.seconds,
                                     meter=meter)
        facts["load_average"] = (load_before, os.getloadavg()[0])
        print(report(args, facts, curve, plans, paths, quality, records), flush=True)
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
        if embedded is not None:
            embedded.stop()
        shutil.rmtree(workdir, ignore_errors=True)


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=200_000, help="judged decisions to load (default 200,000)")
    parser.add_argument("--dimension", type=int, default=384)
    parser.add_argument("--queries", type=int, default=300, help="distinct query vectors, split across types")
    parser.add_argument("--ef", type=lambda s: [int(x) for x in s.split(",")], default=[40, 64, 100, 200, 400],
                        help="ef_search values for the recall curve")
    parser.add_argument("--concurrency", type=int, default=8, help="client tasks in the loaded phases")
    parser.add_argument("--seconds", type=float, default=10.0, help="length of each measured phase")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds of the three paths")
    parser.add_argument("--database-url", default="", help="use this Postgres server instead of an embedded one")
    parser.add_argument("--shared-buffers", default="2GB", help="shared_buffers of the embedded Postgres")
    args = parser.parse_args(argv)
    if args.size < 100:
        parser.error("--size must be at least 100")
    return args


if __name__ == "__main__":
    asyncio.run(main(parse()))
