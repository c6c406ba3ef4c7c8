"""NATS connection and the JetStream streams and KV buckets Outrider relies on.

Every service that touches JetStream calls ensure_topology() at start: creating
what exists already is a no-op, so the order replicas start in never matters.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, replace

import nats
from nats.aio.client import Client
from nats.js import JetStreamContext
from nats.js.api import DiscardPolicy, KeyValueConfig, StorageType, StreamConfig
from nats.js.errors import BadRequestError, BucketNotFoundError, NotFoundError

from services.common.errors import Unavailable
from services.common.settings import Settings

_log = logging.getLogger(__name__)

HEARTBEAT_TTL_S = 300


@dataclass(frozen=True, slots=True)
class StreamSpec:
    name: str
    subjects: tuple[str, ...]


STREAMS: tuple[StreamSpec, ...] = (
    # telemetry.otlp carries the spans the gateway took in at /v1/traces.
    StreamSpec("TELEMETRY", ("telemetry.task", "telemetry.otlp")),
    StreamSpec("FACTS", ("facts.>",)),
)
HEARTBEAT_BUCKET = "agent_heartbeats"


async def connect(url: str, *, name: str, timeout: float = 10.0) -> Client:
    """Connect, or fail with the setting and address named instead of retrying forever."""

    async def _quiet(_exc: Exception) -> None:
        return None

    try:
        async with asyncio.timeout(timeout):
            return await nats.connect(
                url,
                name=name,
                connect_timeout=2,
                max_reconnect_attempts=-1,
                allow_reconnect=True,
                error_cb=_quiet,
            )
    except Exception as exc:  # noqa: BLE001 - the caller needs one clear reason
        raise Unavailable(f"NATS_URL is unreachable at {url}: {type(exc).__name__}", code="NATS_UNREACHABLE") from exc


@dataclass(frozen=True, slots=True)
class StreamLimits:
    """How much a stream keeps while its consumer is behind or away."""

    max_age_s: float
    max_bytes: int

    @classmethod
    def of(cls, settings: Settings) -> StreamLimits:
        return cls(max_age_s=settings.stream_max_age_hours * 3600.0, max_bytes=settings.stream_max_mb * 2**20)


def new_stream(spec: StreamSpec, limits: StreamLimits) -> StreamConfig:
    # Full means refuse new events, not drop old ones: a publisher that is
    # refused knows and can retry; an event dropped from the back is lost
    # without anyone being told.
    return StreamConfig(name=spec.name, subjects=list(spec.subjects), storage=StorageType.FILE,
                        max_age=limits.max_age_s, max_bytes=limits.max_bytes, discard=DiscardPolicy.NEW)


def merged_stream(existing: StreamConfig, spec: StreamSpec) -> StreamConfig | None:
    """The existing stream with our subjects added, everything else as its operator set it;
    None when it already carries them."""
    missing = [subject for subject in spec.subjects if subject not in (existing.subjects or [])]
    if not missing:
        return None
    return replace(existing, subjects=[*(existing.subjects or []), *missing])


async def ensure_topology(js: JetStreamContext, limits: StreamLimits) -> None:
    """Create what is missing; never overwrite what an operator set.

    A stream that exists keeps its limits, retention and replicas even when
    they differ from this deployment's settings (an operator may have raised
    them by hand during an incident); only subjects it lacks are added.
    """
    for spec in STREAMS:
        try:
            info = await js.stream_info(spec.name)
        except NotFoundError:
            try:
                await js.add_stream(new_stream(spec, limits))
                continue
            except BadRequestError:
                # Another replica created it between the lookup and here.
                info = await js.stream_info(spec.name)
        merged = merged_stream(info.config, spec)
        if merged is not None:
            await js.update_stream(merged)
        kept = info.config
        if (kept.max_age, kept.max_bytes) != (limits.max_age_s, limits.max_bytes):
            _log.info("stream keeps the limits it has", extra={
                "stream": spec.name, "max_age_s": kept.max_age, "max_bytes": kept.max_bytes,
                "configured_max_age_s": limits.max_age_s, "configured_max_bytes": limits.max_bytes})
    try:
        await js.key_value(HEARTBEAT_BUCKET)
    except BucketNotFoundError:
        await js.create_key_value(
            KeyValueConfig(bucket=HEARTBEAT_BUCKET, ttl=HEARTBEAT_TTL_S, storage=StorageType.FILE, history=1)
        )
