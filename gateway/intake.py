"""The gateway's OTLP intake: the spans /v1/traces admits, published to JetStream once each.

Each message is published with a message id derived from its bytes, and a
publish whose acknowledgement did not come is retried with that same id: a
message stored on an attempt whose answer was lost, or an export the
exporter sends again, is dropped by the stream instead of stored twice.

The intake also counts what it took and refused; /metrics exposes the counts
beside the telemetry context's own.
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
from services.telemetry.otlp.codec import SUBJECT

CONNECT_TIMEOUT_S = 3.0
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
        self._lock = asyncio.Lock()
        self.requests: Counter[str] = Counter()
        self.spans: Counter[str] = Counter()

    async def _jetstream(self) -> JetStreamContext:
        # Connected lazily: the rest of the gateway must start, and answer,
        # while NATS is away; an exporter retries the 503 meanwhile.
        async with self._lock:
            if self._js is None:
                if not self._settings.nats_url:
                    raise ApiError(503, "OTLP_UNAVAILABLE", "OTLP intake needs NATS_URL")
                client = await nats_helper.connect_service(
                    self._settings, name="outrider-gateway", timeout=CONNECT_TIMEOUT_S
                )
                js = client.jetstream()
                try:
                    await nats_helper.ensure_topology(js, self._stream_limits)
                except BaseException:
                    await client.close()
                    raise
                self._client, self._js = client, js
            return self._js

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

    def count_refusal(self, status: int) -> None:
        self.requests[_REFUSALS.get(status, "refused")] += 1

    async def close(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = self._js = None


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
