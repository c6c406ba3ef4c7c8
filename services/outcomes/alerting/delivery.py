"""Delivery of stored alert transitions to OUTRIDER_ALERT_WEBHOOK_URL.

Each outbox row is POSTed with its fixed body, signed
`X-Outrider-Signature: sha256=<hex HMAC-SHA256 of the body>`, and an
`X-Outrider-Delivery` id that is the row's own and so the same on every
retry. A 2xx marks the row delivered and it is never sent again; anything
else (or no answer) schedules a retry with exponential backoff.

At least once, not exactly once: if the process dies after the receiver
answered 2xx but before the row is marked, the row is sent again after the
restart. A receiver drops that repeat by its X-Outrider-Delivery id.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import logging
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import httpx
from sqlalchemy.ext.asyncio import AsyncEngine

from services.outcomes import store

_log = logging.getLogger(__name__)

SIGNATURE_HEADER = "X-Outrider-Signature"
DELIVERY_HEADER = "X-Outrider-Delivery"
# How long one POST may take.
POST_TIMEOUT_S = 10.0
# The first retry waits BACKOFF_BASE_S, each later one twice as long, up to BACKOFF_MAX_S.
BACKOFF_BASE_S = 1.0
BACKOFF_MAX_S = 600.0


def signature(secret: str, body: bytes) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def retry_delay(attempts: int, *, base_s: float = BACKOFF_BASE_S, max_s: float = BACKOFF_MAX_S) -> float:
    """The wait after the `attempts`-th failed attempt (1-based)."""
    return min(max_s, base_s * 2 ** (attempts - 1))


class Deliverer:
    def __init__(
        self,
        *,
        engine: AsyncEngine,
        url: str,
        secret: str,
        client: httpx.AsyncClient,
        backoff_base_s: float = BACKOFF_BASE_S,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self._engine = engine
        self._url = url
        self._secret = secret
        self._client = client
        self._backoff_base_s = backoff_base_s
        self._clock = clock
        self.failures = 0  # failed attempts since start, for /metrics

    async def deliver_due(self) -> int:
        """Deliver every row due now, one round at a time; the rows delivered."""
        delivered = 0
        while True:
            # One row per transaction, locked (skip locked) while its POST
            # runs: two replicas never send one row at once, and a 2xx is
            # recorded as soon as it is received, which keeps the window in
            # which a crash repeats a delivery to one POST.
            async with self._engine.begin() as conn:
                rows = await store.due_deliveries(conn, now=self._clock(), limit=1)
                if not rows:
                    return delivered
                row = rows[0]
                error = await self._post(row)
                if error is None:
                    await store.mark_delivered(conn, delivery_id=row.id, now=self._clock())
                    delivered += 1
                else:
                    self.failures += 1
                    wait = retry_delay(row.attempts + 1, base_s=self._backoff_base_s)
                    await store.mark_failed(
                        conn, delivery_id=row.id, retry_at=self._clock() + timedelta(seconds=wait), error=error
                    )

    async def _post(self, row: store.OutboxRow) -> str | None:
        body = row.body.encode()
        headers = {
            "Content-Type": "application/json",
            SIGNATURE_HEADER: signature(self._secret, body),
            DELIVERY_HEADER: row.id,
        }
        try:
            response = await self._client.post(self._url, content=body, headers=headers, timeout=POST_TIMEOUT_S)
        except httpx.HTTPError as exc:
            _log.warning("alert delivery failed", extra={"delivery": row.id, "error": type(exc).__name__})
            return type(exc).__name__
        if 200 <= response.status_code < 300:
            return None
        _log.warning("alert delivery refused", extra={"delivery": row.id, "status": response.status_code})
        return f"HTTP {response.status_code}"


async def run_deliveries(deliverer: Deliverer, *, wake: asyncio.Event, poll_s: float) -> None:
    """Deliver when a pass queued transitions, and every poll_s for retries."""
    while True:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(wake.wait(), timeout=poll_s)
        wake.clear()
        try:
            await deliverer.deliver_due()
        except asyncio.CancelledError:
            raise
        except Exception:  # noqa: BLE001 - a lost database retries at the next poll
            _log.exception("alert delivery round failed; retrying")
