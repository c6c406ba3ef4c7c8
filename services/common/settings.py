"""Every setting Outrider reads, read once from the environment.

Handlers never touch os.environ: a setting read ad hoc deep in a request path
is a setting nobody can find, document or validate at start-up.
"""

from __future__ import annotations

import json
import logging
import os
import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

CONTEXTS: tuple[str, ...] = ("registry", "decisions", "outcomes", "playground", "telemetry")

_log = logging.getLogger(__name__)

DEFAULT_OUTCOME_WINDOW_HOURS = 48
DEFAULT_RETENTION_DAYS = 180


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
    context_addrs: Mapping[str, str] = field(default_factory=dict)
    database_url: str | None = None
    nats_url: str | None = None
    jwt_secret: str = ""
    internal_key: str = ""
    anthropic_api_key: str | None = None
    anthropic_base_url: str | None = None
    playground_model: str = "claude-opus-5-5"
    allowed_models: str = "claude-*"
    outcome_window_hours: int = DEFAULT_OUTCOME_WINDOW_HOURS
    decision_retention_days: int = DEFAULT_RETENTION_DAYS
    embedding_dimension: int = 384
    tool_base_urls: Mapping[str, str] = field(default_factory=dict)
    sweep_interval_s: float = 60.0
    # Configured human-input sources by the source string a subject records
    # (e.g. "tracker:ops/bookings"): {"url": ..., "token": ..., "timeout_s": ...}.
    human_sources: Mapping[str, Mapping[str, object]] = field(default_factory=dict)
    log_level: str = "INFO"
    # Telemetry ingest writes a batch at this many runs or after this wait,
    # whichever comes first; a run not acked within ack_wait is redelivered.
    telemetry_batch_size: int = 200
    telemetry_batch_wait_ms: int = 2000
    telemetry_ack_wait_s: int = 30
    # The playground's redaction, beside its built-in rules: extra key words
    # whose fields are replaced whole, and extra {kind: regex} text patterns.
    redact_keys: tuple[str, ...] = ()
    redact_patterns: Mapping[str, str] = field(default_factory=dict)

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
        return int(self.addr(context).rsplit(":", 1)[1])


def _int(env: Mapping[str, str], name: str, default: int) -> int:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        return int(raw)
    except ValueError:
        raise SettingsError(f"{name} must be an integer, got {raw!r}") from None


def _positive_or_default(env: Mapping[str, str], name: str, default: int) -> int:
    # The seed's rule for these two: a bad value is an operator typo, not a
    # reason to stop judging; warn loudly and fall back.
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value <= 0:
        _log.warning("%s is not a positive integer (%r); using %d", name, raw, default)
        return default
    return value


def _json_object(env: Mapping[str, str], name: str) -> dict[str, Mapping[str, object]]:
    raw = env.get(name, "").strip()
    if not raw:
        return {}
    try:
        value = json.loads(raw)
    except ValueError as exc:
        raise SettingsError(f"{name} must be a JSON object: {exc}") from None
    if not isinstance(value, dict) or not all(isinstance(v, dict) for v in value.values()):
        raise SettingsError(f"{name} must be a JSON object of objects")
    return value


def _redact_patterns(env: Mapping[str, str]) -> dict[str, str]:
    name = "OUTRIDER_REDACT_PATTERNS"
    raw = env.get(name, "").strip()
    if not raw:
        return {}
    try:
        value = json.loads(raw)
    except ValueError as exc:
        raise SettingsError(f"{name} must be a JSON object of kind to regex: {exc}") from None
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise SettingsError(f"{name} must be a JSON object of kind to regex")
    for kind, pattern in value.items():
        # The kind names the placeholder (<kind#1>), so it stays a plain word.
        if not re.fullmatch(r"[a-z][a-z0-9_]*", kind):
            raise SettingsError(f"{name}: kind {kind!r} must be lower-case letters, digits and _")
        try:
            re.compile(pattern)
        except re.error as exc:
            raise SettingsError(f"{name}: the pattern for {kind} does not compile: {exc}") from None
    return value


def _dev_secret(data_dir: Path, name: str) -> str:
    """A random secret generated once per data dir, so tokens survive restarts."""
    path = data_dir / "secrets" / name
    if path.exists():
        return path.read_text().strip()
    path.parent.mkdir(parents=True, exist_ok=True)
    value = secrets.token_urlsafe(32)
    # O_EXCL: two processes starting at once must agree on one secret.
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return path.read_text().strip()
    with os.fdopen(fd, "w") as handle:
        handle.write(value)
    return value


def load(env: Mapping[str, str] | None = None) -> Settings:
    """Read and validate every setting. Production refuses default secrets."""
    env = os.environ if env is None else env
    mode = env.get("OUTRIDER_ENV", "development").strip() or "development"
    if mode not in ("development", "production"):
        raise SettingsError(f"OUTRIDER_ENV must be development or production, got {mode!r}")
    data_dir = Path(env.get("OUTRIDER_DATA_DIR", ".outrider")).expanduser().resolve()

    jwt_secret = env.get("OUTRIDER_JWT_SECRET", "").strip()
    internal_key = env.get("OUTRIDER_INTERNAL_KEY", "").strip()
    if mode == "production":
        missing = [
            name
            for name, value in (
                ("OUTRIDER_JWT_SECRET", jwt_secret),
                ("OUTRIDER_INTERNAL_KEY", internal_key),
            )
            if not value
        ]
        if missing:
            raise SettingsError(f"production refuses to boot without {', '.join(missing)}")
    jwt_secret = jwt_secret or _dev_secret(data_dir, "jwt_secret")
    internal_key = internal_key or _dev_secret(data_dir, "internal_key")

    addrs = {
        context: env[f"OUTRIDER_{context.upper()}_ADDR"].strip()
        for context in CONTEXTS
        if env.get(f"OUTRIDER_{context.upper()}_ADDR", "").strip()
    }
    for context, addr in addrs.items():
        if ":" not in addr:
            raise SettingsError(f"OUTRIDER_{context.upper()}_ADDR must be host:port, got {addr!r}")

    tool_base_urls = {}
    for key, value in env.items():
        if key.startswith("OUTRIDER_TOOL_BASE_URL_") and value.strip():
            tool_base_urls[key.removeprefix("OUTRIDER_TOOL_BASE_URL_").lower()] = value.strip().rstrip("/")

    human_sources = _json_object(env, "OUTRIDER_HUMAN_SOURCES")

    dimension = _int(env, "OUTRIDER_EMBEDDING_DIM", 384)
    # pgvector indexes vectors of at most 2,000 dimensions; a larger one would
    # migrate and then fail at the first index build.
    if not 1 <= dimension <= 2000:
        raise SettingsError(f"OUTRIDER_EMBEDDING_DIM must be between 1 and 2000, got {dimension}")

    return Settings(
        env=mode,
        data_dir=data_dir,
        http_host=env.get("OUTRIDER_HTTP_HOST", "127.0.0.1").strip() or "127.0.0.1",
        http_port=_int(env, "OUTRIDER_HTTP_PORT", 8080),
        grpc_host=env.get("OUTRIDER_GRPC_HOST", "127.0.0.1").strip() or "127.0.0.1",
        grpc_port=_int(env, "OUTRIDER_GRPC_PORT", 50051),
        nats_port=_int(env, "OUTRIDER_NATS_PORT", 4222),
        context_addrs=addrs,
        database_url=env.get("DATABASE_URL", "").strip() or None,
        nats_url=env.get("NATS_URL", "").strip() or None,
        jwt_secret=jwt_secret,
        internal_key=internal_key,
        anthropic_api_key=env.get("ANTHROPIC_API_KEY", "").strip() or None,
        anthropic_base_url=env.get("ANTHROPIC_BASE_URL", "").strip() or None,
        playground_model=env.get("OUTRIDER_PLAYGROUND_MODEL", "").strip() or "claude-opus-5-5",
        allowed_models=env.get("OUTRIDER_ALLOWED_MODELS", "").strip() or "claude-*",
        outcome_window_hours=_positive_or_default(env, "AGENT_OUTCOME_WINDOW_HOURS", DEFAULT_OUTCOME_WINDOW_HOURS),
        decision_retention_days=_positive_or_default(env, "AGENT_DECISION_RETENTION_DAYS", DEFAULT_RETENTION_DAYS),
        embedding_dimension=dimension,
        tool_base_urls=tool_base_urls,
        sweep_interval_s=float(_int(env, "OUTRIDER_SWEEP_INTERVAL_S", 60)),
        human_sources=human_sources,
        log_level=env.get("OUTRIDER_LOG_LEVEL", "INFO").strip().upper() or "INFO",
        telemetry_batch_size=_int(env, "OUTRIDER_TELEMETRY_BATCH_SIZE", 200),
        telemetry_batch_wait_ms=_int(env, "OUTRIDER_TELEMETRY_BATCH_WAIT_MS", 2000),
        telemetry_ack_wait_s=_int(env, "OUTRIDER_TELEMETRY_ACK_WAIT_S", 30),
        redact_keys=tuple(w.strip() for w in env.get("OUTRIDER_REDACT_KEYS", "").split(",") if w.strip()),
        redact_patterns=_redact_patterns(env),
    )


# Every variable load() reads; the compose test checks compose.yaml against it.
ENV_VARS: frozenset[str] = frozenset(
    {
        "OUTRIDER_ENV",
        "OUTRIDER_DATA_DIR",
        "OUTRIDER_HTTP_HOST",
        "OUTRIDER_HTTP_PORT",
        "OUTRIDER_GRPC_HOST",
        "OUTRIDER_GRPC_PORT",
        "OUTRIDER_NATS_PORT",
        *(f"OUTRIDER_{c.upper()}_ADDR" for c in CONTEXTS),
        "DATABASE_URL",
        "NATS_URL",
        "OUTRIDER_JWT_SECRET",
        "OUTRIDER_INTERNAL_KEY",
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_BASE_URL",
        "OUTRIDER_PLAYGROUND_MODEL",
        "OUTRIDER_ALLOWED_MODELS",
        "AGENT_OUTCOME_WINDOW_HOURS",
        "AGENT_DECISION_RETENTION_DAYS",
        "OUTRIDER_EMBEDDING_DIM",
        "OUTRIDER_SWEEP_INTERVAL_S",
        "OUTRIDER_HUMAN_SOURCES",
        "OUTRIDER_LOG_LEVEL",
        "OUTRIDER_TELEMETRY_BATCH_SIZE",
        "OUTRIDER_TELEMETRY_BATCH_WAIT_MS",
        "OUTRIDER_TELEMETRY_ACK_WAIT_S",
        "OUTRIDER_REDACT_KEYS",
        "OUTRIDER_REDACT_PATTERNS",
    }
)
ENV_PREFIXES: tuple[str, ...] = ("OUTRIDER_TOOL_BASE_URL_",)
