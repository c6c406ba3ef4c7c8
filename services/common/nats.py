"""NATS connection and the JetStream streams and KV buckets Outrider relies on.

Every service that touches JetStream calls ensure_topology() at start: creating
what exists already is a no-op, so the order replicas start in never matters.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass

import nats
from nats.aio.client import Client
from nats.js import JetStreamContext
from nats.js.api import KeyValueConfig, StorageType, StreamConfig
from nats.js.errors import BadRequestError, BucketNotFoundError

from services.common.errors import Unavailable

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


async def ensure_topology(js: JetStreamContext) -> None:
    for spec in STREAMS:
        config = StreamConfig(name=spec.name, subjects=list(spec.subjects), storage=StorageType.FILE)
        try:
            await js.add_stream(config)
        except BadRequestError:
            # Exists with another configuration (e.g. an older subject list):
            # bring it to ours rather than refuse to start.
            await js.update_stream(config)
    try:
        await js.key_value(HEARTBEAT_BUCKET)
    except BucketNotFoundError:
        await js.create_key_value(
            KeyValueConfig(bucket=HEARTBEAT_BUCKET, ttl=HEARTBEAT_TTL_S, storage=StorageType.FILE, history=1)
        )
