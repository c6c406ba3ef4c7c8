"""A week in production, compressed: does the platform stay bounded and lose nothing?

    python -m bench.soak.run --minutes 20                # the soak
    python -m bench.soak.run --minutes 2                 # smoke: the same, kills included

Starts the platform as an operator does, `outrider up` on a fresh data dir
(embedded Postgres and nats-server, so the supervisor is the real one), with
small stream limits and every retention shortened to minutes: a retention
day of OUTRIDER_RETENTION_DAY_S=60 seconds, runs, model calls and decisions
kept 4 of those days, playground runs and fact rejections too. The deletes
are the platform's own retention jobs, passing every 24th of that day.

Engines then publish at --rate times the demo's pace (`outrider demo` sent
its 120 booking rounds in 15.2 s here, sweep and queries included: 8 rounds
a second) through the doors the demo uses, with the SDK's own clients:

  NATS   task runs (TelemetryPublisher.task_run), heartbeats, and half the
         booking facts (TelemetryPublisher.booking_facts);
  gRPC   decisions (DecisionRecorder);
  REST   the other half of the facts (/internal/facts), conversations
         (/internal/conversations) and OTLP traces (/v1/traces, a root span
         and a chat span per trace: a run and a model call).

A round is the demo's: two decisions, a fact about each decision's subject,
four task runs and a conversation; this bench adds a trace per round. A REST
call answered 429/502/503/504 or cut off is retried, as an engine would, for
up to a minute; NATS and gRPC retry inside the SDK. What is still refused
after that is counted by door and reason.

NATS's server is SIGKILLed at a quarter of the run, Postgres's postmaster at
45 %; the supervisor restarts both. Every ~10 s the bench samples streams and
consumers (the gateway's /metrics), tables (rows, pg_total_relation_size,
inserted and deleted tuples), RSS and Postgres connections per process, and
polls /readyz every second. Every event acknowledged to its sender carries
an id; each is looked for in Postgres from 20 s after its acknowledgement
(and given up on as missing before its lifetime ends), the rest once the
senders stopped and the consumers drained. The report goes to stdout as it
goes and to --out at the end, with the raw samples beside it as JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import json
import logging
import os
import random
import re
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import psutil
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1 import trace_pb2

from bench.soak.figures import Ledger, increase, last_half, outage, refusals, slope_per_hour
from launcher.demo.fleet import AGENTS_REPORTING, STRONG_MODEL, WEAK_MODEL, _conversation, _stall_context
from outrider.client.decisions import DecisionRecorder
from outrider.client.telemetry import TelemetryPublisher
from services.common import settings as settings_module
from services.common.embedded import EmbeddedPostgres

ROOT = Path(__file__).resolve().parents[2]
# `outrider demo` on this machine sent its default 120 rounds, then flushed,
# swept and queried, in 15.2 s: 8 rounds a second at least.
DEMO_ROUNDS_PER_S = 8.0
DAY_S = 60
STREAM_MAX_MB = 4
MSGS_PER_SUBJECT = 10_000
SAMPLE_EVERY_S = 10.0
PROBE_EVERY_S = 1.0
CHECK_EVERY_S = 15.0
SETTLE_S = 20.0
# An event unfound this long before its lifetime ends is missing: looked for
# later, retention might have taken it.
MARGIN_S = 40.0
REST_PATIENCE_S = 60.0
REST_CONNECTIONS = 16
# The longest one look at Postgres or /metrics may take: a sample is never held up by a dependency that is away.
LOOK_TIMEOUT_S = 8.0
RETRIED_STATUSES = frozenset({429, 502, 503, 504})
SCHEMAS = ("registry", "decisions", "outcomes", "playground", "telemetry")
SELF = "outrider-soak"

FACTS_LOOKUP = "select subject_id, count(*) from outcomes.subject_facts where subject_id = any($1::text[]) group by 1"
# Where each kind of event is found again, by its id.
LOOKUPS: dict[str, str] = {
    "task run (NATS)": "select task_id, count(*) from telemetry.runs where task_id = any($1::text[]) group by 1",
    "span run (OTLP)": "select task_id, count(*) from telemetry.runs where task_id = any($1::text[]) group by 1",
    "model call (OTLP)": (
        "select trace_id || '-' || span_id, count(*) from telemetry.model_calls"
        " where trace_id || '-' || span_id = any($1::text[]) group by 1"
    ),
    "decision (gRPC)": (
        "select id::text, count(*) from decisions.decisions where id = any($1::text[]::uuid[]) group by 1"
    ),
    "fact (REST)": FACTS_LOOKUP,
    "fact (NATS)": FACTS_LOOKUP,
    "conversation (REST)": (
        "select conversation_id, count(*) from outcomes.conversations"
        " where conversation_id = any($1::text[]) group by 1"
    ),
}


def say(line: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {line}", flush=True)


def free_ports(count: int) -> int:
    """The first of `count` consecutive ports nothing listens on now."""
    while True:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            base = probe.getsockname()[1]
        if base + count >= 65_000:
            continue
        try:
            for port in range(base, base + count):
                with socket.socket() as taken:
                    taken.bind(("127.0.0.1", port))
        except OSError:
            continue
        return base


# --- the platform, as an operator starts it ----------------------------------


@dataclass
class Platform:
    data_dir: Path
    env: dict[str, str]
    log_path: Path
    process: subprocess.Popen[bytes] | None = None

    @classmethod
    def fresh(cls, work: Path, kept_days: int) -> Platform:
        data_dir = work / "data"
        grpc_base = free_ports(len(settings_module.CONTEXTS))
        env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "NATS_URL")}
        env.update(
            {
                "OUTRIDER_DATA_DIR": str(data_dir),
                "OUTRIDER_HTTP_PORT": str(free_ports(1)),
                "OUTRIDER_GRPC_PORT": str(grpc_base),
                "OUTRIDER_NATS_PORT": str(free_ports(1)),
                "OUTRIDER_LOG_FORMAT": "json",
                "OUTRIDER_STREAM_MAX_MB": str(STREAM_MAX_MB),
                "OUTRIDER_STREAM_MAX_MSGS_PER_SUBJECT": str(MSGS_PER_SUBJECT),
                "OUTRIDER_RETENTION_DAY_S": str(DAY_S),
                "OUTRIDER_TELEMETRY_RETENTION_DAYS": str(kept_days),
                "AGENT_DECISION_RETENTION_DAYS": str(kept_days),
                "OUTRIDER_PLAYGROUND_RETENTION_DAYS": str(kept_days),
                "OUTRIDER_FACT_REJECTION_RETENTION_DAYS": str(kept_days),
            }
        )
        return cls(data_dir, env, work / "outrider-up.log")

    def settings(self) -> settings_module.Settings:
        """The settings an engine on this machine reads: the same data dir, so the same secrets."""
        saved = dict(os.environ)
        try:
            os.environ.clear()
            os.environ.update(self.env)
            return settings_module.load()
        finally:
            os.environ.clear()
            os.environ.update(saved)

    def start(self) -> None:
        outrider = Path(sys.executable).with_name("outrider")
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen([str(outrider), "up"], env=self.env, stdout=log, stderr=log, cwd=ROOT)

    def children(self) -> dict[str, psutil.Process]:
        """The processes `outrider up` runs, by role."""
        assert self.process is not None
        roles: dict[str, psutil.Process] = {}
        try:
            supervisor = psutil.Process(self.process.pid)
            roles["supervisor"] = supervisor
            for child in supervisor.children():
                with contextlib.suppress(psutil.Error):
                    name, cmdline = child.name(), child.cmdline()
                    if name == "nats-server":
                        roles["nats-server"] = child
                    elif name == "postgres" or (cmdline and cmdline[0].endswith("postgres")):
                        roles["postmaster"] = child
                    elif "gateway" in cmdline:
                        roles["gateway"] = child
                    elif "serve" in cmdline:
                        roles[cmdline[cmdline.index("serve") + 1]] = child
        except psutil.Error:
            pass
        return roles

    def stop(self, timeout_s: float = 60.0) -> int | None:
        if self.process is None or self.process.poll() is not None:
            return None if self.process is None else self.process.returncode
        self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout_s)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return self.process.wait()


# --- what the engines sent, and what came of it -------------------------------


@dataclass
class Doors:
    """Every publish's fate: acknowledged ids per kind, refusals, retried attempts."""

    give_up_s: float
    ledgers: dict[str, Ledger] = field(default_factory=dict)
    refused: list[tuple[str, str]] = field(default_factory=list)
    retried: Counter[str] = field(default_factory=Counter)
    server_errors: Counter[str] = field(default_factory=Counter)
    heartbeats: int = 0

    def __post_init__(self) -> None:
        self.ledgers = {kind: Ledger(SETTLE_S, self.give_up_s) for kind in LOOKUPS}

    def ack(self, kind: str, event_id: str) -> None:
        self.ledgers[kind].acknowledge(event_id, time.monotonic())

    def refuse(self, door: str, reason: str) -> None:
        self.refused.append((door, reason[:120]))


class DroppedDecisions(logging.Handler):
    """The recorder says by log line which decision it gave up on; those
    were never acknowledged, so they leave the ledger as refusals."""

    def __init__(self, doors: Doors) -> None:
        super().__init__(logging.WARNING)
        self.doors = doors

    def emit(self, record: logging.LogRecord) -> None:
        decision_id = getattr(record, "decision_id", None)
        if decision_id:
            self.doors.ledgers["decision (gRPC)"].withdraw(decision_id)
            self.doors.refuse(
                "gRPC RecordDecisions", f"{getattr(record, 'reason', '?')}: {getattr(record, 'detail', '')}"
            )


def _kv(key: str, value: str | int) -> KeyValue:
    if isinstance(value, int):
        return KeyValue(key=key, value=AnyValue(int_value=value))
    return KeyValue(key=key, value=AnyValue(string_value=value))


def export_body(traces: list[tuple[str, bytes]], now_ns: int) -> tuple[bytes, list[str], list[str]]:
    """One export request: per trace, its agent's root span and a chat span.
    Returns the body, the runs' task ids and the model calls' keys it carries."""
    request = ExportTraceServiceRequest()
    runs, calls = [], []
    for agent, trace_id in traces:
        resource_spans = request.resource_spans.add()
        resource_spans.resource.attributes.append(_kv("service.name", agent))
        scope = resource_spans.scope_spans.add()
        root, chat = os.urandom(8), os.urandom(8)
        scope.spans.append(
            trace_pb2.Span(
                trace_id=trace_id,
                span_id=root,
                name="stall_response",
                start_time_unix_nano=now_ns - 900_000_000,
                end_time_unix_nano=now_ns,
            )
        )
        scope.spans.append(
            trace_pb2.Span(
                trace_id=trace_id,
                span_id=chat,
                parent_span_id=root,
                name=f"chat {STRONG_MODEL}",
                start_time_unix_nano=now_ns - 600_000_000,
                end_time_unix_nano=now_ns - 100_000_000,
                attributes=[
                    _kv("gen_ai.operation.name", "chat"),
                    _kv("gen_ai.provider.name", "anthropic"),
                    _kv("gen_ai.request.model", STRONG_MODEL),
                    _kv("gen_ai.usage.input_tokens", 800),
                    _kv("gen_ai.usage.output_tokens", 60),
                ],
            )
        )
        runs.append(f"{trace_id.hex()}-{root.hex()}")
        calls.append(f"{trace_id.hex()}-{chat.hex()}")
    return request.SerializeToString(), runs, calls


class Fleet:
    """The engines: rounds at a steady pace, each sent through its doors concurrently."""

    def __init__(self, settings: settings_module.Settings, doors: Doors, rounds_per_s: float, seed: int) -> None:
        self.settings, self.doors, self.rounds_per_s = settings, doors, rounds_per_s
        self.rng = random.Random(seed)
        self.run_id = uuid.uuid4().hex[:8]
        self.base = f"http://127.0.0.1:{settings.http_port}"
        self.headers = {"X-Internal-Key": settings.internal_key}
        self.http = httpx.AsyncClient(
            base_url=self.base,
            timeout=15,
            limits=httpx.Limits(max_connections=REST_CONNECTIONS, max_keepalive_connections=REST_CONNECTIONS),
        )
        # Requests wait here, not in httpx's pool: its queue of waiting
        # requests is scanned whole at each release, so thousands waiting
        # while the gateway is slow would spin this process's loop.
        self.rest_slots = asyncio.Semaphore(REST_CONNECTIONS)
        self.recorder = DecisionRecorder(settings.addr("decisions"), settings.internal_key)
        self.publisher: TelemetryPublisher | None = None
        self.traces: list[tuple[str, bytes]] = []
        self.in_flight: set[asyncio.Task[None]] = set()
        self.rounds = 0

    async def connect(self) -> None:
        self.publisher = await TelemetryPublisher.connect(
            self.settings.nats_url or f"nats://127.0.0.1:{self.settings.nats_port}",
            name="outrider-soak-engines",
            user=self.settings.nats_engine_user,
            password=self.settings.nats_engine_password,
        )

    async def run(self, until: float) -> None:
        """Start a round every 1/rate seconds until `until` (monotonic), on schedule even while doors are slow."""
        started = time.monotonic()
        loops = [asyncio.create_task(self._exports(until)), asyncio.create_task(self._heartbeats(until))]
        while (now := time.monotonic()) < until:
            due = started + self.rounds / self.rounds_per_s
            if due > now:
                await asyncio.sleep(due - now)
                continue
            task = asyncio.create_task(self._round(self.rounds))
            self.in_flight.add(task)
            task.add_done_callback(self.in_flight.discard)
            self.rounds += 1
        await asyncio.gather(*loops)

    async def finish(self, timeout_s: float) -> None:
        if self.in_flight:
            await asyncio.wait(set(self.in_flight), timeout=timeout_s)
        await self.recorder.flush(timeout_s)

    async def close(self) -> None:
        await self.recorder.close()
        if self.publisher is not None:
            await self.publisher.close()
        await self.http.aclose()

    async def _round(self, n: int) -> None:
        assert self.publisher is not None
        now = datetime.now(UTC)
        subjects = []
        for decision_type, agent, actions in (
            ("stall_response", "EXCEPTION_AGENT", ("reassign", "wait", "notify_customer")),
            ("assignment_failure", "DISPATCH_AGENT", ("widen_radius", "escalate", "retry_later")),
        ):
            subject = f"soak-{self.run_id}-{n}-{decision_type}"
            subjects.append(subject)
            decision_id = self.recorder.record(
                decision_type=decision_type,
                agent_id=agent,
                subject_id=subject,
                action=self.rng.choice(actions),
                confidence=round(self.rng.uniform(0.55, 0.95), 2),
                context=_stall_context(self.rng),
                model=self.rng.choice((STRONG_MODEL, WEAK_MODEL)),
                reasoning="soak",
                decided_at=now,
            )
            self.doors.ack("decision (gRPC)", decision_id)
        self.traces.append((self.rng.choice(AGENTS_REPORTING), os.urandom(16)))
        await asyncio.gather(
            self._fact_rest(subjects[0], now),
            self._fact_nats(subjects[1], now),
            *(self._task_run(agent, f"{self.run_id}-{n}-{i}", now) for i, agent in enumerate(AGENTS_REPORTING)),
            self._conversation(n),
        )

    async def _task_run(self, agent: str, task_id: str, now: datetime) -> None:
        assert self.publisher is not None
        try:
            await self.publisher.task_run(
                agent_id=agent,
                task_id=task_id,
                task_type="tick",
                status="succeeded",
                started_at=now - timedelta(milliseconds=self.rng.randrange(40, 4000)),
                finished_at=now,
            )
        except Exception as error:  # noqa: BLE001 - every refusal is counted, whatever its kind
            self.doors.refuse("NATS telemetry.task", f"{type(error).__name__}: {error}")
        else:
            self.doors.ack("task run (NATS)", task_id)

    async def _fact_nats(self, subject: str, now: datetime) -> None:
        assert self.publisher is not None
        event = {"subject_id": subject, "at": now.isoformat(), "status": "assigned", "assigned_at": now.isoformat()}
        try:
            await self.publisher.booking_facts(event, msg_id=f"{subject}:{now.isoformat()}")
        except Exception as error:  # noqa: BLE001 - every refusal is counted, whatever its kind
            self.doors.refuse("NATS facts.booking", f"{type(error).__name__}: {error}")
        else:
            self.doors.ack("fact (NATS)", subject)

    async def _fact_rest(self, subject: str, now: datetime) -> None:
        event = {"subject_id": subject, "at": now.isoformat(), "status": "delivered", "delivered_at": now.isoformat()}
        if await self._post("REST /internal/facts", "/internal/facts", json=event):
            self.doors.ack("fact (REST)", subject)

    async def _conversation(self, n: int) -> None:
        body = _conversation(self.rng, self.rng.choice((STRONG_MODEL, WEAK_MODEL)), n)
        body["conversation_id"] = f"soak-{self.run_id}-{body['conversation_id']}"
        if await self._post("REST /internal/conversations", "/internal/conversations", json=body):
            self.doors.ack("conversation (REST)", body["conversation_id"])

    async def _exports(self, until: float) -> None:
        """The exporter: what the rounds traced, every half second, as one export request."""
        while time.monotonic() < until or self.traces:
            await asyncio.sleep(0.5)
            traces, self.traces = self.traces, []
            if traces:
                task = asyncio.create_task(self._export(traces))
                self.in_flight.add(task)
                task.add_done_callback(self.in_flight.discard)

    async def _export(self, traces: list[tuple[str, bytes]]) -> None:
        body, runs, calls = export_body(traces, time.time_ns())
        headers = {"Content-Type": "application/x-protobuf"}
        if await self._post("REST /v1/traces", "/v1/traces", content=body, headers=headers, empty_ok=True):
            for run in runs:
                self.doors.ack("span run (OTLP)", run)
            for call in calls:
                self.doors.ack("model call (OTLP)", call)

    async def _heartbeats(self, until: float) -> None:
        assert self.publisher is not None
        while time.monotonic() < until:
            for agent in AGENTS_REPORTING:
                try:
                    await asyncio.wait_for(self.publisher.heartbeat(agent_id=agent, state="soaking"), 5)
                    self.doors.heartbeats += 1
                except Exception as error:  # noqa: BLE001 - every refusal is counted, whatever its kind
                    self.doors.refuse("NATS heartbeat", f"{type(error).__name__}: {error}")
            await asyncio.sleep(2.0 / self.rounds_per_s * len(AGENTS_REPORTING))

    async def _post(self, door: str, path: str, *, empty_ok: bool = False, **kwargs: Any) -> bool:
        """POST as an engine would: retried on 429/502/503/504 and broken
        connections for up to a minute; True once answered 2xx."""
        headers = {**self.headers, **kwargs.pop("headers", {})}
        deadline = time.monotonic() + REST_PATIENCE_S
        delay = 0.2
        while True:
            try:
                async with self.rest_slots:
                    reply = await self.http.post(path, headers=headers, **kwargs)
            except httpx.HTTPError as error:
                reason = f"{type(error).__name__}"
            else:
                if reply.status_code >= 500:
                    self.doors.server_errors[f"{door} {reply.status_code}"] += 1
                if reply.is_success:
                    if empty_ok and reply.content:
                        self.doors.refuse(door, f"partial success: {reply.content[:80]!r}")
                        return False
                    return True
                reason = f"HTTP {reply.status_code}"
                if reply.status_code not in RETRIED_STATUSES:
                    self.doors.refuse(door, f"{reason}: {reply.text[:80]}")
                    return False
            self.doors.retried[f"{door} {reason}"] += 1
            if time.monotonic() + delay > deadline:
                self.doors.refuse(door, f"{reason} for {REST_PATIENCE_S:.0f}s")
                return False
            await asyncio.sleep(delay)
            delay = min(delay * 2, 5.0)


# --- looking: Postgres, /metrics, processes ------------------------------------


def _swallow(task: asyncio.Future[Any]) -> None:
    """Read an abandoned look-up's end, so its failure is not reported as never retrieved."""
    if not task.cancelled():
        task.exception()


class Store:
    """The bench's one connection to the platform's Postgres, made again after a cut."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.conn: asyncpg.Connection | None = None
        # A connection runs one query at a time; the final look-ups may overlap the periodic ones.
        self.lock = asyncio.Lock()

    async def run(self, body: Callable[[asyncpg.Connection], Awaitable[Any]]) -> Any:
        """body's result, or None while Postgres is away or slower than LOOK_TIMEOUT_S.

        A late body is abandoned with its connection closed under it, not
        cancelled and awaited: asyncpg's cancellation asks the server to
        cancel, and a server that is away never answers that either.
        """
        async with self.lock:
            return await self._run(body)

    async def _run(self, body: Callable[[asyncpg.Connection], Awaitable[Any]]) -> Any:
        try:
            if self.conn is None or self.conn.is_closed():
                url = EmbeddedPostgres.running_url(self.data_dir)
                if url is None:
                    return None
                self.conn = await asyncpg.connect(
                    url.replace("postgresql+asyncpg://", "postgresql://"),
                    timeout=5,
                    server_settings={"application_name": SELF},
                )
            conn = self.conn
            task = asyncio.ensure_future(body(conn))
            done, _ = await asyncio.wait({task}, timeout=LOOK_TIMEOUT_S)
            if not done:
                self._drop()
                task.add_done_callback(_swallow)
                return None
            return task.result()
        except (
            OSError,
            asyncpg.PostgresError,
            asyncpg.InterfaceError,
            asyncpg.exceptions.InternalClientError,
            TimeoutError,
        ):
            self._drop()
            return None

    def _drop(self) -> None:
        if self.conn is not None:
            with contextlib.suppress(Exception):
                self.conn.terminate()
        self.conn = None

    async def close(self) -> None:
        if self.conn is not None:
            with contextlib.suppress(Exception):
                await self.conn.close(timeout=5)


async def tables(conn: asyncpg.Connection) -> dict[str, dict[str, float]]:
    rows = await conn.fetch(
        "select schemaname || '.' || relname as name, n_tup_ins, n_tup_del from pg_stat_user_tables"
        " where schemaname = any($1::text[]) and relname not like 'alembic%'",
        list(SCHEMAS),
    )
    out: dict[str, dict[str, float]] = {}
    for row in rows:
        counted = await conn.fetchval(f"select count(*) from {row['name']}")
        size = await conn.fetchval("select pg_total_relation_size($1::regclass)", row["name"])
        out[row["name"]] = {"rows": counted, "bytes": size, "inserted": row["n_tup_ins"], "deleted": row["n_tup_del"]}
    return out


async def connections(conn: asyncpg.Connection) -> dict[str, int]:
    rows = await conn.fetch(
        "select coalesce(nullif(application_name, ''), backend_type) as who, count(*) from pg_stat_activity"
        " where application_name <> $1 group by 1",
        SELF,
    )
    return {row["who"]: row["count"] for row in rows}


METRIC = re.compile(r"^(?P<name>[a-z_]+)(?:\{(?P<labels>[^}]*)\})? (?P<value>[-+0-9.eE]+|NaN)$")
WATCHED = (
    "outrider_stream_bytes",
    "outrider_stream_messages",
    "outrider_stream_max_bytes",
    "outrider_stream_fullness_ratio",
    "outrider_consumer_pending_messages",
    "outrider_consumer_ack_pending_messages",
    "outrider_consumer_redelivered_messages",
    "outrider_retention_deleted_total",
)


def parse_metrics(body: str) -> dict[str, float]:
    """The watched series of a Prometheus text page, keyed `name{labels}`."""
    out = {}
    for line in body.splitlines():
        match = METRIC.match(line)
        if match and match["name"] in WATCHED:
            out[f"{match['name']}{{{match['labels'] or ''}}}"] = float(match["value"])
    return out


def memory(roles: Mapping[str, psutil.Process]) -> dict[str, float]:
    """RSS in MiB per role; the postmaster's children (backends and Postgres's own workers) summed apart."""
    out: dict[str, float] = {}
    for role, process in roles.items():
        with contextlib.suppress(psutil.Error):
            out[role] = process.memory_info().rss / 2**20
            if role == "postmaster":
                out["postgres children"] = (
                    sum(child.memory_info().rss for child in process.children() if child.is_running()) / 2**20
                )
    me = psutil.Process()
    out["bench"] = me.memory_info().rss / 2**20
    return out


@dataclass
class LoopLag:
    """How late the bench's event loop wakes: a busy machine (or a busy bench) shows here first."""

    worst_s: float = 0.0

    async def watch(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            started = time.monotonic()
            await asyncio.sleep(0.1)
            self.worst_s = max(self.worst_s, time.monotonic() - started - 0.1)

    def worst(self, *, reset: bool = False) -> float:
        value = round(self.worst_s, 3)
        if reset:
            self.worst_s = 0.0
        return value


@dataclass
class Soak:
    args: argparse.Namespace
    platform: Platform
    settings: settings_module.Settings
    doors: Doors
    samples: list[dict[str, Any]] = field(default_factory=list)
    probes: list[tuple[float, bool]] = field(default_factory=list)
    red_reasons: Counter[str] = field(default_factory=Counter)
    kills: list[tuple[str, float]] = field(default_factory=list)
    lag: LoopLag = field(default_factory=LoopLag)
    t0: float = 0.0

    def t(self) -> float:
        return time.monotonic() - self.t0

    async def probe(self, http: httpx.AsyncClient, stop: asyncio.Event) -> None:
        while not stop.is_set():
            started = time.monotonic()
            try:
                reply = await http.get("/readyz", timeout=3)
                ready = reply.status_code == 200
                if not ready:
                    self.red_reasons[_red_reason(reply)] += 1
            except httpx.HTTPError as error:
                ready = False
                self.red_reasons[f"gateway unreachable ({type(error).__name__})"] += 1
            self.probes.append((self.t(), ready))
            await asyncio.sleep(max(0.0, PROBE_EVERY_S - (time.monotonic() - started)))

    async def sample(self, http: httpx.AsyncClient, store: Store) -> dict[str, Any]:
        sample: dict[str, Any] = {"t": round(self.t(), 1), "load": os.getloadavg()[0]}
        try:
            reply = await asyncio.wait_for(
                http.get("/metrics", headers={"X-Internal-Key": self.settings.internal_key}, timeout=5),
                LOOK_TIMEOUT_S,
            )
            sample["metrics"] = parse_metrics(reply.text) if reply.is_success else {}
        except (httpx.HTTPError, TimeoutError):
            sample["metrics"] = {}
        sample["tables"] = await store.run(tables) or {}
        sample["connections"] = await store.run(connections) or {}
        sample["rss_mib"] = memory(self.platform.children())
        usage = resource.getrusage(resource.RUSAGE_SELF)
        sample["bench_cpu_s"] = usage.ru_utime + usage.ru_stime
        sample["acknowledged"] = {kind: ledger.acknowledged for kind, ledger in self.doors.ledgers.items()}
        sample["refused"] = len(self.doors.refused)
        sample["loop_lag_s"] = self.lag.worst(reset=True)
        return sample

    async def sampling(self, http: httpx.AsyncClient, store: Store, stop: asyncio.Event) -> None:
        while not stop.is_set():
            started = time.monotonic()
            sample = await self.sample(http, store)
            self.samples.append(sample)
            say(_sample_line(sample))
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), max(0.0, SAMPLE_EVERY_S - (time.monotonic() - started)))

    async def look(self, store: Store, *, final: bool = False) -> None:
        """Look for the settled ids of every kind (all of them when final)."""
        for kind, ledger in self.doors.ledgers.items():
            due = ledger.due(time.monotonic(), everything=final)
            for first in range(0, len(due), 5_000):
                chunk = due[first : first + 5_000]

                async def fetch(
                    conn: asyncpg.Connection, chunk: list[str] = chunk, query: str = LOOKUPS[kind]
                ) -> dict[str, int]:
                    return {row[0]: row[1] for row in await conn.fetch(query, chunk)}

                stored = await store.run(fetch)
                if stored is not None:
                    ledger.settle(chunk, stored, time.monotonic(), final=final)

    async def looking(self, store: Store, stop: asyncio.Event) -> None:
        while not stop.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), CHECK_EVERY_S)
            await self.look(store)

    async def kill(self, name: str, role: str) -> None:
        process = self.platform.children().get(role)
        if process is None:
            say(f"KILL {name}: no {role} process found")
            return
        self.kills.append((name, self.t()))
        say(f"KILL {name}: SIGKILL to {role} pid {process.pid}")
        process.send_signal(signal.SIGKILL)

    async def drained(self, http: httpx.AsyncClient, timeout_s: float) -> float:
        """Seconds until every consumer owes nothing and the streams hold nothing; the timeout if never."""
        started = time.monotonic()
        while time.monotonic() - started < timeout_s:
            with contextlib.suppress(httpx.HTTPError):
                reply = await http.get("/metrics", headers={"X-Internal-Key": self.settings.internal_key})
                metrics = parse_metrics(reply.text)
                owed = [
                    v
                    for k, v in metrics.items()
                    if k.startswith(
                        ("outrider_consumer_pending", "outrider_consumer_ack_pending", "outrider_stream_messages")
                    )
                ]
                if owed and not any(owed):
                    return time.monotonic() - started
            await asyncio.sleep(1.0)
        return timeout_s


def _red_reason(reply: httpx.Response) -> str:
    """What /readyz said was not ready, digits dropped so equal reasons count together."""
    try:
        body = reply.json()
    except ValueError:
        return f"HTTP {reply.status_code}"
    parts = [f"{name}: {state}" for name, state in (body.get("contexts") or {}).items() if state != "serving"]
    parts += [f"gateway {k}: {v}" for k, v in (body.get("gateway") or {}).items() if v not in ("up", "connected")]
    parts += (body.get("streams") or {}).get("reasons", [])
    return re.sub(r"\d[\d,.]*", "#", "; ".join(parts) or f"HTTP {reply.status_code}")[:200]


def _label(key: str, name: str) -> str:
    match = re.search(name + r'="([^"]*)"', key)
    return match[1] if match else "?"


def _sample_line(sample: Mapping[str, Any]) -> str:
    metrics = sample["metrics"]
    streams = " ".join(
        f"{_label(key, 'stream')}={value / 1024:.0f}KiB"
        for key, value in metrics.items()
        if key.startswith("outrider_stream_bytes")
    )
    pending = sum(v for k, v in metrics.items() if k.startswith("outrider_consumer_pending"))
    rows = sample["tables"]
    big = " ".join(
        f"{name.split('.', 1)[1]}={rows[name]['rows']:.0f}"
        for name in ("telemetry.runs", "telemetry.model_calls", "decisions.decisions", "outcomes.subject_facts")
        if name in rows
    )
    rss = sample["rss_mib"]
    return (
        f"t={sample['t']:>6.0f}s load={sample['load']:.1f} streams {streams or '?'} pending={pending:.0f}"
        f" | rows {big or '?'} | rss gw={rss.get('gateway', 0):.0f} tel={rss.get('telemetry', 0):.0f}"
        f" pg={rss.get('postmaster', 0):.0f} nats={rss.get('nats-server', 0):.0f}MiB"
        f" | conns={sum(sample['connections'].values())} acked={sum(sample['acknowledged'].values())}"
        f" refused={sample['refused']} lag={sample['loop_lag_s']:.2f}s"
    )


# --- the run --------------------------------------------------------------------


async def soak(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    platform = Platform.fresh(work, args.kept_days)
    say(f"outrider up on {platform.data_dir}, log {platform.log_path}")
    platform.start()
    try:
        return await measure(args, platform)
    finally:
        # Also when the bench itself fails: `outrider up` does not outlive it.
        platform.stop()


async def measure(args: argparse.Namespace, platform: Platform) -> dict[str, Any]:
    settings = platform.settings()
    base = f"http://127.0.0.1:{settings.http_port}"
    http = httpx.AsyncClient(base_url=base, timeout=10)
    up_started = time.monotonic()
    while True:
        with contextlib.suppress(httpx.HTTPError):
            if (await http.get("/readyz")).status_code == 200:
                break
        if time.monotonic() - up_started > 240 or (platform.process and platform.process.poll() is not None):
            raise SystemExit(f"the platform did not turn ready; see {platform.log_path}")
        await asyncio.sleep(1)
    say(
        f"ready in {time.monotonic() - up_started:.1f}s;"
        f" {args.rate:g}x the demo: {args.rate * DEMO_ROUNDS_PER_S:g} rounds/s"
    )
    run = Soak(args, platform, settings, Doors(give_up_s=args.kept_days * DAY_S - MARGIN_S))
    logging.getLogger("outrider.client.decisions").addHandler(DroppedDecisions(run.doors))
    fleet = Fleet(settings, run.doors, args.rate * DEMO_ROUNDS_PER_S, args.seed)
    await fleet.connect()
    # One connection for the samples and one for the look-ups: a connection runs one query at a time.
    store, lookups = Store(platform.data_dir), Store(platform.data_dir)
    stop = asyncio.Event()
    run.t0 = time.monotonic()
    cpu_at_start = resource.getrusage(resource.RUSAGE_SELF)
    duration = args.minutes * 60
    watchers = [
        asyncio.create_task(run.probe(http, stop)),
        asyncio.create_task(run.sampling(http, store, stop)),
        asyncio.create_task(run.looking(lookups, stop)),
        asyncio.create_task(run.lag.watch(stop)),
    ]

    async def kills() -> None:
        await asyncio.sleep(duration * 0.25)
        await run.kill("NATS", "nats-server")
        await asyncio.sleep(duration * 0.20)
        await run.kill("Postgres", "postmaster")
        await asyncio.sleep(duration * 0.05)
        say(f"refused so far: {refusals(run.doors.refused)}")

    killing = asyncio.create_task(kills())
    await fleet.run(run.t0 + duration)
    load_seconds = run.t()
    killing.cancel()
    say(f"senders stopped after {load_seconds:.0f}s ({fleet.rounds} rounds); waiting for what they have in flight")
    await fleet.finish(120)
    drained_s = await run.drained(http, 180)
    say(f"consumers drained {drained_s:.0f}s after the last send")
    await run.look(lookups, final=False)
    await run.look(lookups, final=True)
    stop.set()
    await asyncio.gather(*watchers)
    final_sample = await run.sample(http, store)
    run.samples.append(final_sample)
    cpu_at_end = resource.getrusage(resource.RUSAGE_SELF)
    bench_cpu = (cpu_at_end.ru_utime + cpu_at_end.ru_stime) - (cpu_at_start.ru_utime + cpu_at_start.ru_stime)
    await fleet.close()
    await store.close()
    await lookups.close()
    await http.aclose()
    roles = platform.children()
    code = platform.stop()
    leftovers = [role for role, process in roles.items() if process.is_running() and process.status() != "zombie"]
    say(f"outrider up stopped with {code}; still running after it: {leftovers or 'nothing'}")
    return {
        "command": "python -m bench.soak.run " + " ".join(sys.argv[1:]),
        "minutes": args.minutes,
        "rate": args.rate,
        "rounds": fleet.rounds,
        "load_seconds": load_seconds,
        "drained_s": drained_s,
        "bench_cpu_s": bench_cpu,
        "heartbeats": run.doors.heartbeats,
        "kills": run.kills,
        "probes": run.probes,
        "red_reasons": dict(run.red_reasons),
        "samples": run.samples,
        "tallies": {kind: dataclasses.asdict(ledger.tally()) for kind, ledger in run.doors.ledgers.items()},
        "missing_examples": {kind: ledger.missing[:5] for kind, ledger in run.doors.ledgers.items() if ledger.missing},
        "refused": refusals(run.doors.refused),
        "retried": dict(run.doors.retried),
        "server_errors": dict(run.doors.server_errors),
        "log_lines": log_lines(platform),
        "leftovers": leftovers,
        "exit_code": code,
    }


def log_lines(platform: Platform) -> dict[str, dict[str, int]]:
    """Warnings and errors in every log the platform wrote, counted by kind."""
    kinds: dict[str, Counter[str]] = {"error": Counter(), "warning": Counter(), "supervisor": Counter()}
    for line in platform.log_path.read_text(errors="replace").splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            if line.startswith("outrider:"):
                kinds["supervisor"][re.sub(r"\d+", "#", line)] += 1
            elif "Traceback" in line or "Error" in line:
                kinds["error"][f"unstructured: {line[:100]}"] += 1
            continue
        if isinstance(entry, dict) and entry.get("level") in ("error", "critical", "warning"):
            bucket = "warning" if entry["level"] == "warning" else "error"
            kinds[bucket][f"{entry.get('role', '?')}/{entry.get('logger', '?')}: {entry.get('msg', '')[:90]}"] += 1
    for pg_log in platform.data_dir.glob("postgres/log/*"):
        for line in pg_log.read_text(errors="replace").splitlines():
            for level in ("PANIC", "FATAL", "ERROR"):
                if f"{level}:" in line:
                    text = re.sub(r"\d+", "#", line.split(f"{level}:", 1)[1].strip())[:90]
                    kinds["error"][f"postgres {level}: {text}"] += 1
    for nats_log in platform.data_dir.rglob("nats-server.log"):
        for line in nats_log.read_text(errors="replace").splitlines():
            if "[ERR]" in line or "[FTL]" in line:
                text = re.sub(r"\d+", "#", line.split("]", 2)[-1].strip())[:90]
                kinds["error"][f"nats: {text}"] += 1
    return {kind: dict(counter.most_common()) for kind, counter in kinds.items()}


# --- the report -----------------------------------------------------------------------


def series(
    samples: list[dict[str, Any]], *path: str, scale: float = 1.0, absent: float | None = None
) -> list[tuple[float, float]]:
    """(t, value) of the value under `path` in each sample; `absent` where a
    reading was made without it (None: the sample is left out)."""
    points = []
    for sample in samples:
        value: Any = sample
        for step in path:
            value = value.get(step) if isinstance(value, dict) else None
        if value is None and absent is not None and isinstance(sample.get(path[0]), dict) and sample[path[0]]:
            value = absent
        if value is not None:
            points.append((float(sample["t"]), float(value) * scale))
    return points


def report(result: dict[str, Any]) -> str:
    samples = result["samples"]
    lines = [
        f"    {result['command']}",
        "",
        f"{result['minutes']:g} minutes at {result['rate']:g}x the demo's rate ({result['rounds']} rounds),"
        f" NATS killed at {_at(result, 'NATS')}, Postgres at {_at(result, 'Postgres')};"
        f" consumers drained {result['drained_s']:.0f} s after the last send;"
        f" load average {min(s['load'] for s in samples):.1f}–{max(s['load'] for s in samples):.1f}"
        f" (median {sorted(s['load'] for s in samples)[len(samples) // 2]:.1f}) on 2 cores.",
        "",
        "#### Events: acknowledged to the sender against Postgres",
        "",
        "| kind | acknowledged | found | missing | doubled |",
        "|---|---:|---:|---:|---:|",
    ]
    for kind, tally in result["tallies"].items():
        lines.append(
            f"| {kind} | {tally['acknowledged']:,} | {tally['found']:,} | {tally['missing']:,} | {tally['doubled']:,} |"
        )
    lines += ["", f"Heartbeats sent (core NATS, not stored): {result['heartbeats']:,}.", ""]
    lines += ["#### Publishes refused (after the sender's retries), by door and reason", ""]
    if result["refused"]:
        lines += [
            f"- {door}: " + ", ".join(f"{reason} × {n}" for reason, n in reasons.items())
            for door, reasons in result["refused"].items()
        ]
    else:
        lines.append("- none")
    lines += ["", "Attempts retried by the senders (then acknowledged or counted above):", ""]
    lines += [f"- {what}: {n}" for what, n in sorted(result["retried"].items())] or ["- none"]
    lines += [
        "",
        "Answers 5xx seen by the senders: "
        + (", ".join(f"{k} × {v}" for k, v in sorted(result["server_errors"].items())) or "none"),
        "",
    ]

    lines += [
        "#### /readyz around each kill (probed every second)",
        "",
        "| kill | red after | red for | green again after |",
        "|---|---:|---:|---:|",
    ]
    kills = result["kills"]
    for index, (name, at) in enumerate(kills):
        until = kills[index + 1][1] if index + 1 < len(kills) else None
        seen = outage(name, at, [tuple(p) for p in result["probes"]], until)
        lines.append(f"| {name} | {_s(seen.red_after_s)} | {_s(seen.red_for_s)} | {_s(seen.green_after_s)} |")
    red_total = sum(1 for _, ready in result["probes"] if not ready)
    lines += ["", f"Probes red in all: {red_total} of {len(result['probes'])}; what /readyz said:", ""]
    lines += [f"- {reason} × {n}" for reason, n in sorted(result["red_reasons"].items(), key=lambda kv: -kv[1])] or [
        "- never red"
    ]

    lines += ["", "#### Streams and consumers", "", "| series | max | at end | limit |", "|---|---:|---:|---:|"]
    keys = sorted(
        {k for s in samples for k in s["metrics"] if not k.startswith(("outrider_retention", "outrider_stream_max"))}
    )
    for key in keys:
        points = series(samples, "metrics", key)
        if not points:
            continue
        limit = ""
        if key.startswith("outrider_stream_bytes"):
            limit_points = series(samples, "metrics", key.replace("stream_bytes", "stream_max_bytes"))
            limit = f"{limit_points[-1][1]:,.0f}" if limit_points else ""
        lines.append(f"| `{key}` | {max(v for _, v in points):,.2f} | {points[-1][1]:,.2f} | {limit} |")

    lines += [
        "",
        "#### Tables while the engines published: rows and bytes, slope of the last half",
        "",
        "| table | rows start → max → end | rows/h (last half) | MiB start → max → end | MiB/h (last half) |"
        " inserted rows/s (whole, last half) | deleted rows/s (whole, last half) |",
        "|---|---|---:|---|---:|---:|---:|",
    ]
    loaded = [s for s in samples if s["t"] <= result["load_seconds"] + SAMPLE_EVERY_S / 2]
    half = last_half([(float(s["t"]), 0.0) for s in loaded])
    second = [s for s in loaded if s["t"] >= half[0][0]] if half else loaded
    span = (loaded[-1]["t"] - loaded[0]["t"]) or 1.0
    second_span = (second[-1]["t"] - second[0]["t"]) or 1.0
    for name in sorted({name for s in loaded for name in s["tables"]}):
        rows = series(loaded, "tables", name, "rows")
        size = series(loaded, "tables", name, "bytes", scale=2**-20)

        def rate(part: list[dict[str, Any]], column: str, length: float, name: str = name) -> float:
            return increase(v for _, v in series(part, "tables", name, column)) / length

        inserted, deleted = rate(loaded, "inserted", span), rate(loaded, "deleted", span)
        if not rows or (max(v for _, v in rows) == 0 and inserted == 0):
            continue
        lines.append(
            f"| {name} | {rows[0][1]:,.0f} → {max(v for _, v in rows):,.0f} → {rows[-1][1]:,.0f}"
            f" | {slope_per_hour(last_half(rows)):+,.0f}"
            f" | {size[0][1]:.2f} → {max(v for _, v in size):.2f} → {size[-1][1]:.2f}"
            f" | {slope_per_hour(last_half(size)):+.2f}"
            f" | {inserted:,.1f}, {rate(second, 'inserted', second_span):,.1f}"
            f" | {deleted:,.1f}, {rate(second, 'deleted', second_span):,.1f} |"
        )
    retention = sorted({k for s in samples for k in s["metrics"] if k.startswith("outrider_retention_deleted_total")})
    if retention:
        lines += ["", "The retention jobs' own counts while the engines published (/metrics):", ""]
        for key in retention:
            points = series(loaded, "metrics", key)
            gone = increase(v for _, v in points)
            lines.append(f"- `{key}`: {gone:,.0f} deleted, {gone / span:,.1f}/s")

    lines += [
        "",
        "#### RSS per process (MiB) and Postgres connections per process",
        "",
        "| process | start | max | end | slope/h whole run | slope/h last half |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    roles = sorted({role for s in loaded for role in s["rss_mib"]})
    for role in roles:
        points = series(loaded, "rss_mib", role)
        lines.append(
            f"| {role} | {points[0][1]:.1f} | {max(v for _, v in points):.1f} | {points[-1][1]:.1f}"
            f" | {slope_per_hour(points):+.1f} | {slope_per_hour(last_half(points)):+.1f} |"
        )
    lines += ["", "| connections of | start | max | end | slope/h last half |", "|---|---:|---:|---:|---:|"]
    whos = sorted({who for s in loaded for who in s["connections"]})
    for who in whos:
        points = series(loaded, "connections", who, absent=0.0)
        lines.append(
            f"| {who} | {points[0][1]:.0f} | {max(v for _, v in points):.0f} | {points[-1][1]:.0f}"
            f" | {slope_per_hour(last_half(points)):+.1f} |"
        )

    lines += ["", "#### Over time (every ~2 minutes while the engines published, then the last sample)", ""]
    lines += [
        "| t (s) | load | TELEMETRY KiB / msgs | FACTS KiB / msgs | consumers pending / ack pending"
        " | runs | model_calls | decisions | subject_facts | RSS MiB gw / tel / nats / pg children | pg conns |",
        "|---:|---:|---|---|---|---:|---:|---:|---:|---|---:|",
    ]
    every = max(1, round(120 / SAMPLE_EVERY_S))
    shown = loaded[::every]
    for sample in shown if shown[-1] is samples[-1] else [*shown, samples[-1]]:
        metrics, rows, rss = sample["metrics"], sample["tables"], sample["rss_mib"]

        def stream(name: str, metrics: dict[str, float] = metrics) -> str:
            size = metrics.get(f'outrider_stream_bytes{{stream="{name}"}}')
            held = metrics.get(f'outrider_stream_messages{{stream="{name}"}}')
            return "?" if size is None or held is None else f"{size / 1024:,.0f} / {held:,.0f}"

        owed = sum(v for k, v in metrics.items() if k.startswith("outrider_consumer_pending"))
        unacked = sum(v for k, v in metrics.items() if k.startswith("outrider_consumer_ack_pending"))
        counts = [
            f"{rows[name]['rows']:,.0f}" if name in rows else "?"
            for name in ("telemetry.runs", "telemetry.model_calls", "decisions.decisions", "outcomes.subject_facts")
        ]
        lines.append(
            f"| {sample['t']:.0f} | {sample['load']:.1f} | {stream('TELEMETRY')} | {stream('FACTS')}"
            f" | {owed:,.0f} / {unacked:,.0f} | {' | '.join(counts)}"
            f" | {rss.get('gateway', 0):.0f} / {rss.get('telemetry', 0):.0f} / {rss.get('nats-server', 0):.0f}"
            f" / {rss.get('postgres children', 0):.0f} | {sum(sample['connections'].values())} |"
        )
    lines += ["", "#### Warnings and errors in the platform's logs, by kind", ""]
    for kind in ("error", "warning", "supervisor"):
        counted = result["log_lines"].get(kind, {})
        lines.append(f"{kind}: " + ("none" if not counted else ""))
        lines += [f"- {n} × {what}" for what, n in list(counted.items())[:25]]
        lines.append("")
    lines += [
        f"The bench itself: {result['bench_cpu_s']:.0f} CPU-s over {result['load_seconds']:.0f} s of load"
        f" ({100 * result['bench_cpu_s'] / max(result['load_seconds'], 1):.0f} % of one core: the engines' clients,"
        f" the probes, the samples and the look-ups), {samples[-1]['rss_mib'].get('bench', 0):.0f} MiB.",
        f"After `outrider up` stopped (exit {result['exit_code']}),"
        f" still running: {', '.join(result['leftovers']) or 'nothing'}.",
    ]
    return "\n".join(lines) + "\n"


def _at(result: dict[str, Any], name: str) -> str:
    return next((f"{at:.0f} s" for kill, at in result["kills"] if kill == name), "never")


def _s(value: float | None) -> str:
    return "—" if value is None else f"{value:.1f} s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=float, default=20.0, help="how long the engines publish")
    parser.add_argument(
        "--rate", type=float, default=10.0, help=f"times the demo's pace of {DEMO_ROUNDS_PER_S:g} rounds a second"
    )
    parser.add_argument("--seed", type=int, default=27)
    parser.add_argument("--kept-days", type=int, default=4, help=f"every retention, in days of {DAY_S} s (at least 2)")
    parser.add_argument("--out", type=Path, help="where the report goes (default: report.md in the run's directory)")
    parser.add_argument(
        "--keep", action="store_true", help="keep the platform's data dir (its log and the report stay)"
    )
    args = parser.parse_args()
    if args.kept_days * DAY_S - MARGIN_S <= SETTLE_S:
        parser.error(f"--kept-days must leave more than {SETTLE_S + MARGIN_S:.0f} s to look for an event")
    work = Path(tempfile.mkdtemp(prefix="outrider-soak-"))
    result = asyncio.run(soak(args, work))
    text = report(result)
    out: Path = args.out or work / "report.md"
    out.write_text(text)
    out.with_suffix(".json").write_text(json.dumps(result, default=str))
    print(text)
    if not args.keep:
        shutil.rmtree(work / "data", ignore_errors=True)
    say(f"report in {out}; raw samples in {out.with_suffix('.json')}; log {work / 'outrider-up.log'}")


if __name__ == "__main__":
    main()
