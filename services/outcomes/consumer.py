"""The `facts.booking` consumer: a durable pull consumer on the FACTS stream.

A message is acknowledged only after the facts it carries are committed, so a
crash between receipt and commit means redelivery, not a gap; redelivery is
harmless because the merge is idempotent. A malformed message is counted,
logged and terminated: redelivering it could never make it parse, and
retrying it forever would hold its slot in every fetch.
"""

from __future__ import annotations

import asyncio
import logging

from nats.aio.msg import Msg
from nats.js import JetStreamContext
from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy
from sqlalchemy.ext.asyncio import AsyncEngine

from services.outcomes import intake, store
from services.outcomes.facts import BookingFactsEvent, MalformedFacts, decode_booking_event
from services.outcomes.intake import check_storable

_log = logging.getLogger(__name__)

STREAM = "FACTS"
SUBJECT = "facts.booking"
DURABLE = "outcomes-facts"
FETCH_BATCH = 256
FETCH_WAIT_S = 1.0
# How long the broker waits for an ack before redelivering; longer than one
# batch's commit takes on a slow day.
ACK_WAIT_S = 30.0
# A batch that failed to commit is redelivered after this, not at once: the
# database that just failed is unlikely to be back within milliseconds.
RETRY_DELAY_S = 2.0
# Enough of a bad payload to recognise its producer, not enough to bloat a row.
PAYLOAD_SAMPLE = 512


class FactsConsumer:
    def __init__(self, js: JetStreamContext, engine: AsyncEngine, *, batch: int = FETCH_BATCH) -> None:
        self._js = js
        self._engine = engine
        self._batch = batch

    async def subscribe(self) -> JetStreamContext.PullSubscription:
        config = ConsumerConfig(
            durable_name=DURABLE,
            ack_policy=AckPolicy.EXPLICIT,
            deliver_policy=DeliverPolicy.ALL,
            ack_wait=ACK_WAIT_S,
            filter_subject=SUBJECT,
        )
        return await self._js.pull_subscribe(SUBJECT, durable=DURABLE, stream=STREAM, config=config)

    async def consume(self, subscription: JetStreamContext.PullSubscription) -> None:
        """Consume until cancelled. Replicas share the durable, so each
        message goes to one of them."""
        while True:
            try:
                messages = await subscription.fetch(self._batch, timeout=FETCH_WAIT_S)
            except TimeoutError:
                # Nothing arrived in the wait: nats-py says so with either its
                # own timeout or asyncio's, depending on where the wait ended.
                # A quiet stream is not a failure.
                continue
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 - a broker hiccup must not end consumption for good
                _log.exception("fetching facts failed; retrying")
                await asyncio.sleep(RETRY_DELAY_S)
                continue
            await self.handle(messages)

    async def handle(self, messages: list[Msg]) -> None:
        """Commit one fetched batch, then settle every message in it."""
        events: list[tuple[Msg, BookingFactsEvent]] = []
        rejected: list[tuple[Msg, MalformedFacts]] = []
        for message in messages:
            try:
                events.append((message, check_storable(decode_booking_event(message.data))))
            except MalformedFacts as error:
                rejected.append((message, error))
        try:
            async with self._engine.begin() as conn:
                await intake.merge_events(conn, [event for _, event in events])
                for message, error in rejected:
                    await store.count_rejection(
                        conn,
                        field=error.field,
                        problem=error.problem,
                        payload=message.data[:PAYLOAD_SAMPLE].decode("utf-8", "replace"),
                    )
        except asyncio.CancelledError:
            raise
        except Exception:  # noqa: BLE001 - whatever failed, nothing was committed: redeliver
            _log.exception("facts batch not committed; redelivering", extra={"messages": len(messages)})
            for message in messages:
                await message.nak(delay=RETRY_DELAY_S)
            return
        for message, _ in events:
            await message.ack()
        for message, error in rejected:
            _log.warning(
                "malformed facts event terminated",
                extra={"field": error.field, "problem": error.problem, "subject": message.subject},
            )
            await message.term()
