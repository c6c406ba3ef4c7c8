"""The gateway's OTLP intake: the spans /v1/traces admits, published to JetStream once each.

Each message is published with a message id derived from its bytes, and a
publish whose acknowledgement did not come is retried with that same id: a
message stored on an attempt whose answer was lost, or an export the
exporter sends again, is dropped by the stream instead of stored twice.

The intake also counts what it took and refused; /metrics exposes the counts
beside the telemetry context's own. Its connection, the services' NATS
credential, is also how /metrics and /readyz read what the streams hold.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from nats.aio.client import Client as NatsClient
from nats.js import JetStreamContext

from gateway.errors import ApiError
from outrider.publishing import Retry, publish_once
from services.common import nats as nats_helper
from services.common.settings import Settings
from services.common.stream_state import StreamState, read_stream
from services.telemetry.otlp.codec import SUBJECT

CONNECT_TIMEOUT_S = 3.0
# How long /metrics and /readyz wait for the streams' state: a probe's
# answer is worth more soon than complete.
STREAM_READ_TIMEOUT_S = 2.0
# Every attempt and pause together end below the OTLP exporters' default
# 10 s timeout, so a stalled stream gets a 503 the exporter retries instead
# of a timeout it cannot tell apart.
PUBLISH_RETRY = Retry(attempts=3, first_delay_s=0.25, max_delay_s=1.0, attempt_timeout_s=2.0)
# The outcome a refusal is counted under, by its HTTP status.
_REFUSALS = {400: "undecodable", 401: "unauthenticated", 413: "too_large", 415: "unsupported", 503: "unavailable"}


class Intake:
    """The gateway's side of OTLP: a JetStream connection made on first use,
    and this process's counts of what it took and refused."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._stream_limits = nats_helper.StreamLimits.of(settings)
        self._client: NatsClient | None = None
        self._js: JetStreamContext | None = None
        self._connecting: asyncio.Task[JetStreamContext] | None = None
        self.requests: Counter[str] = Counter()
        self.spans: Counter[str] = Counter()
        # Of the refused spans, those for an agent the engine's key does not list.
        self.foreign_agent_spans = 0

    async def _jetstream(self) -> JetStreamContext:
        # Connected lazily: the rest of the gateway must start, and answer,
        # while NATS is away; an exporter retries the 503 meanwhile.
        if self._js is not None:
            return self._js
        if not self._settings.nats_url:
            raise ApiError(503, "OTLP_UNAVAILABLE", "OTLP intake needs NATS_URL")
        # One attempt at a time, run as a task of its own: a caller that stops
        # waiting (a probe's timeout) must not cancel it, for it may be
        # migrating a stream, which is not to be left half done.
        if self._connecting is None or self._connecting.done():
            self._connecting = asyncio.create_task(self._connect(), name="gateway.nats-connect")
            self._connecting.add_done_callback(_seen)
        return await asyncio.shield(self._connecting)

    async def _connect(self) -> JetStreamContext:
        client = await nats_helper.connect_service(self._settings, name="outrider-gateway", timeout=CONNECT_TIMEOUT_S)
        js = client.jetstream()
        try:
            await nats_helper.ensure_topology(js, self._stream_limits)
        except BaseException:
            await client.close()
            raise
        self._client, self._js = client, js
        return js

    def nats_state(self) -> str | None:
        """`connected` or `lost` once the intake has a connection, which it
        makes on first use; None before. A lost one reconnects by itself."""
        if self._client is None:
            return None
        return "connected" if self._client.is_connected else "lost"

    async def publish(self, messages: list[bytes]) -> None:
        """Every message stored by JetStream, once, or an exception."""
        if self.nats_state() == "lost":
            # Refused at once: retrying publishes that cannot be answered
            # would only hold the exporter until its own timeout.
            raise ApiError(503, "OTLP_UNAVAILABLE", "NATS is unreachable; retry shortly")
        js = await self._jetstream()
        await asyncio.gather(
            *(
                publish_once(js, SUBJECT, message, msg_id=message_id(message), retry=PUBLISH_RETRY)
                for message in messages
            )
        )

    async def streams(self) -> list[StreamState]:
        """What each of Outrider's streams holds and each consumer owes, now."""
        js = await self._jetstream()
        return [await read_stream(js, spec.name) for spec in nats_helper.STREAMS]

    def count_refusal(self, status: int) -> None:
        self.requests[_REFUSALS.get(status, "refused")] += 1

    async def close(self) -> None:
        if self._connecting is not None and not self._connecting.done():
            self._connecting.cancel()
        if self._client is not None:
            await self._client.close()
            self._client = self._js = None


def _seen(task: asyncio.Task[JetStreamContext]) -> None:
    """Take a failed attempt's error, which its callers may have stopped waiting for."""
    if not task.cancelled():
        task.exception()


async def read_streams(intake: Intake | None) -> list[StreamState]:
    """The streams' state within STREAM_READ_TIMEOUT_S; raises when NATS does not give it."""
    if intake is None:
        raise ApiError(503, "OTLP_UNAVAILABLE", "the gateway holds no NATS connection")
    async with asyncio.timeout(STREAM_READ_TIMEOUT_S):
        return await intake.streams()


def unreadable(error: BaseException) -> str:
    """Why the streams could not be read, in words an unauthenticated probe
    may see: the error's code or kind, never the address behind it."""
    return str(getattr(error, "code", "") or type(error).__name__)


def message_id(message: bytes) -> str:
    """The stream's de-duplication id of a message: a digest of its bytes.

    Not a fresh id per publish: the same spans sent again (an exporter
    retrying an export whose answer it never saw, through this gateway or
    another) pack into the same bytes and must carry the same id to be
    dropped. Spans are keyed by trace and span id, so two messages with the
    same bytes hold the same rows and one of them is all the tables keep.
    """
    return "otlp:" + hashlib.sha256(message).hexdigest()


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    app.state.otlp = Intake(app.state.settings)
    try:
        yield
    finally:
        await app.state.otlp.close()


def exposition(intake: Intake | None) -> str:
    """This gateway's OTLP counts, Prometheus text format 0.0.4."""
    if intake is None:
        return ""
    lines = [
        "# HELP outrider_otlp_requests_total OTLP export requests this gateway answered, by outcome.",
        "# TYPE outrider_otlp_requests_total counter",
        *(
            f'outrider_otlp_requests_total{{outcome="{outcome}"}} {intake.requests[outcome]}'
            for outcome in ("accepted", *_REFUSALS.values())
        ),
        "# HELP outrider_otlp_spans_total Spans in accepted OTLP requests: published, refused, or not a run "
        "or model call.",
        "# TYPE outrider_otlp_spans_total counter",
        *(
            f'outrider_otlp_spans_total{{outcome="{outcome}"}} {intake.spans[outcome]}'
            for outcome in ("accepted", "rejected", "ignored")
        ),
    ]
    return "\n".join(lines) + "\n"
