"""What the platform's JetStream streams hold and what their consumers still
owe, with how far behind each consumer is: the alert job's reading of
ingest lag and of streams near their limits, which only a context holding
a NATS connection can give it."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime

import nats.errors
from nats.js import JetStreamContext

from services.common.errors import Unavailable
from services.common.nats import STREAMS
from services.common.stream_state import StreamState, first_undelivered, read_stream, seconds_behind

# The whole reading, every stream and consumer: short of a call's deadline,
# so a NATS that hangs is answered as unavailable rather than as a timeout.
READ_TIMEOUT_S = 3.0


@dataclass(frozen=True, slots=True)
class StreamReading:
    state: StreamState
    # Per consumer name, the age in seconds of the oldest message not yet delivered to it.
    behind_s: Mapping[str, float]


async def read(js: JetStreamContext, *, clock: Callable[[], datetime]) -> list[StreamReading]:
    """Each stream the platform owns, in the order it declares them; raises
    Unavailable when NATS does not answer in time."""
    try:
        async with asyncio.timeout(READ_TIMEOUT_S):
            return [await _read_one(js, spec.name, clock) for spec in STREAMS]
    except (nats.errors.Error, TimeoutError) as error:
        raise Unavailable(
            f"NATS did not answer for the streams: {type(error).__name__}", code="NATS_UNREACHABLE"
        ) from error


async def _read_one(js: JetStreamContext, name: str, clock: Callable[[], datetime]) -> StreamReading:
    state = await read_stream(js, name)
    stamps = {
        consumer.name: await first_undelivered(js, name, consumer) if consumer.pending else []
        for consumer in state.consumers
    }
    # After the stamps are read: a message stored meanwhile is then never
    # found younger than the moment it is measured against.
    now = clock()
    return StreamReading(
        state,
        {consumer.name: seconds_behind(consumer, stamps[consumer.name], now=now) for consumer in state.consumers},
    )
