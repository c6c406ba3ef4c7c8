"""Publishing to JetStream so that a message is stored once, whatever fails.

A publish whose acknowledgement never came may or may not have been stored:
the server may have died before or after writing it, or a stream leader may
be moving to another server of the cluster. Retrying is the only way to be
sure it is stored, and the message id (Nats-Msg-Id) is what keeps a retry of
a message that was stored after all from being stored twice: the stream
drops a second message with the same id within its duplicate window.

So every retry carries the same id, and all the retries together end well
inside that window; past it a retry would be a second copy.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

import nats.errors
import nats.js.errors
from nats.js import JetStreamContext
from nats.js.api import PubAck

_log = logging.getLogger(__name__)

# How long a stream remembers a message id (the streams are created with it).
DUPLICATE_WINDOW_S = 120.0

# What an outage looks like to a publisher: no answer in time, nobody
# answering the subject (the stream's leader is being elected), a server
# saying JetStream is briefly unavailable, the connection being re-made.
# Anything else (a refused permission, a full stream, a closed connection)
# fails the same way on every attempt.
TRANSIENT: tuple[type[BaseException], ...] = (
    asyncio.TimeoutError,
    nats.errors.NoRespondersError,
    nats.js.errors.NoStreamResponseError,
    nats.js.errors.ServiceUnavailableError,
    nats.errors.ConnectionReconnectingError,
    nats.errors.StaleConnectionError,
    nats.errors.OutboundBufferLimitError,
)

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Retry:
    """How often and how patiently a publish is retried."""

    attempts: int = 10
    first_delay_s: float = 0.2
    max_delay_s: float = 3.0
    # Each attempt waits this long for its acknowledgement.
    attempt_timeout_s: float = 2.0

    def delays(self) -> list[float]:
        """The pause before each retry: doubling from the first, capped."""
        return [min(self.first_delay_s * 2**n, self.max_delay_s) for n in range(self.attempts - 1)]

    def longest_s(self) -> float:
        """The most time every attempt and pause together can take."""
        return self.attempts * self.attempt_timeout_s + sum(self.delays())

    def __post_init__(self) -> None:
        if self.attempts < 1:
            raise ValueError("a publish needs at least one attempt")
        # A retry after the window has closed is stored as a second copy.
        if self.longest_s() >= DUPLICATE_WINDOW_S:
            raise ValueError(
                f"retries may take {self.longest_s():g}s, past the {DUPLICATE_WINDOW_S:g}s duplicate window"
            )


DEFAULT_RETRY = Retry()


async def retried(attempt: Callable[[], Awaitable[T]], retry: Retry = DEFAULT_RETRY, *, what: str = "publish") -> T:
    """The result of the first attempt that succeeds; transient failures are
    retried after the retry's delays, the last one (or any other) is raised."""
    for number, delay in enumerate(retry.delays(), start=1):
        try:
            return await attempt()
        except TRANSIENT as error:
            _log.info(
                "retrying after a transient NATS failure",
                extra={"what": what, "attempt": number, "error": type(error).__name__},
            )
            await asyncio.sleep(delay)
    return await attempt()


async def publish_once(
    js: JetStreamContext,
    subject: str,
    payload: bytes,
    *,
    msg_id: str,
    retry: Retry = DEFAULT_RETRY,
    headers: dict[str, str] | None = None,
) -> PubAck:
    """Publish until the stream acknowledges, with the same message id on
    every attempt; the acknowledgement says `duplicate` when an earlier
    attempt had been stored after all."""
    if not msg_id:
        raise ValueError("a message id is what makes a retried publish safe; give one")
    sent = {**(headers or {}), "Nats-Msg-Id": msg_id}
    return await retried(
        lambda: js.publish(subject, payload, timeout=retry.attempt_timeout_s, headers=dict(sent)), retry, what=subject
    )
