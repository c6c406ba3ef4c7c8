"""Decision memory benchmark: precedent-search recall and speed, record throughput.

    .venv/bin/python -m bench.decisions.bench_similar                 # 200,000 judged decisions
    .venv/bin/python -m bench.decisions.bench_similar --size 2000 --seconds 2 --rounds 1 \
        --recorder-burst 1000 --recorder-rate 500                   # smoke run, a few minutes

What it does, in one run so every figure shares the machine's state:

1. Starts the test harness's embedded Postgres (or uses --database-url),
   migrates the decisions schema, and loads --size judged decisions (plus a
   tenth as many pending and unknown ones, which precedent search must never
   read) with COPY and binary vectors. The partial HNSW index is dropped for
   the load and rebuilt afterwards from its own definition, as a bulk import
   should.
2. Recall@10 against exact search (the same query with the distance written
   as a function, which no index serves), per decision type, for several
   ef_search values and for the plan the service chooses itself.
3. Starts the decisions context and the gateway as their own processes, as
   `outrider serve decisions` and `outrider gateway` run them (and, with
   --baseline, those of an earlier checkout beside them, on the same
   database), then measures similar-search queries/s, p50/p99 latency, CPU
   per query of every process and commits per query for bare SQL, gRPC, the
   gateway and the gRPC health check side by side, in interleaved rounds;
   reports medians.
4. The floor's statement sent the ways a service might send it (unprepared,
   vector as text, SET per query, a transaction per query, a resetting
   pool), for what each costs Postgres per query.
5. Recording: RecordDecision over gRPC and the gateway, RecordDecisions in
   batches, and one engine's DecisionRecorder, whose every decision must
   land exactly once.

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
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import asyncpg
import grpc
import httpx
import psutil
from grpc_health.v1 import health_pb2, health_pb2_grpc
from pgvector.asyncpg import register_vector

from outrider.client.decisions import DecisionRecorder, PrecedentClient
from outrider.rpc import keyed_channel as channel
from outrider.v1 import decisions_pb2, decisions_pb2_grpc
from outrider.wire import json_bytes
from services.common.db import context_engine, migrate
from services.decisions import store
from services.decisions.queries import (
    EF_PER_RESULT,
    EF_SEARCH_FLOOR,
    EF_SEARCH_MAX,
    EXACT_SEARCH_ROWS,
    SearchPlan,
    plan_search,
)
from tests.harness import Stack, create_database, embedded_stack, reserved_port

ROOT = Path(__file__).resolve().parents[2]
INTERNAL_KEY = "bench-internal-key-0123456789abcdef"
SERVICE_KEY = "bench-service-key-0123456789abcdefgh"
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
                centre = [
                    SHARED_WEIGHT * a + TYPE_WEIGHT * b + OWN_WEIGHT * c
                    for a, b, c in zip(shared, kind, own, strict=True)
                ]
                clusters.append(
                    Cluster(centre=_unit(centre), directions=[random_unit() for _ in range(CLUSTER_DIRECTIONS)])
                )
            self.clusters[decision_type] = clusters
        for decision_type, like in SAME_SITUATIONS.items():
            self.clusters[decision_type] = self.clusters[like]

    def vector(self, decision_type: str) -> list[float]:
        rng = self.rng
        cluster = rng.choice(self.clusters[decision_type])
        out = list(cluster.centre)
        for direction in cluster.directions:
            weight = rng.gauss(0, DIRECTION_WEIGHT)
            out = [a + weight * b for a, b in zip(out, direction, strict=True)]
        scale = NOISE / math.sqrt(self.dimension)
        return [a + scale * rng.gauss(0, 1) for a in out]

    def decision_type(self) -> str:
        roll, acc = self.rng.random(), 0.0
        for decision_type, share in TYPES:
            acc += share
            if roll < acc:
                return decision_type
        return TYPES[-1][0]


COPY_COLUMNS = (
    "id",
    "decision_type",
    "agent_id",
    "subject_id",
    "context",
    "action",
    "confidence",
    "reasoning",
    "model",
    "embedding",
    "decided_at",
    "outcome",
    "outcome_reason",
    "judged_at",
    "judged_by",
)


def _row(gen: Generator, index: int, now: datetime, judged: bool) -> tuple:
    decision_type = gen.decision_type()
    outcome = ("success", "failure")[index % 2] if judged else (None, "unknown")[index % 2]
    decided = now - timedelta(minutes=index % 100_000)
    context = json.dumps({"facts": {"stall_minutes": index % 60, "zone": f"z{index % 17}"}})
    return (
        uuid.uuid4(),
        decision_type,
        "EXCEPTION_AGENT",
        f"booking-{index}",
        context,
        ("reassign", "escalate", "wait")[index % 3],
        0.5 + (index % 50) / 100,
        "bench",
        "claude-sonnet-4-5",
        gen.vector(decision_type),
        decided,
        outcome,
        None,
        now if outcome else None,
        "sweeper" if outcome else None,
    )


async def load(dsn: str, gen: Generator, size: int) -> dict[str, float]:
    conn = await asyncpg.connect(dsn, server_settings={"search_path": "decisions,public"})
    await register_vector(conn)
    timings: dict[str, float] = {}
    try:
        definition = await conn.fetchval("select indexdef from pg_indexes where indexname = $1", INDEX)
        await conn.execute(f"drop index {INDEX}")
        now = datetime.now(UTC)
        extra = max(1, size // 10)
        started = time.perf_counter()
        chunk: list[tuple] = []
        for index in range(size + extra):
            chunk.append(_row(gen, index, now, judged=index < size))
            if len(chunk) == 5000:
                await conn.copy_records_to_table(
                    "decisions", records=chunk, columns=COPY_COLUMNS, schema_name="decisions"
                )
                chunk = []
        if chunk:
            await conn.copy_records_to_table("decisions", records=chunk, columns=COPY_COLUMNS, schema_name="decisions")
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


async def _connect(dsn: str, *, statement_cache_size: int = 100, vector_codec: bool = True) -> asyncpg.Connection:
    # JIT compiles the exact scans that make the ground truth, then throws
    # the code away; it only slows the measurement.
    conn = await asyncpg.connect(
        dsn,
        statement_cache_size=statement_cache_size,
        server_settings={"search_path": "decisions,public", "jit": "off"},
    )
    if vector_codec:
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
                    "recall": statistics.fmean(scores),
                    "p50_ms": statistics.median(times) * 1000,
                    "short": short,
                    "queries": len(mine),
                }
    finally:
        await conn.close()
    return out


# ─── processes ───────────────────────────────────────────────────────────────


@dataclass
class Servers:
    """One decisions context and one gateway, run as `outrider serve decisions`
    and `outrider gateway` run them, from the checkout at `root`."""

    suffix: str  # "" for the code under test, " before" for --baseline
    root: Path
    decisions_port: int = field(default_factory=reserved_port)
    http_port: int = field(default_factory=reserved_port)
    processes: list[subprocess.Popen] = field(default_factory=list)

    @property
    def decisions_addr(self) -> str:
        return f"127.0.0.1:{self.decisions_port}"

    def channel(self) -> grpc.aio.Channel:
        # Earlier code serves no liveness health status, and a channel that
        # balances on it would find such a server never healthy.
        return channel(self.decisions_addr, INTERNAL_KEY, health_checked=not self.suffix)

    def start(self, database_url: str, dimension: int, logs: Path) -> None:
        env = dict(os.environ)
        env.update(
            {
                "DATABASE_URL": database_url,
                "OUTRIDER_DECISIONS_ADDR": self.decisions_addr,
                "OUTRIDER_HTTP_PORT": str(self.http_port),
                "OUTRIDER_INTERNAL_KEY": INTERNAL_KEY,
                "OUTRIDER_SERVICE_KEY": SERVICE_KEY,
                "OUTRIDER_JWT_SECRET": JWT_SECRET,
                "OUTRIDER_EMBEDDING_DIM": str(dimension),
                "OUTRIDER_LOG_LEVEL": "WARNING",
                "OUTRIDER_DATA_DIR": str(logs / f"data{self.suffix.strip()}"),
                # First on the path, so a --baseline checkout runs its own code
                # with this environment's packages.
                "PYTHONPATH": str(self.root),
            }
        )
        for args in (["serve", "decisions"], ["gateway"]):
            log = logs / f"{args[-1]}{self.suffix.replace(' ', '-')}.log"
            self.processes.append(
                subprocess.Popen(
                    [sys.executable, "-m", "launcher.cli", *args],
                    env=env,
                    cwd=self.root,
                    stdout=log.open("w"),
                    stderr=subprocess.STDOUT,
                )
            )

    async def wait_ready(self, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        async with self.channel() as ch, httpx.AsyncClient() as client:
            health = health_pb2_grpc.HealthStub(ch)
            while True:
                try:
                    reply = await health.Check(health_pb2.HealthCheckRequest(), timeout=2)
                    if (
                        reply.status == health_pb2.HealthCheckResponse.SERVING
                        and (await client.get(f"http://127.0.0.1:{self.http_port}/healthz")).status_code == 200
                    ):
                        return
                except (grpc.aio.AioRpcError, httpx.HTTPError):
                    pass
                if time.monotonic() > deadline:
                    raise RuntimeError(f"the decisions context or gateway{self.suffix} did not start; see its log")
                await asyncio.sleep(0.5)

    def pids(self) -> dict[str, int]:
        decisions, gateway = self.processes
        return {f"decisions{self.suffix}": decisions.pid, f"gateway{self.suffix}": gateway.pid}

    def stop(self) -> None:
        for process in self.processes:
            process.terminate()
        for process in self.processes:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()


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
            f"content-type: application/json\r\ncontent-length: {len(body)}\r\n\r\n".encode()
            + body
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
    """CPU seconds spent by each part of the system, read from the kernel, and
    the statements Postgres ran for the bench database.

    Wall-clock rates on a shared machine move with whatever else runs on it;
    CPU time per query moves less, so the overhead ratios are taken from it.
    """

    def __init__(self, postmaster: int, servers: dict[str, int], probe: asyncpg.Connection) -> None:
        self._postmaster = psutil.Process(postmaster)
        self._servers = {name: psutil.Process(pid) for name, pid in servers.items()}
        self._probe = probe

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

    async def commits(self) -> int:
        """Transactions the bench database has committed, once every backend has reported.

        Outside a transaction block every statement, a SET too, commits on
        its own, so commits per call count the statements a path sends. A
        backend that reported less than a second ago holds its counts back
        for ten seconds of idleness, hence the pause.
        """
        await asyncio.sleep(STATS_SETTLE_S)
        return await self._probe.fetchval(
            "select xact_commit + xact_rollback from pg_stat_database where datname = current_database()"
        )


# Postgres 16's PGSTAT_IDLE_INTERVAL (10 s), and a second to spare.
STATS_SETTLE_S = 11.0


@dataclass
class Phase:
    name: str
    concurrency: int
    calls: int
    seconds: float
    latencies: list[float]
    cpu: dict[str, float] = field(default_factory=dict)
    # Commits per item, where counted (drive(census=True)).
    commits: float = float("nan")
    # Decisions per call: 1, or a batch's size.
    per_call: int = 1

    @property
    def items(self) -> int:
        return self.calls * self.per_call

    def cpu_ms(self, *groups: str) -> float:
        """CPU milliseconds per item (query or decision) spent by these parts of the system."""
        return sum(self.cpu.get(group, 0.0) for group in groups) / max(1, self.items) * 1000

    @property
    def rate(self) -> float:
        return self.items / self.seconds

    def percentile(self, p: float) -> float:
        if not self.latencies:
            return float("nan")
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, int(p * len(ordered)))] * 1000


async def drive(
    name: str,
    call: Callable[[int], Awaitable[None]],
    *,
    concurrency: int,
    seconds: float,
    meter: CpuMeter | None = None,
    per_call: int = 1,
    census: bool = False,
) -> Phase:
    """Call `call` from `concurrency` tasks for `seconds`; with `census`, also
    count the commits (which costs two pauses of STATS_SETTLE_S)."""
    latencies: list[float] = []
    counter = 0
    commits = await meter.commits() if meter and census else 0

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
    stop = started + seconds
    await asyncio.gather(*(worker(n) for n in range(concurrency)))
    elapsed = time.perf_counter() - started
    cpu = CpuMeter.spent(before, meter.sample()) if meter else {}
    phase = Phase(name, concurrency, counter, elapsed, latencies, cpu, per_call=per_call)
    if meter and census:
        phase.commits = (await meter.commits() - commits) / max(1, phase.items)
    return phase


# ─── similar search ──────────────────────────────────────────────────────────


@dataclass
class SearchPath:
    """A way to run a precedent search, and the processes that serve it."""

    call: Callable[[int], Awaitable[None]]
    decisions: str = ""
    gateway: str = ""


class Recalls:
    """Recall@10 of each path's answers over the first pass of the query set."""

    def __init__(self, queries: list[Query]) -> None:
        self._queries = queries
        self.scores: dict[str, list[float]] = {}

    def note(self, name: str, i: int, ids: list[uuid.UUID]) -> None:
        scores = self.scores.setdefault(name, [])
        if len(scores) < len(self._queries):
            scores.append(recall(ids, self._queries[i % len(self._queries)].exact))

    def mean(self, name: str) -> float:
        scores = self.scores.get(name)
        return statistics.fmean(scores) if scores else float("nan")


async def similar_paths(
    dsn: str,
    servers: list[Servers],
    queries: list[Query],
    plans: dict[str, SearchPlan],
    *,
    concurrency: int,
    seconds: float,
    rounds: int,
    meter: CpuMeter,
    recalls: Recalls,
) -> dict[str, tuple[SearchPath, list[Phase]]]:
    """Each path's single-client phase, then its loaded phase of every round."""
    # The floor: the service's own statement from a hand-written client.
    # Each client task keeps its own connection (task n calls with i = n mod
    # concurrency) and sets ef_search only when it changes. Not a pool: an
    # asyncpg pool sends RESET ALL when a connection comes back, which puts
    # ef_search back to pgvector's 40 behind the client's memory, and the
    # floor would then walk a narrower graph than the service.
    conns = [await _connect(dsn) for _ in range(concurrency)]
    ef_of: dict[int, int] = {}

    async def bare(i: int) -> None:
        query = queries[i % len(queries)]
        plan = plans[query.decision_type]
        conn = conns[i % concurrency]
        if not plan.exact and ef_of.get(i % concurrency) != plan.ef_search:
            await conn.execute(f"set hnsw.ef_search = {plan.ef_search}")
            ef_of[i % concurrency] = plan.ef_search
        rows = await conn.fetch(EXACT_SQL if plan.exact else GRAPH_SQL, query.vector, query.decision_type, K)
        recalls.note("bare SQL", i, [row["id"] for row in rows])

    requests = [
        decisions_pb2.FindSimilarRequest(decision_type=q.decision_type, embedding=q.vector, k=K) for q in queries
    ]
    bodies = [json.dumps({"decision_type": q.decision_type, "embedding": q.vector, "k": K}).encode() for q in queries]
    paths: dict[str, SearchPath] = {"bare SQL": SearchPath(bare)}
    channels = []
    engines: list[PrecedentClient] = []
    http_clients: list[KeepAliveClient] = []
    for server in servers:
        ch = server.channel()
        channels.append(ch)
        stub = decisions_pb2_grpc.DecisionsStub(ch)
        clients = [KeepAliveClient(server.http_port) for _ in range(concurrency)]
        http_clients += clients

        def via_grpc(stub=stub, name=f"gRPC{server.suffix}") -> Callable[[int], Awaitable[None]]:
            async def call(i: int) -> None:
                reply = await stub.FindSimilar(requests[i % len(requests)])
                recalls.note(name, i, [uuid.UUID(d.id) for d in reply.items])

            return call

        def via_gateway(clients=clients, name=f"gateway{server.suffix}") -> Callable[[int], Awaitable[None]]:
            async def call(i: int) -> None:
                status, body = await clients[i % concurrency].post(
                    "/internal/agent-decisions/similar", bodies[i % len(bodies)]
                )
                if status != 200:
                    raise RuntimeError(f"{name} answered {status}: {body[:200]!r}")
                recalls.note(name, i, [uuid.UUID(d["id"]) for d in json.loads(body)["items"]])

            return call

        paths[f"gRPC{server.suffix}"] = SearchPath(via_grpc(), decisions=f"decisions{server.suffix}")
        paths[f"gateway{server.suffix}"] = SearchPath(
            via_gateway(), decisions=f"decisions{server.suffix}", gateway=f"gateway{server.suffix}"
        )
        if not server.suffix:
            # The engine client's own way: every search over its one
            # SearchPrecedents stream (earlier code has no such call).
            engine = PrecedentClient(server.decisions_addr, INTERNAL_KEY, timeout_s=30.0)
            engines.append(engine)

            async def via_stream(i: int, engine=engine) -> None:
                query = queries[i % len(queries)]
                answer = await engine.precedents(query.decision_type, k=K, embedding=query.vector)
                if not answer.available:
                    raise RuntimeError("the precedent stream answered nothing")
                recalls.note("gRPC stream", i, [uuid.UUID(p.id) for p in answer.items])

            paths["gRPC stream"] = SearchPath(via_stream, decisions="decisions")
    # The floor of gRPC itself: the standard health check on the decisions
    # context runs none of its code, only grpc.aio and the key check.
    health = health_pb2_grpc.HealthStub(channels[0])
    probe = health_pb2.HealthCheckRequest()

    async def via_health(i: int) -> None:
        await health.Check(probe)

    paths["gRPC health check"] = SearchPath(via_health, decisions="decisions")
    results: dict[str, list[Phase]] = {name: [] for name in paths}
    try:
        for path in paths.values():  # warm every path: plans, pools, channels, the counts cache
            await drive("warm", path.call, concurrency=concurrency, seconds=min(2.0, seconds))
        recalls.scores.clear()
        for name, path in paths.items():
            results[name].append(await drive(name, path.call, concurrency=1, seconds=seconds, meter=meter, census=True))
        for _ in range(rounds):
            for name, path in paths.items():
                results[name].append(
                    await drive(name, path.call, concurrency=concurrency, seconds=seconds, meter=meter)
                )
    finally:
        for client in http_clients:
            client.close()
        for engine in engines:
            await engine.close()
        for ch in channels:
            await ch.close()
        for conn in conns:
            await conn.close()
    return {name: (paths[name], phases) for name, phases in results.items()}


# ─── what makes Postgres work harder per query ──────────────────────────────


SUSPECTS = (
    ("floor", "prepared once per connection, vector binary, ef_search set when it changes, autocommit"),
    ("unprepared", "statement_cache_size=0: parsed and planned on every call"),
    ("vector as text", "the query vector sent as text, parsed by vector_in"),
    ("SET every query", "set hnsw.ef_search before every select: two statements"),
    ("transaction", "begin; set local hnsw.ef_search; select; commit: four round trips"),
    (
        "pool reset",
        "an asyncpg pool, ef_search remembered per connection object (this bench until now): RESET ALL on release",
    ),
)


async def suspects(
    dsn: str,
    queries: list[Query],
    plans: dict[str, SearchPlan],
    *,
    concurrency: int,
    seconds: float,
    rounds: int,
    meter: CpuMeter,
    recalls: Recalls,
) -> dict[str, list[Phase]]:
    """The floor's statement sent each way the service once could have sent it.

    Postgres CPU per query is the figure: what each habit costs the database,
    whoever sends the statement.
    """
    texts = ["[" + ",".join(repr(x) for x in q.vector) + "]" for q in queries]
    floor = [await _connect(dsn) for _ in range(concurrency)]
    unprepared = [await _connect(dsn, statement_cache_size=0) for _ in range(concurrency)]
    textual = [await _connect(dsn, vector_codec=False) for _ in range(concurrency)]
    for conn in textual:
        await conn.set_type_codec("vector", schema="public", encoder=str, decoder=str, format="text")
    plain = [await _connect(dsn) for _ in range(concurrency)]
    pool = await asyncpg.create_pool(
        dsn,
        min_size=concurrency,
        max_size=concurrency,
        init=register_vector,
        server_settings={"search_path": "decisions,public", "jit": "off"},
    )
    remembered: dict[tuple[str, int], int] = {}

    async def remembering(name: str, conns: list[asyncpg.Connection], i: int, vector: object) -> None:
        query = queries[i % len(queries)]
        ef = plans[query.decision_type].ef_search
        if remembered.get((name, i % concurrency)) != ef:
            await conns[i % concurrency].execute(f"set hnsw.ef_search = {ef}")
            remembered[(name, i % concurrency)] = ef
        rows = await conns[i % concurrency].fetch(GRAPH_SQL, vector, query.decision_type, K)
        recalls.note(name, i, [row["id"] for row in rows])

    async def set_every_query(i: int) -> None:
        query = queries[i % len(queries)]
        conn = plain[i % concurrency]
        await conn.execute(f"set hnsw.ef_search = {plans[query.decision_type].ef_search}")
        rows = await conn.fetch(GRAPH_SQL, query.vector, query.decision_type, K)
        recalls.note("SET every query", i, [row["id"] for row in rows])

    async def transaction(i: int) -> None:
        query = queries[i % len(queries)]
        conn = plain[i % concurrency]
        async with conn.transaction():
            await conn.execute(f"set local hnsw.ef_search = {plans[query.decision_type].ef_search}")
            rows = await conn.fetch(GRAPH_SQL, query.vector, query.decision_type, K)
        recalls.note("transaction", i, [row["id"] for row in rows])

    async def pool_reset(i: int) -> None:
        # As this bench's floor did: the pool hands out a new proxy per
        # checkout and resets the connection on release, so the memory says
        # "set" while the server is back at pgvector's 40.
        query = queries[i % len(queries)]
        ef = plans[query.decision_type].ef_search
        async with pool.acquire() as conn:
            if remembered.get(("pool reset", id(conn))) != ef:
                await conn.execute(f"set hnsw.ef_search = {ef}")
                remembered[("pool reset", id(conn))] = ef
            rows = await conn.fetch(GRAPH_SQL, query.vector, query.decision_type, K)
        recalls.note("pool reset", i, [row["id"] for row in rows])

    calls: dict[str, Callable[[int], Awaitable[None]]] = {
        "floor": lambda i: remembering("floor", floor, i, queries[i % len(queries)].vector),
        "unprepared": lambda i: remembering("unprepared", unprepared, i, queries[i % len(queries)].vector),
        "vector as text": lambda i: remembering("vector as text", textual, i, texts[i % len(texts)]),
        "SET every query": set_every_query,
        "transaction": transaction,
        "pool reset": pool_reset,
    }
    results: dict[str, list[Phase]] = {name: [] for name in calls}
    try:
        for call in calls.values():
            await drive("warm", call, concurrency=concurrency, seconds=min(1.0, seconds))
        for name in calls:
            recalls.scores.pop(name, None)
        for round_ in range(rounds):
            for name, call in calls.items():
                results[name].append(
                    await drive(name, call, concurrency=concurrency, seconds=seconds, meter=meter, census=round_ == 0)
                )
    finally:
        await pool.close()
        for conn in floor + unprepared + textual + plain:
            await conn.close()
    return results


# ─── recording ───────────────────────────────────────────────────────────────


def _context(i: int) -> dict:
    return {"facts": {"stall_minutes": i % 60, "zone": f"z{i % 17}", "vehicle": "bike"}}


def _record_request(i: int) -> decisions_pb2.RecordDecisionRequest:
    return decisions_pb2.RecordDecisionRequest(
        id=str(uuid.uuid4()),
        decision_type="stall_response",
        agent_id="EXCEPTION_AGENT",
        subject_id=f"rec-{i}",
        action="reassign",
        confidence=0.8,
        reasoning="bench",
        context_json=json_bytes(_context(i)),
    )


async def record_paths(
    servers: list[Servers],
    *,
    concurrency: int,
    seconds: float,
    batch: int,
    meter: CpuMeter,
) -> list[Phase]:
    phases = []
    serial = iter(range(10**9))
    for server in servers:
        clients = [KeepAliveClient(server.http_port) for _ in range(concurrency)]
        async with server.channel() as ch:
            stub = decisions_pb2_grpc.DecisionsStub(ch)

            # Each closure is driven before the loop moves on; its defaults
            # bind this server's stub and clients all the same.
            async def via_grpc(i: int, stub: decisions_pb2_grpc.DecisionsStub = stub) -> None:
                await stub.RecordDecision(_record_request(next(serial)))

            async def via_gateway(i: int, clients: list[KeepAliveClient] = clients, server: Servers = server) -> None:
                n = next(serial)
                body = {
                    "id": str(uuid.uuid4()),
                    "decision_type": "stall_response",
                    "agent_id": "EXCEPTION_AGENT",
                    "subject_id": f"rec-{n}",
                    "context": _context(n),
                    "decision": {"action": "reassign", "confidence": 0.8},
                    "reasoning": "bench",
                }
                status, reply = await clients[i % concurrency].post(
                    "/internal/agent-decisions", json.dumps(body).encode()
                )
                if status != 201:
                    raise RuntimeError(f"gateway{server.suffix} answered {status}: {reply[:200]!r}")

            async def via_batch(i: int, stub: decisions_pb2_grpc.DecisionsStub = stub) -> None:
                request = decisions_pb2.RecordDecisionsRequest(
                    decisions=[_record_request(next(serial)) for _ in range(batch)]
                )
                reply = await stub.RecordDecisions(request)
                if any(result.error_code for result in reply.results):
                    raise RuntimeError(f"a batch was refused: {reply.results[0]}")

            phases.append(
                await drive(
                    f"record gRPC{server.suffix}",
                    via_grpc,
                    concurrency=concurrency,
                    seconds=seconds,
                    meter=meter,
                    census=True,
                )
            )
            phases.append(
                await drive(
                    f"record gateway{server.suffix}",
                    via_gateway,
                    concurrency=concurrency,
                    seconds=seconds,
                    meter=meter,
                    census=True,
                )
            )
            if not server.suffix:
                phases.append(
                    await drive(
                        f"record batch of {batch}, gRPC",
                        via_batch,
                        concurrency=1,
                        seconds=seconds,
                        meter=meter,
                        per_call=batch,
                        census=True,
                    )
                )
        for client in clients:
            client.close()
    return phases


async def recorder_runs(
    server: Servers,
    dsn: str,
    *,
    burst: int,
    offered: int,
    seconds: float,
    meter: CpuMeter,
) -> list[Phase]:
    """One engine's DecisionRecorder: a burst handed over at once, then a steady offered rate.

    A run ends when the recorder has flushed; every decision it was handed
    must then be in the table exactly once, or the bench fails.
    """
    phases = []
    conn = await asyncpg.connect(dsn, server_settings={"search_path": "decisions"})
    try:
        for name, count, rate in (
            (f"recorder, {burst:,} at once", burst, None),
            (f"recorder, {offered:,}/s offered", int(offered * seconds), offered),
        ):
            recorder = DecisionRecorder(server.decisions_addr, INTERNAL_KEY, max_queue=count, call_timeout_s=60)
            ids: list[str] = []

            def record_until(
                due: int, ids: list[str] = ids, count: int = count, recorder: DecisionRecorder = recorder
            ) -> None:
                while len(ids) < min(due, count):
                    n = len(ids)
                    ids.append(
                        recorder.record(
                            decision_type="stall_response",
                            agent_id="EXCEPTION_AGENT",
                            subject_id=f"engine-{n}",
                            action="reassign",
                            confidence=0.8,
                            context=_context(n),
                            reasoning="bench",
                        )
                    )

            commits = await meter.commits()
            before = meter.sample()
            started = time.perf_counter()
            if rate is None:
                record_until(count)
            while len(ids) < count:
                # The engine decides steadily: what is due by now, then a
                # hundredth of a second's pause.
                record_until(int((time.perf_counter() - started) * rate))
                await asyncio.sleep(0.01)
            if not await recorder.flush(timeout_s=600):
                raise RuntimeError(f"{name}: the recorder did not drain")
            elapsed = time.perf_counter() - started
            cpu = CpuMeter.spent(before, meter.sample())
            await recorder.close()
            stored = await conn.fetchval(
                "select count(*) from decisions where id = any($1::uuid[])", [uuid.UUID(i) for i in ids]
            )
            if stored != count or recorder.counters.sent != count or recorder.counters.dropped:
                raise RuntimeError(f"{name}: {stored} of {count} stored, counters {recorder.counters}")
            phase = Phase(name, 1, count, elapsed, [], cpu)
            phase.commits = (await meter.commits() - commits) / count
            phases.append(phase)
    finally:
        await conn.close()
    return phases


# ─── report ──────────────────────────────────────────────────────────────────


def _median_phase(phases: list[Phase]) -> Phase:
    return sorted(phases, key=lambda p: p.rate)[len(phases) // 2]


def _median(phases: list[Phase], value: Callable[[Phase], float]) -> float:
    return statistics.median(value(p) for p in phases)


def _cpu_ms(phases: list[Phase], process: str) -> float:
    """The median CPU milliseconds per query `process` spent over `phases`."""
    return _median(phases, lambda p: p.cpu_ms(process))


def _commits(phases: list[Phase]) -> str:
    counted = [p.commits for p in phases if not math.isnan(p.commits)]
    return f"{statistics.median(counted):.2f}" if counted else "·"


def report(
    args: argparse.Namespace,
    facts: dict,
    curve: dict,
    plans: dict,
    measured: dict[str, tuple[SearchPath, list[Phase]]],
    recalls: Recalls,
    suspected: dict[str, list[Phase]],
    records: list[Phase],
) -> str:
    paths = {name: phases for name, (_, phases) in measured.items()}
    lines = [f"## Run: --size {args.size}, {args.dimension} dims, k={K}, concurrency {args.concurrency}", ""]
    lines.append(
        f"Loaded {facts['rows']:,} rows ({args.size:,} judged) in {facts['load_s']:.1f} s by COPY; "
        f"HNSW build {facts['index_build_s']:.1f} s; index {facts['index_mb']:.0f} MB, "
        f"table with indexes {facts['table_mb']:.0f} MB. Exact search: {facts['exact_ms']:.1f} ms/query."
    )
    lines += [
        f"1-minute load average before and after the timed phases: {facts['load_average'][0]:.1f}, "
        f"{facts['load_average'][1]:.1f} (this process and the ones it measures make about 2 of it).",
        "",
    ]
    lines += [
        "### Recall@10 of the partial HNSW index against exact search",
        "",
        "| type (share) | ef_search | recall@10 | short answers | p50 ms (1 client) |",
        "|---|---|---|---|---|",
    ]
    for decision_type, share in TYPES:
        for ef, row in curve[decision_type].items():
            lines.append(
                f"| {decision_type} ({share:.0%}) | {ef} | {row['recall']:.3f} | "
                f"{row['short']}/{row['queries']} | {row['p50_ms']:.2f} |"
            )
    lines += [
        "",
        f"Plan the service chooses (queries.plan_search: ef_search = {EF_PER_RESULT} x k / type share, "
        f"at least {EF_SEARCH_FLOOR}; exact at or under {EXACT_SEARCH_ROWS:,} judged rows of the type or "
        f"past ef_search {EF_SEARCH_MAX}):",
        "",
    ]
    for decision_type, plan in plans.items():
        lines.append(f"- {decision_type}: {'exact' if plan.exact else f'graph, ef_search {plan.ef_search}'}")
    lines += [
        "",
        "End-to-end recall@10 over the query mix: "
        + ", ".join(f"{name} {recalls.mean(name):.3f}" for name in paths if name in recalls.scores)
        + ".",
        "",
    ]

    lines += [
        "### Similar search, side by side (median of rounds)",
        "",
        "CPU ms per query, read from the kernel for each process: Postgres (all its processes), "
        "the decisions server and the gateway serving the path, and the driving client. "
        "Commits: transactions Postgres committed per query, counted in the single-client phases; outside a "
        "transaction block every statement (a SET too) commits on its own.",
        "",
        "| path | clients | q/s | p50 ms | p99 ms | CPU Postgres | CPU decisions | CPU gateway | CPU client "
        "| commits |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    single = {name: phases[0] for name, phases in paths.items()}
    loaded = {name: phases[1:] for name, phases in paths.items()}
    for table in ({n: [p] for n, p in single.items()}, loaded):
        for name, phases in table.items():
            path = measured[name][0]
            lines.append(
                f"| {name} | {phases[0].concurrency} | {_median(phases, lambda p: p.rate):.0f} "
                f"| {_median(phases, lambda p: p.percentile(0.5)):.2f} "
                f"| {_median(phases, lambda p: p.percentile(0.99)):.2f} "
                f"| {_median(phases, lambda p: p.cpu_ms('postgres')):.2f} "
                f"| {_cpu_ms(phases, path.decisions) if path.decisions else 0:.2f} "
                f"| {_cpu_ms(phases, path.gateway) if path.gateway else 0:.2f} "
                f"| {_median(phases, lambda p: p.cpu_ms('client')):.2f} | {_commits(phases)} |"
            )
    lines.append("")
    bare = loaded["bare SQL"]
    for name in paths:
        if name.startswith(("gRPC", "gateway")) and "health" not in name:
            phases = loaded[name]
            path = measured[name][0]
            ratios = [p.rate / b.rate for p, b in zip(phases, bare, strict=False)]
            pg = _median(phases, lambda p: p.cpu_ms("postgres")) / _median(bare, lambda p: p.cpu_ms("postgres"))
            lines.append(
                f"- {name}: {statistics.median(ratios):.2f}x the bare SQL rate at {args.concurrency} clients "
                f"(rounds {', '.join(f'{r:.2f}' for r in ratios)}); Postgres CPU per query {pg:.2f}x bare SQL's; "
                f"decisions {_cpu_ms(phases, path.decisions):.2f} ms"
                + (f", gateway {_cpu_ms(phases, path.gateway):.2f} ms" if path.gateway else "")
                + " CPU per query."
            )
    lines.append(
        "- Rates per round at "
        f"{args.concurrency} clients, q/s: "
        + "; ".join(f"{name} " + ", ".join(f"{p.rate:.0f}" for p in phases) for name, phases in loaded.items())
        + "."
    )

    lines += [
        "",
        "### What costs Postgres CPU per query",
        "",
        f"The floor's statement, {args.concurrency} clients, sent each way (median of rounds).",
        "",
        "| how | q/s | CPU Postgres ms | CPU client ms | commits | recall@10 |",
        "|---|---|---|---|---|---|",
    ]
    for name, how in SUSPECTS:
        phases = suspected[name]
        lines.append(
            f"| {name}: {how} | {_median(phases, lambda p: p.rate):.0f} "
            f"| {_median(phases, lambda p: p.cpu_ms('postgres')):.2f} "
            f"| {_median(phases, lambda p: p.cpu_ms('client')):.2f} "
            f"| {_commits(phases)} | {recalls.mean(name):.3f} |"
        )

    lines += [
        "",
        "### Recording",
        "",
        "Records carry a context and no embedding, so the service embeds each one. CPU ms per decision.",
        "",
        "| path | clients | decisions/s | p50 ms | p99 ms | CPU Postgres | CPU decisions | CPU gateway "
        "| CPU client | commits |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for phase in records:
        suffix = " before" if phase.name.endswith(" before") else ""
        lines.append(
            f"| {phase.name} | {phase.concurrency} | {phase.rate:.0f} | {phase.percentile(0.5):.2f} "
            f"| {phase.percentile(0.99):.2f} | {phase.cpu_ms('postgres'):.2f} "
            f"| {phase.cpu_ms('decisions' + suffix):.2f} | {phase.cpu_ms('gateway' + suffix):.2f} "
            f"| {phase.cpu_ms('client'):.2f} | {_commits([phase])} |"
        )
    return "\n".join(lines)


@asynccontextmanager
async def bench_database(args: argparse.Namespace, workdir: Path) -> AsyncIterator[tuple[str, str]]:
    """(SQLAlchemy URL, asyncpg DSN) of a fresh bench database, migrated.

    An embedded Postgres is the test harness's, sized as a deployment would
    be: shared_buffers holds the index and the hot part of the table, not the
    embedded default of 128 MB. The setting needs a restart, so the stack
    starts once to set it and again to use it.
    """
    if args.database_url:
        server = Stack(workdir, args.database_url, "")
        yield await _migrated(server, args.dimension)
        return
    data_dir = workdir / "stack"
    with embedded_stack(data_dir) as stack:
        admin = await asyncpg.connect(stack.raw_dsn("postgres"))
        try:
            await admin.execute(f"alter system set shared_buffers = '{args.shared_buffers}'")
        finally:
            await admin.close()
    with embedded_stack(data_dir) as stack:
        yield await _migrated(stack, args.dimension)


async def _migrated(stack: Stack, dimension: int) -> tuple[str, str]:
    url = await create_database(stack, DATABASE)
    engine = context_engine(url, "decisions")
    try:
        await migrate(engine, "decisions", extra={"outrider.embedding_dim": str(dimension)})
    finally:
        await engine.dispose()
    return url, stack.raw_dsn(DATABASE)


async def main(args: argparse.Namespace) -> None:
    workdir = Path(tempfile.mkdtemp(prefix="outrider-bench-"))
    servers = [Servers("", ROOT)]
    if args.baseline:
        servers.append(Servers(" before", args.baseline))
    try:
        async with bench_database(args, workdir) as (database_url, raw):
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

            for server in servers:
                server.start(database_url, args.dimension, workdir)
            for server in servers:
                await server.wait_ready()
            probe = await asyncpg.connect(raw)
            try:
                postmaster = psutil.Process(await probe.fetchval("select pg_backend_pid()")).ppid()
                meter = CpuMeter(postmaster, {k: v for s in servers for k, v in s.pids().items()}, probe)
                recalls = Recalls(queries)
                load_before = os.getloadavg()[0]
                paths = await similar_paths(
                    raw,
                    servers,
                    queries,
                    plans,
                    concurrency=args.concurrency,
                    seconds=args.seconds,
                    rounds=args.rounds,
                    meter=meter,
                    recalls=recalls,
                )
                print("similar search measured", flush=True)
                suspected = await suspects(
                    raw,
                    queries,
                    plans,
                    concurrency=args.concurrency,
                    seconds=args.suspect_seconds,
                    rounds=args.rounds,
                    meter=meter,
                    recalls=recalls,
                )
                print("suspects measured", flush=True)
                records = await record_paths(
                    servers, concurrency=args.concurrency, seconds=args.seconds, batch=args.batch, meter=meter
                )
                records += await recorder_runs(
                    servers[0],
                    raw,
                    burst=args.recorder_burst,
                    offered=args.recorder_rate,
                    seconds=args.seconds,
                    meter=meter,
                )
                facts["load_average"] = (load_before, os.getloadavg()[0])
            finally:
                await probe.close()
            print(report(args, facts, curve, plans, paths, recalls, suspected, records), flush=True)
    finally:
        for server in servers:
            server.stop()
        shutil.rmtree(workdir, ignore_errors=True)


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=200_000, help="judged decisions to load (default 200,000)")
    parser.add_argument("--dimension", type=int, default=384)
    parser.add_argument("--queries", type=int, default=300, help="distinct query vectors, split across types")
    parser.add_argument(
        "--ef",
        type=lambda s: [int(x) for x in s.split(",")],
        default=[40, 64, 100, 200, 400],
        help="ef_search values for the recall curve",
    )
    parser.add_argument("--concurrency", type=int, default=8, help="client tasks in the loaded phases")
    parser.add_argument("--seconds", type=float, default=10.0, help="length of each measured phase")
    parser.add_argument("--suspect-seconds", type=float, default=5.0, help="length of each Postgres-suspect phase")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds of the paths")
    parser.add_argument("--batch", type=int, default=100, help="decisions per RecordDecisions call in its phase")
    parser.add_argument(
        "--recorder-burst", type=int, default=10_000, help="decisions handed to one engine's recorder at once"
    )
    parser.add_argument(
        "--recorder-rate",
        type=int,
        default=2_000,
        help="decisions per second offered to one engine's recorder, for --seconds",
    )
    parser.add_argument(
        "--baseline",
        type=lambda text: Path(text).resolve(),
        default=None,
        help="a checkout of earlier code whose decisions context and gateway run beside these",
    )
    parser.add_argument("--database-url", default="", help="use this Postgres server instead of an embedded one")
    parser.add_argument("--shared-buffers", default="2GB", help="shared_buffers of the embedded Postgres")
    args = parser.parse_args(argv)
    if args.size < 100:
        parser.error("--size must be at least 100")
    return args


if __name__ == "__main__":
    asyncio.run(main(parse()))
