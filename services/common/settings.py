"""Every setting Outrider reads, declared once and read once from the environment.

Each declaration names the variable, the field it fills, its default, how it
is parsed and bounded, and what it means; `load()` reads them all and the
README's configuration table is generated from the same list
(`scripts/settings_doc.py`; a test fails when the table is stale).

Handlers never touch os.environ: a setting read ad hoc deep in a request path
is a setting nobody can find, document or validate at start-up.
"""

from __future__ import annotations

import json
import logging
import os
import re
import secrets
import tempfile
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from outrider.balancing import AddressError, target
from outrider.contexts import CONTEXTS as CONTEXTS  # re-exported: the services read it with their settings
from outrider.engine_identity import check_engine_name

_log = logging.getLogger(__name__)

DEFAULT_OUTCOME_WINDOW_HOURS = 48
DEFAULT_RETENTION_DAYS = 180
# Runs and model calls are read by insights over at most 30 days; an older
# run is on no page, so keeping it longer only grows the table the ingest
# writes into.
DEFAULT_TELEMETRY_RETENTION_DAYS = 30
# A playground trace is what a person and their reviewer look back at while a
# skill is tuned, and the record of which tools a run used: a quarter covers
# a review cycle. Traces hold tool results read from live systems (redacted,
# yet operational data), so they are not kept forever.
DEFAULT_PLAYGROUND_RETENTION_DAYS = 90
# A rejection counter nobody has moved in a month describes a producer fault
# long fixed, and its sample is a copy of a bad event: it lives as long as the
# runs of the same month do.
DEFAULT_FACT_REJECTION_RETENTION_DAYS = 30
# Seconds in the day every retention counts in. Only a soak compresses it: a
# week of lifetimes and passes played in minutes, with real deletes.
DAY_S = 86_400
# pgvector indexes vectors of at most 2,000 dimensions; a larger one would
# migrate and then fail at the first index build.
MAX_EMBEDDING_DIM = 2000
# The ingest caps a batch at its ack budget over its writers (2,000 runs).
MAX_TELEMETRY_BATCH = 2000
# Messages one subject of a stream may hold before its publishes are refused.
DEFAULT_STREAM_MAX_MSGS_PER_SUBJECT = 1_000_000


class SettingsError(Exception):
    """A setting is missing or malformed; the message names it."""


@dataclass(frozen=True, slots=True)
class Settings:
    env: str = "development"
    data_dir: Path = Path(".outrider")
    http_host: str = "127.0.0.1"
    http_port: int = 8080
    grpc_host: str = "127.0.0.1"
    grpc_port: int = 50051
    nats_port: int = 4222
    # NATS credentials and TLS: the services' user, the engines' user (the
    # embedded server admits it; production with an external server may
    # leave its password to the engines), and TLS files when configured.
    nats_user: str = "outrider"
    nats_password: str = ""
    nats_engine_user: str = "engine"
    nats_engine_password: str | None = None
    nats_tls_ca: Path | None = None
    nats_tls_cert: Path | None = None
    nats_tls_key: Path | None = None
    # Servers each stream and the heartbeat bucket are stored on: 1 on the
    # embedded single server, 3 on a three-node cluster.
    nats_replicas: int = 1
    context_addrs: Mapping[str, str] = field(default_factory=dict)
    database_url: str | None = None
    nats_url: str | None = None
    jwt_secret: str = ""
    # The engine key of the engine named "default" (engines send it as X-Internal-Key).
    internal_key: str = ""
    # What the gateway and the contexts present to each other.
    service_key: str = ""
    # Accepted beside the current ones during a rollover, never issued.
    service_key_previous: str | None = None
    jwt_secret_previous: str | None = None
    # The longest a console token may live, from its iat to its exp.
    jwt_max_ttl_hours: int = 720
    # Every engine's keys by engine name, "default" included; a key list
    # holds the current key and, during a rollover, the previous one.
    engine_keys: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # The agents an engine may act for, for the engines limited to some; an
    # engine not named here may act for every agent.
    engine_agents: Mapping[str, frozenset[str]] = field(default_factory=dict)
    grpc_tls_cert: Path | None = None
    grpc_tls_key: Path | None = None
    grpc_tls_ca: Path | None = None
    grpc_tls_client_auth: bool = False
    api_docs: bool = True
    anthropic_api_key: str | None = None
    anthropic_base_url: str | None = None
    playground_model: str = "claude-opus-5-5"
    allowed_models: str = "claude-*"
    outcome_window_hours: int = DEFAULT_OUTCOME_WINDOW_HOURS
    decision_retention_days: int = DEFAULT_RETENTION_DAYS
    telemetry_retention_days: int = DEFAULT_TELEMETRY_RETENTION_DAYS
    playground_retention_days: int = DEFAULT_PLAYGROUND_RETENTION_DAYS
    fact_rejection_retention_days: int = DEFAULT_FACT_REJECTION_RETENTION_DAYS
    retention_day_s: int = DAY_S
    embedding_dimension: int = 384
    tool_base_urls: Mapping[str, str] = field(default_factory=dict)
    sweep_interval_s: float = 60.0
    rollout_guard_interval_s: float = 300.0
    # Alerts (DESIGN §10): the judged-decision window, the drop that fires,
    # how often they are evaluated, and where their transitions are POSTed.
    alert_window: int = 100
    alert_min_drop: float = 0.15
    alert_interval_s: float = 60.0
    alert_silent_after_s: int = 86_400
    alert_ingest_lag_s: int = 300
    alert_webhook_url: str | None = None
    alert_webhook_secret: str | None = None
    # Configured human-input sources by the source string a subject records
    # (e.g. "tracker:ops/bookings"): {"url": ..., "token": ..., "timeout_s": ...}.
    human_sources: Mapping[str, Mapping[str, object]] = field(default_factory=dict)
    log_level: str = "INFO"
    log_format: str = "auto"
    # Telemetry ingest writes a batch at this many runs or after this wait,
    # whichever comes first; a run not acked within ack_wait is redelivered.
    telemetry_batch_size: int = 200
    telemetry_batch_wait_ms: int = 2000
    telemetry_ack_wait_s: int = 30
    max_deliver: int = 100
    max_body_kb: int = 1024
    call_timeout_s: int = 10
    grpc_max_concurrent_rpcs: int = 1000
    # Long-lived streams of one kind (snapshot watches, precedent streams)
    # one engine key, and all engines together, hold open on one context
    # replica; the playground's Server-Sent Events runs one person, and all
    # together, hold open on one gateway.
    streams_per_engine: int = 16
    streams_all_engines: int = 256
    sse_per_person: int = 4
    sse_total: int = 32
    # The gateway's HTTP connections: how long a request head may take to
    # arrive, how long an idle keep-alive connection is kept, how many are
    # open at once.
    http_head_timeout_s: int = 5
    http_keepalive_s: int = 5
    http_max_connections: int = 512
    stream_max_age_hours: int = 168
    stream_max_mb: int = 1024
    stream_max_msgs_per_subject: int = DEFAULT_STREAM_MAX_MSGS_PER_SUBJECT
    ingest_lag_max: int = 100_000
    # The playground's redaction, beside its built-in rules: extra key words
    # whose fields are replaced whole, and extra {kind: regex} text patterns.
    redact_keys: tuple[str, ...] = ()
    redact_patterns: Mapping[str, str] = field(default_factory=dict)
    # OTLP traces in: the largest body /v1/traces takes (as sent and as
    # decompressed), and the price table that turns tokens into an estimate.
    otlp_max_body_bytes: int = 8 * 1024 * 1024
    model_prices: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    # The playground's run limits: the run's deadline, tool calls carried out
    # per model turn, result bytes handed to the model per run, and the bytes
    # read of one HTTP tool's answer.
    playground_run_deadline_s: int = 120
    playground_tool_calls_per_turn: int = 8
    playground_result_bytes_per_run: int = 128 * 1024
    playground_http_read_bytes: int = 1024 * 1024

    @property
    def production(self) -> bool:
        return self.env == "production"

    def addr(self, context: str) -> str:
        """Where a context's gRPC server listens (host:port)."""
        if context not in CONTEXTS:
            raise SettingsError(f"unknown context {context!r}; contexts are {', '.join(CONTEXTS)}")
        if context in self.context_addrs:
            return self.context_addrs[context]
        return f"{self.grpc_host}:{self.grpc_port + CONTEXTS.index(context)}"

    def port(self, context: str) -> int:
        """The port a context listens on: the one its addresses share. Replicas
        listening on different ports of one host are each started with their
        own address instead."""
        ports = {int(address.rsplit(":", 1)[1]) for address in self.addr(context).split(",")}
        if len(ports) != 1:
            raise SettingsError(
                f"OUTRIDER_{context.upper()}_ADDR lists several ports; start each replica with its own address"
            )
        return ports.pop()


# ─── Parsers: text in, value out, ValueError with the reason otherwise ──────

Parser = Callable[[str], Any]


def text(raw: str) -> str:
    return raw


def optional_text(raw: str) -> str | None:
    return raw or None


def integer(low: int, high: int) -> Parser:
    def parse(raw: str) -> int:
        try:
            value = int(raw)
        except ValueError:
            raise ValueError("must be an integer") from None
        if not low <= value <= high:
            raise ValueError(f"must be between {low} and {high}")
        return value

    parse.bounds = (low, high)  # type: ignore[attr-defined]  # read by the settings table's generator
    return parse


def choice(*allowed: str, fold: Callable[[str], str] = str) -> Parser:
    def parse(raw: str) -> str:
        value = fold(raw)
        if value not in allowed:
            raise ValueError(f"must be one of {', '.join(allowed)}")
        return value

    parse.bounds = allowed  # type: ignore[attr-defined]  # read by the settings table's generator
    return parse


def replica_addresses(raw: str) -> str:
    """`host:port`, or the IP `host:port` of each replica comma-separated."""
    try:
        target(raw)
    except AddressError as exc:
        raise ValueError(str(exc)) from None
    return raw


# A secret shorter than this can be guessed or was typed by hand.
MIN_SECRET_CHARS = 32


def secret_text(raw: str) -> str:
    """Every key, password and signing secret: long enough not to be guessed,
    printable and without blanks, because NATS passwords are written into
    nats-server's configuration, where a control character has no escape."""
    if len(raw) < MIN_SECRET_CHARS:
        raise ValueError(f"must be at least {MIN_SECRET_CHARS} characters, got {len(raw)}")
    if not raw.isprintable() or any(c.isspace() for c in raw):
        raise ValueError("must be printable characters without blanks")
    return raw


def fraction(raw: str) -> float:
    try:
        value = float(raw)
    except ValueError:
        raise ValueError("must be a number") from None
    if not 0 < value < 1:
        raise ValueError("must be between 0 and 1")
    return value


def web_url(raw: str) -> str | None:
    if not raw:
        return None
    if not raw.startswith(("http://", "https://")):
        raise ValueError("must be an http:// or https:// URL")
    return raw


def readable_file(raw: str) -> Path:
    path = Path(raw).expanduser().resolve()
    if not path.is_file():
        raise ValueError("must name an existing file")
    return path


def json_objects(raw: str) -> dict[str, Mapping[str, object]]:
    try:
        value = json.loads(raw)
    except ValueError as exc:
        raise ValueError(f"must be a JSON object ({exc})") from None
    if not isinstance(value, dict) or not all(isinstance(v, dict) for v in value.values()):
        raise ValueError("must be a JSON object of objects")
    return value


def words(raw: str) -> tuple[str, ...]:
    return tuple(word.strip() for word in raw.split(",") if word.strip())


def redaction_patterns(raw: str) -> dict[str, str]:
    try:
        value = json.loads(raw)
    except ValueError as exc:
        raise ValueError(f"must be a JSON object of kind to regex ({exc})") from None
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise ValueError("must be a JSON object of kind to regex")
    for kind, pattern in value.items():
        # The kind names the placeholder (<kind#1>), so it stays a plain word.
        if not re.fullmatch(r"[a-z][a-z0-9_]*", kind):
            raise ValueError(f"kind {kind!r} must be lower-case letters, digits and _")
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ValueError(f"the pattern for {kind} does not compile ({exc})") from None
    return value


# List prices in USD per million tokens for the models the demo fleet calls,
# as Anthropic published them for Claude Sonnet 4.5 and Claude Haiku 4.5.
# They are estimates to start from: an operator with other models, another
# vendor or negotiated rates sets OUTRIDER_MODEL_PRICES.
DEFAULT_MODEL_PRICES: Mapping[str, Mapping[str, float]] = MappingProxyType(
    {
        "claude-sonnet-4-5*": MappingProxyType({"input": 3.0, "output": 15.0}),
        "claude-haiku-4-5*": MappingProxyType({"input": 1.0, "output": 5.0}),
    }
)


def model_prices(raw: str) -> Mapping[str, Mapping[str, float]]:
    try:
        value = json.loads(raw)
    except ValueError as exc:
        raise ValueError(f'must be a JSON object of model to {{"input": n, "output": n}} ({exc})') from None
    if not isinstance(value, dict):
        raise ValueError('must be a JSON object of model to {"input": n, "output": n}')
    for model, entry in value.items():
        if not isinstance(entry, dict) or set(entry) != {"input", "output"}:
            raise ValueError(f'the entry for {model!r} must be {{"input": n, "output": n}}')
        for side, price in entry.items():
            if isinstance(price, bool) or not isinstance(price, int | float) or not 0 <= price < 1e9:
                raise ValueError(f"the {side} price of {model!r} must be a number of at least 0")
    return MappingProxyType({model: MappingProxyType(dict(entry)) for model, entry in value.items()})


def flag(raw: str) -> bool:
    value = raw.lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off"):
        return False
    raise ValueError("must be true or false")


@dataclass(frozen=True, slots=True)
class EngineEntry:
    """One engine of OUTRIDER_ENGINE_KEYS: its keys (the current one first,
    then the previous one during a rollover) and the agents it may act for
    (None: every agent)."""

    keys: tuple[str, ...]
    agents: frozenset[str] | None = None


_ENGINE_FORMS = 'engine name to key, [key, previous key] or {"keys": …, "agents": [agent id, …]}'
# The characters agent ids are made of: an entry no decision, run or span
# could name is a typo, refused at start rather than never matching.
_AGENT_ID = re.compile(r"[A-Za-z0-9_.=-]{1,128}")


def _engine_entry(name: str, given: object) -> EngineEntry:
    try:
        check_engine_name(name)
    except ValueError as exc:
        raise ValueError(f"{exc}: it is a NATS subject token") from None
    agents: frozenset[str] | None = None
    if isinstance(given, dict):
        unknown = sorted(set(given) - {"keys", "agents"})
        if unknown or "keys" not in given:
            raise ValueError(f'entry {name!r} must be {{"keys": …, "agents": […]}}, got the fields {sorted(given)}')
        if "agents" in given:
            listed_agents = given["agents"]
            if (
                not isinstance(listed_agents, list)
                or not listed_agents
                or not all(isinstance(agent, str) and _AGENT_ID.fullmatch(agent) for agent in listed_agents)
            ):
                raise ValueError(
                    f"the agents of {name!r} must be a non-empty list of agent ids (leave the list out to let"
                    " the engine act for every agent)"
                )
            agents = frozenset(listed_agents)
        given = given["keys"]
    listed = [given] if isinstance(given, str) else given
    if not isinstance(listed, list) or not 1 <= len(listed) <= 2 or not all(isinstance(key, str) for key in listed):
        raise ValueError(f"entry {name!r} must give a key or [key, previous key]")
    try:
        keys = tuple(secret_text(key) for key in listed)
    except ValueError as exc:
        raise ValueError(f"the key of {name!r} {exc}") from None
    return EngineEntry(keys, agents)


def engine_entries(raw: str) -> dict[str, EngineEntry]:
    try:
        value = json.loads(raw)
    except ValueError as exc:
        raise ValueError(f"must be a JSON object of {_ENGINE_FORMS} ({exc})") from None
    if not isinstance(value, dict):
        raise ValueError(f"must be a JSON object of {_ENGINE_FORMS}")
    return {name: _engine_entry(name, given) for name, given in value.items()}


def directory(raw: str) -> Path:
    return Path(raw).expanduser().resolve()


# ─── The declarations ──────────────────────────────────────────────────────


@dataclass(frozen=True, slots=True)
class Declared:
    """One environment variable: what it fills, how it is read, what it means."""

    env: str
    field: str
    doc: str
    parse: Parser = text
    default: Any = None
    # How the README states the default, when the value itself would mislead
    # (a computed default, a secret generated on first start).
    shown: str | None = None
    # The seed's rule for the outcome window and retention: a bad value is an
    # operator typo, not a reason to stop judging; warn loudly, use the default.
    lenient: bool = False
    # A secret's refusal names the variable and the rule, never the value.
    secret: bool = False

    @property
    def shown_default(self) -> str:
        if self.shown is not None:
            return self.shown
        return "unset" if self.default is None else f"`{self.default}`"


@dataclass(frozen=True, slots=True)
class Family:
    """A variable name pattern: every variable with the prefix is read."""

    prefix: str
    pattern: str
    doc: str
    shown: str = "unset"


DECLARED: tuple[Declared, ...] = (
    Declared(
        "OUTRIDER_ENV",
        "env",
        "`production` refuses to boot without its secrets set, and set well",
        choice("development", "production"),
        "development",
    ),
    Declared(
        "OUTRIDER_DATA_DIR",
        "data_dir",
        "embedded Postgres and NATS data, and development secrets",
        directory,
        Path(".outrider"),
        shown="`./.outrider`",
    ),
    Declared("OUTRIDER_HTTP_HOST", "http_host", "interface the gateway listens on", text, "127.0.0.1"),
    Declared("OUTRIDER_HTTP_PORT", "http_port", "gateway port", integer(1, 65535), 8080),
    Declared("OUTRIDER_GRPC_HOST", "grpc_host", "interface the contexts listen on", text, "127.0.0.1"),
    Declared(
        "OUTRIDER_GRPC_PORT",
        "grpc_port",
        "base port: registry +0, decisions +1, outcomes +2, playground +3, telemetry +4",
        integer(1, 65535 - len(CONTEXTS)),
        50051,
    ),
    Declared("OUTRIDER_NATS_PORT", "nats_port", "port of the embedded NATS server", integer(1, 65535), 4222),
    Declared("OUTRIDER_NATS_USER", "nats_user", "NATS user of the services (unrestricted)", text, "outrider"),
    Declared(
        "OUTRIDER_NATS_PASSWORD",
        "nats_password",
        "its password, 32+ characters; production refuses to boot without it",
        secret_text,
        shown="random per data dir",
        secret=True,
    ),
    Declared(
        "OUTRIDER_NATS_ENGINE_USER",
        "nats_engine_user",
        "shared NATS user of the engine named `default`, on the bare subjects (deprecated for a fleet of several"
        " engines: each engine key is a NATS credential of its own)",
        text,
        "engine",
    ),
    Declared(
        "OUTRIDER_NATS_ENGINE_PASSWORD",
        "nats_engine_password",
        "its password, 32+ characters; production with the embedded NATS refuses to boot without it",
        secret_text,
        shown="random per data dir",
        secret=True,
    ),
    Declared(
        "OUTRIDER_NATS_TLS_CA",
        "nats_tls_ca",
        "CA file NATS clients verify the server with; set (or a `tls://` NATS_URL), they connect over TLS",
        readable_file,
    ),
    Declared("OUTRIDER_NATS_TLS_CERT", "nats_tls_cert", "certificate the embedded NATS serves TLS with", readable_file),
    Declared("OUTRIDER_NATS_TLS_KEY", "nats_tls_key", "private key of that certificate", readable_file),
    Declared(
        "OUTRIDER_NATS_REPLICAS",
        "nats_replicas",
        "servers a new stream and the heartbeat bucket are stored on: 1 on one server, 3 on a cluster",
        integer(1, 5),
        1,
    ),
    *(
        Declared(
            f"OUTRIDER_{context.upper()}_ADDR",
            f"{context}_addr",
            f"where the {context} context is reached (`host:port`, a DNS name of every replica, or"
            " replicas' IP `host:port` comma-separated); compose sets these",
            replica_addresses,
            shown="derived",
        )
        for context in CONTEXTS
    ),
    Declared(
        "DATABASE_URL",
        "database_url",
        "`postgresql+asyncpg://user:pass@host:5432/db` or `…@/db?host=/socket/dir`",
        optional_text,
        shown="embedded",
    ),
    Declared(
        "NATS_URL",
        "nats_url",
        "`nats://host:4222`, or a cluster's servers comma-separated (`nats://a:4222,nats://b:4222`)",
        optional_text,
        shown="embedded",
    ),
    Declared(
        "OUTRIDER_JWT_SECRET",
        "jwt_secret",
        "HS256 secret of console tokens; at least 32 characters",
        secret_text,
        shown="random per data dir",
        secret=True,
    ),
    Declared(
        "OUTRIDER_INTERNAL_KEY",
        "internal_key",
        "the engine key of the engine named `default` (sent as `X-Internal-Key`); at least 32 characters",
        secret_text,
        shown="random per data dir",
        secret=True,
    ),
    Declared(
        "OUTRIDER_ENGINE_KEYS",
        "engine_entries",
        'JSON `{"engine name": "key"}` (or `["key", "previous key"]` during a rollover, or `{"keys": …,'
        ' "agents": ["AGENT_ID", …]}` to hold the engine to those agents): one key per engine, so one can be'
        " revoked alone; its NATS credential is derived from each key. Names: letters, digits, `_`, `-`",
        engine_entries,
        shown="unset",
        secret=True,
    ),
    Declared(
        "OUTRIDER_SERVICE_KEY",
        "service_key",
        "what the gateway and the contexts present to each other; at least 32 characters",
        secret_text,
        shown="random per data dir",
        secret=True,
    ),
    Declared(
        "OUTRIDER_SERVICE_KEY_PREVIOUS",
        "service_key_previous",
        "also accepted while the parts move to a new service key",
        secret_text,
        secret=True,
    ),
    Declared(
        "OUTRIDER_JWT_SECRET_PREVIOUS",
        "jwt_secret_previous",
        "also accepted for console tokens while they move to a new secret",
        secret_text,
        secret=True,
    ),
    Declared(
        "OUTRIDER_JWT_MAX_TTL_HOURS",
        "jwt_max_ttl_hours",
        "the longest a console token may live: its exp at most this many hours after its iat, else 401",
        integer(1, 24 * 366),
        720,
    ),
    Declared(
        "OUTRIDER_GRPC_TLS_CERT",
        "grpc_tls_cert",
        "PEM certificate the contexts serve gRPC with (TLS when set)",
        readable_file,
    ),
    Declared("OUTRIDER_GRPC_TLS_KEY", "grpc_tls_key", "PEM private key of that certificate", readable_file),
    Declared(
        "OUTRIDER_GRPC_TLS_CA",
        "grpc_tls_ca",
        "PEM CA the gateway and the contexts trust for each other's certificates",
        readable_file,
    ),
    Declared(
        "OUTRIDER_GRPC_TLS_CLIENT_AUTH",
        "grpc_tls_client_auth",
        "require a client certificate from that CA (mutual TLS between the parts)",
        flag,
        False,
    ),
    Declared(
        "OUTRIDER_API_DOCS",
        "api_docs",
        "serve `/docs` and `/openapi.json`; switch off in production if wanted",
        flag,
        True,
    ),
    Declared("ANTHROPIC_API_KEY", "anthropic_api_key", "the playground answers 503 without it", optional_text),
    Declared("ANTHROPIC_BASE_URL", "anthropic_base_url", "another address for the model API (a proxy)", optional_text),
    Declared(
        "OUTRIDER_PLAYGROUND_MODEL",
        "playground_model",
        "the playground's model when the agent pins none",
        text,
        "claude-opus-5-5",
    ),
    Declared(
        "OUTRIDER_ALLOWED_MODELS", "allowed_models", "comma-separated patterns a model pin must match", text, "claude-*"
    ),
    Declared(
        "AGENT_OUTCOME_WINDOW_HOURS",
        "outcome_window_hours",
        "hours before a decision is judged; a bad value warns and uses 48",
        integer(1, 24 * 365),
        DEFAULT_OUTCOME_WINDOW_HOURS,
        lenient=True,
    ),
    Declared(
        "AGENT_DECISION_RETENTION_DAYS",
        "decision_retention_days",
        "days decisions are kept; a bad value warns and uses 180",
        integer(1, 3650),
        DEFAULT_RETENTION_DAYS,
        lenient=True,
    ),
    Declared(
        "OUTRIDER_TELEMETRY_RETENTION_DAYS",
        "telemetry_retention_days",
        "days task runs and model calls are kept, counted from when they started",
        integer(1, 3650),
        DEFAULT_TELEMETRY_RETENTION_DAYS,
    ),
    Declared(
        "OUTRIDER_PLAYGROUND_RETENTION_DAYS",
        "playground_retention_days",
        "days playground runs and their traces are kept",
        integer(1, 3650),
        DEFAULT_PLAYGROUND_RETENTION_DAYS,
    ),
    Declared(
        "OUTRIDER_FACT_REJECTION_RETENTION_DAYS",
        "fact_rejection_retention_days",
        "days a malformed-facts counter and its sample are kept after its last rejection",
        integer(1, 3650),
        DEFAULT_FACT_REJECTION_RETENTION_DAYS,
    ),
    Declared(
        "OUTRIDER_RETENTION_DAY_S",
        "retention_day_s",
        "seconds in the day the retention settings count in, passes every 24th of it;"
        " shorter only to play weeks in minutes (bench/soak)",
        integer(60, DAY_S),
        DAY_S,
    ),
    Declared(
        "OUTRIDER_EMBEDDING_DIM",
        "embedding_dimension",
        "fixed when the decisions schema is first migrated; other sizes are refused",
        integer(1, MAX_EMBEDDING_DIM),
        384,
    ),
    Declared("OUTRIDER_SWEEP_INTERVAL_S", "sweep_interval_s", "seconds between outcome sweeps", integer(1, 86_400), 60),
    Declared(
        "OUTRIDER_ROLLOUT_GUARD_INTERVAL_S",
        "rollout_guard_interval_s",
        "seconds between rollout guard passes besides the one after every sweep",
        integer(1, 86_400),
        300,
    ),
    Declared(
        "OUTRIDER_ALERT_WINDOW",
        "alert_window",
        "judged decisions per window an agent × decision type's success drop is measured over",
        integer(20, 10_000),
        100,
    ),
    Declared(
        "OUTRIDER_ALERT_MIN_DROP",
        "alert_min_drop",
        "the fall in judged success (0..1) between two windows that fires an alert",
        fraction,
        0.15,
    ),
    Declared(
        "OUTRIDER_ALERT_INTERVAL_S", "alert_interval_s", "seconds between alert evaluations", integer(1, 86_400), 60
    ),
    Declared(
        "OUTRIDER_ALERT_SILENT_AFTER_S",
        "alert_silent_after_s",
        "seconds without a run after which an agent that ran is alerted as silent",
        integer(60, 30 * 86_400),
        86_400,
    ),
    Declared(
        "OUTRIDER_ALERT_INGEST_LAG_S",
        "alert_ingest_lag_s",
        "seconds the oldest message a stream's consumer has not yet been handed may wait before ingest lag is alerted",
        integer(1, 86_400),
        300,
    ),
    Declared(
        "OUTRIDER_ALERT_WEBHOOK_URL",
        "alert_webhook_url",
        "where each alert transition is POSTed as signed JSON; unset delivers none",
        web_url,
    ),
    Declared(
        "OUTRIDER_ALERT_WEBHOOK_SECRET",
        "alert_webhook_secret",
        "HMAC-SHA256 key of the webhook's X-Outrider-Signature, 32+ characters;"
        " production with a URL refuses to boot without it",
        secret_text,
        secret=True,
    ),
    Declared(
        "OUTRIDER_HUMAN_SOURCES",
        "human_sources",
        'JSON: `{"<source>": {"url": …, "token": …, "timeout_s": …}}` feeds reconciled before a lease',
        json_objects,
        shown="unset",
    ),
    Declared(
        "OUTRIDER_LOG_LEVEL",
        "log_level",
        "DEBUG, INFO, WARNING or ERROR",
        choice("DEBUG", "INFO", "WARNING", "ERROR", fold=str.upper),
        "INFO",
    ),
    Declared(
        "OUTRIDER_LOG_FORMAT",
        "log_format",
        "`auto`: readable lines on a terminal, JSON otherwise; or `json`, `text`",
        choice("auto", "json", "text", fold=str.lower),
        "auto",
    ),
    Declared(
        "OUTRIDER_TELEMETRY_BATCH_SIZE",
        "telemetry_batch_size",
        "ingest batch: runs per write (whichever of size and wait comes first)",
        integer(1, MAX_TELEMETRY_BATCH),
        200,
    ),
    Declared(
        "OUTRIDER_TELEMETRY_BATCH_WAIT_MS",
        "telemetry_batch_wait_ms",
        "ingest batch: longest wait",
        integer(10, 60_000),
        2000,
    ),
    Declared(
        "OUTRIDER_TELEMETRY_ACK_WAIT_S",
        "telemetry_ack_wait_s",
        "seconds before an unacked run is redelivered; must exceed the batch wait",
        integer(1, 3600),
        30,
    ),
    Declared(
        "OUTRIDER_MAX_BODY_KB",
        "max_body_kb",
        "KiB a request body may have before the gateway answers 413 without reading on (human inputs: 64)",
        integer(1, 64 * 1024),
        1024,
    ),
    Declared(
        "OUTRIDER_CALL_TIMEOUT_S",
        "call_timeout_s",
        "deadline of a call between gateway and contexts; longer only for a playground run, a sweep, a lease",
        integer(1, 300),
        10,
    ),
    Declared(
        "OUTRIDER_GRPC_MAX_CONCURRENT_RPCS",
        "grpc_max_concurrent_rpcs",
        "calls one context serves at once (open registry watches count); more are refused RESOURCE_EXHAUSTED",
        integer(10, 100_000),
        1000,
    ),
    # An engine process opens one snapshot watch and one precedent stream;
    # 16 of a kind leave room for a few processes sharing a key, or a
    # restart overlapping the old process, and no more.
    Declared(
        "OUTRIDER_STREAMS_PER_ENGINE",
        "streams_per_engine",
        "streams of one kind (snapshot watches, precedent streams) one engine key holds open on one context"
        " replica; one more is refused RESOURCE_EXHAUSTED `STREAM_CAP_REACHED`",
        integer(1, 50_000),
        16,
    ),
    Declared(
        "OUTRIDER_STREAMS_ALL_ENGINES",
        "streams_all_engines",
        "streams of one kind all engine keys together hold open on one context replica; at most half of"
        " `OUTRIDER_GRPC_MAX_CONCURRENT_RPCS`, so the rest serves calls, the console and health checks",
        integer(1, 50_000),
        256,
    ),
    Declared(
        "OUTRIDER_SSE_PER_PERSON",
        "sse_per_person",
        "event streams (a playground run as Server-Sent Events) one person holds open on one gateway;"
        " one more is answered 429 `STREAM_CAP_REACHED`",
        integer(1, 10_000),
        4,
    ),
    Declared(
        "OUTRIDER_SSE_TOTAL",
        "sse_total",
        "event streams of one kind everyone together holds open on one gateway",
        integer(1, 10_000),
        32,
    ),
    Declared(
        "OUTRIDER_HTTP_HEAD_TIMEOUT_S",
        "http_head_timeout_s",
        "seconds the gateway waits for a request's line and headers, from the connection or the request's first"
        " byte; then it answers 408 and closes",
        integer(1, 300),
        5,
    ),
    Declared(
        "OUTRIDER_HTTP_KEEPALIVE_S",
        "http_keepalive_s",
        "seconds the gateway keeps an idle keep-alive connection open for the next request",
        integer(1, 3600),
        5,
    ),
    # Well below the 1,024 files a process may open by default, which the
    # gateway's own channels and sockets share.
    Declared(
        "OUTRIDER_HTTP_MAX_CONNECTIONS",
        "http_max_connections",
        "connections the gateway holds open at once; one more is answered 503 `CONNECTION_CAP_REACHED` and"
        " closed unread",
        integer(1, 1_000_000),
        512,
    ),
    Declared(
        "OUTRIDER_MAX_DELIVER",
        "max_deliver",
        "deliveries of one event before a consumer gives up on it, terminates it and counts it dead-lettered",
        integer(5, 10_000),
        100,
    ),
    Declared(
        "OUTRIDER_STREAM_MAX_AGE_HOURS",
        "stream_max_age_hours",
        "hours an event waits in a new stream for its consumer before it expires",
        integer(1, 24 * 365),
        168,
    ),
    Declared(
        "OUTRIDER_STREAM_MAX_MB",
        "stream_max_mb",
        "MiB a new stream holds; when full, new events are refused (the publisher is told), old ones kept",
        integer(1, 1024 * 1024),
        1024,
    ),
    Declared(
        "OUTRIDER_STREAM_MAX_MSGS_PER_SUBJECT",
        "stream_max_msgs_per_subject",
        "events one subject of a new stream holds unconsumed; past it that subject's publishes are refused,"
        " the others' go on",
        integer(10, 1_000_000_000),
        DEFAULT_STREAM_MAX_MSGS_PER_SUBJECT,
    ),
    Declared(
        "OUTRIDER_INGEST_LAG_MAX",
        "ingest_lag_max",
        "events a stream's consumer may have waiting undelivered before `/readyz` turns red",
        integer(1, 1_000_000_000),
        100_000,
    ),
    Declared(
        "OUTRIDER_REDACT_KEYS",
        "redact_keys",
        "comma-separated extra key words whose fields the playground and a decision's context view redact whole",
        words,
        (),
        shown="unset",
    ),
    Declared(
        "OUTRIDER_REDACT_PATTERNS",
        "redact_patterns",
        'JSON `{"kind": "regex"}`: extra text the playground and a decision\'s context view replace with `<kind#n>`',
        redaction_patterns,
        shown="unset",
    ),
    # OTLP traces in (POST /v1/traces).
    Declared(
        "OUTRIDER_OTLP_MAX_BODY_BYTES",
        "otlp_max_body_bytes",
        "largest OTLP body `/v1/traces` takes, as sent and once decompressed; larger answers 413",
        integer(1024, 256 * 1024 * 1024),
        8 * 1024 * 1024,
    ),
    Declared(
        "OUTRIDER_MODEL_PRICES",
        "model_prices",
        'JSON `{"<model or glob>": {"input": n, "output": n}}`, USD per million tokens: insights then '
        "estimate cost (exact name first, else the longest matching glob). The default holds list-price "
        "estimates for the demo's Claude models only; set your own rates, or `{}` to price nothing",
        model_prices,
        DEFAULT_MODEL_PRICES,
        shown='`{"claude-sonnet-4-5*": {"input": 3, "output": 15}, "claude-haiku-4-5*": {"input": 1, "output": 5}}`',
    ),
    Declared(
        "OUTRIDER_PLAYGROUND_RUN_DEADLINE_S",
        "playground_run_deadline_s",
        "seconds a playground run may take; past it the run ends, stored with `deadline`",
        integer(1, 3600),
        120,
    ),
    Declared(
        "OUTRIDER_PLAYGROUND_TOOL_CALLS_PER_TURN",
        "playground_tool_calls_per_turn",
        "tool calls carried out per model turn; the model is told the rest were not run",
        integer(1, 64),
        8,
    ),
    Declared(
        "OUTRIDER_PLAYGROUND_RESULT_BYTES_PER_RUN",
        "playground_result_bytes_per_run",
        "tool-result bytes a run hands the model; once spent, further reads are refused and the model told",
        integer(4096, 16 * 1024 * 1024),
        128 * 1024,
    ),
    Declared(
        "OUTRIDER_PLAYGROUND_HTTP_READ_BYTES",
        "playground_http_read_bytes",
        "bytes read of one HTTP tool's answer; a longer answer is refused unread past this",
        integer(1024, 64 * 1024 * 1024),
        1024 * 1024,
    ),
)

FAMILIES: tuple[Family, ...] = (
    Family(
        "OUTRIDER_TOOL_BASE_URL_",
        "OUTRIDER_TOOL_BASE_URL_<KEY>",
        "base URL an external read tool may call from the playground (GET only)",
    ),
)

# Every variable load() reads; the compose test checks compose.yaml against it.
ENV_VARS: frozenset[str] = frozenset(declared.env for declared in DECLARED)
ENV_PREFIXES: tuple[str, ...] = tuple(family.prefix for family in FAMILIES)

# Secrets generated once per data dir in development.
_DEV_SECRETS = ("jwt_secret", "internal_key", "service_key", "nats_password", "nats_engine_password")


# ─── Reading ───────────────────────────────────────────────────────────────


def _read(declared: Declared, env: Mapping[str, str]) -> Any:
    raw = env.get(declared.env, "").strip()
    if not raw:
        return declared.default
    try:
        return declared.parse(raw)
    except ValueError as exc:
        if declared.lenient:
            _log.warning("%s %s (%r); using %s", declared.env, exc, raw, declared.default)
            return declared.default
        got = "" if declared.secret else f", got {raw!r}"
        raise SettingsError(f"{declared.env} {exc}{got}") from None


def _dev_secret(data_dir: Path, name: str) -> str:
    """A random secret generated once per data dir, so tokens survive restarts.

    Written whole to a private temporary file first, then linked into place:
    a link either makes the complete file appear or fails because another
    process's complete file is already there, so no process ever reads a
    secret half written or empty, and two processes starting at once agree.
    """
    path = data_dir / "secrets" / name
    if path.exists():
        return _kept_secret(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.parent.chmod(0o700)
    value = secrets.token_urlsafe(32)
    fd, draft = tempfile.mkstemp(dir=path.parent, prefix=f".{name}.")
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write(value)
            handle.flush()
            os.fsync(handle.fileno())
        try:
            os.link(draft, path)
        except FileExistsError:
            return _kept_secret(path)
        directory_fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(directory_fd)
        finally:
            os.close(directory_fd)
        return value
    finally:
        os.unlink(draft)


def _kept_secret(path: Path) -> str:
    # Earlier versions could leave a file empty after a crash; using it would
    # make a key that matches a request sending none.
    try:
        return secret_text(path.read_text().strip())
    except ValueError as exc:
        raise SettingsError(f"the generated secret {path} {exc}; delete it to have a new one made") from None


def load(env: Mapping[str, str] | None = None) -> Settings:
    """Read and validate every setting. Production refuses default secrets."""
    env = os.environ if env is None else env
    values = {declared.field: _read(declared, env) for declared in DECLARED}

    if values["env"] == "production":
        _require_given_secrets(values)
    else:
        for name in _DEV_SECRETS:
            values[name] = values[name] or _dev_secret(values["data_dir"], name)
    entries: dict[str, EngineEntry] = values.pop("engine_entries") or {}
    values["engine_keys"] = {name: entry.keys for name, entry in entries.items()}
    values["engine_agents"] = {name: entry.agents for name, entry in entries.items() if entry.agents is not None}
    if values["internal_key"]:
        values["engine_keys"].setdefault("default", (values["internal_key"],))
    if (values["grpc_tls_cert"] is None) != (values["grpc_tls_key"] is None):
        raise SettingsError("OUTRIDER_GRPC_TLS_CERT and OUTRIDER_GRPC_TLS_KEY are set together or not at all")
    if values["grpc_tls_client_auth"] and values["grpc_tls_ca"] is None:
        raise SettingsError("OUTRIDER_GRPC_TLS_CLIENT_AUTH needs OUTRIDER_GRPC_TLS_CA to check client certificates")

    values["context_addrs"] = {
        context: address for context in CONTEXTS if (address := values.pop(f"{context}_addr")) is not None
    }
    values["tool_base_urls"] = {
        key.removeprefix("OUTRIDER_TOOL_BASE_URL_").lower(): value.strip().rstrip("/")
        for key, value in env.items()
        if key.startswith("OUTRIDER_TOOL_BASE_URL_") and value.strip()
    }
    values["human_sources"] = values["human_sources"] or {}
    values["redact_patterns"] = values["redact_patterns"] or {}
    values["sweep_interval_s"] = float(values["sweep_interval_s"])
    values["alert_interval_s"] = float(values["alert_interval_s"])
    _check_nats_users(values)
    _check_stream_caps(values)
    return Settings(**values)


def _require_given_secrets(values: Mapping[str, Any]) -> None:
    """Production boots only with its secrets given: a generated one would
    differ on every host, so the parts could not reach each other.

    The services' NATS password is required whatever the server: without it
    they could only reach a server that admits anyone. The engines' password
    only with the embedded server, which admits engines with it; an external
    server's engine credential is handed to the engines, not to us.
    """
    missing = [
        variable
        for variable, name in (
            ("OUTRIDER_JWT_SECRET", "jwt_secret"),
            ("OUTRIDER_SERVICE_KEY", "service_key"),
            ("OUTRIDER_NATS_PASSWORD", "nats_password"),
        )
        if not values[name]
    ]
    if not values["internal_key"] and not values["engine_entries"]:
        missing.append("OUTRIDER_INTERNAL_KEY or OUTRIDER_ENGINE_KEYS")
    if not values["nats_url"] and not values["nats_engine_password"]:
        missing.append("OUTRIDER_NATS_ENGINE_PASSWORD")
    if values["alert_webhook_url"] and not values["alert_webhook_secret"]:
        missing.append("OUTRIDER_ALERT_WEBHOOK_SECRET")
    if missing:
        raise SettingsError(f"production refuses to boot without {', '.join(missing)}")


def _check_nats_users(values: Mapping[str, Any]) -> None:
    if values["nats_user"] == values["nats_engine_user"]:
        raise SettingsError(
            "OUTRIDER_NATS_ENGINE_USER must differ from OUTRIDER_NATS_USER: engines and"
            f" services hold different permissions, got {values['nats_user']!r} for both"
        )
    if (values["nats_tls_cert"] is None) != (values["nats_tls_key"] is None):
        raise SettingsError("OUTRIDER_NATS_TLS_CERT and OUTRIDER_NATS_TLS_KEY go together: set both or neither")


def _check_stream_caps(values: Mapping[str, Any]) -> None:
    """A total below its per-caller cap would refuse a caller under its own
    cap; engines' streams past half a context's calls would leave too little
    for the calls, the console and the health checks the cap exists for."""
    pairs = (
        ("OUTRIDER_STREAMS_PER_ENGINE", "streams_per_engine", "OUTRIDER_STREAMS_ALL_ENGINES", "streams_all_engines"),
        ("OUTRIDER_SSE_PER_PERSON", "sse_per_person", "OUTRIDER_SSE_TOTAL", "sse_total"),
    )
    for each_env, each, total_env, total in pairs:
        if values[each] > values[total]:
            raise SettingsError(f"{each_env} ({values[each]}) must not exceed {total_env} ({values[total]})")
    room = values["grpc_max_concurrent_rpcs"] // 2
    if values["streams_all_engines"] > room:
        raise SettingsError(
            f"OUTRIDER_STREAMS_ALL_ENGINES ({values['streams_all_engines']}) must be at most half of"
            f" OUTRIDER_GRPC_MAX_CONCURRENT_RPCS ({room}), so calls and health checks are still served"
        )


# ─── The README's table ────────────────────────────────────────────────────


def _bounds(declared: Declared) -> str:
    bounds = getattr(declared.parse, "bounds", None)
    if bounds is None:
        return ""
    if all(isinstance(b, int) for b in bounds) and len(bounds) == 2:
        return f" ({bounds[0]:,}–{bounds[1]:,})"
    return ""


def settings_table(declarations: Iterable[Declared] = DECLARED, families: Iterable[Family] = FAMILIES) -> str:
    """The README's configuration table, one row per variable."""
    rows = ["| variable | default | meaning |", "|---|---|---|"]
    for declared in declarations:
        rows.append(f"| `{declared.env}` | {declared.shown_default} | {declared.doc}{_bounds(declared)} |")
    for family in families:
        rows.append(f"| `{family.pattern}` | {family.shown} | {family.doc} |")
    return "\n".join(rows) + "\n"
