"""The `facts.booking` consumer: a durable pull consumer on the FACTS stream.

A message is acknowledged only after the facts it carries are committed, so a
crash between receipt and commit means redelivery, not a gap; redelivery is
harmless because the merge is idempotent. A malformed message is counted,
logged and terminated: redelivering it could never make it parse, and
retrying it forever would hold its slot in every fetch.

Facts come on the bare subject (the shared engine user, for the engine named
`default`) and on each engine's own, `facts.booking.<engine>`; the subject,
never the payload, says which engine sent one.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

from nats.aio.msg import Msg
from nats.js import JetStreamContext
from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy
from sqlalchemy.ext.asyncio import AsyncEngine

from outrider.engine_identity import BOOKING_FACTS, sender_of, subject_forms
from outrider.publishing import TRANSIENT
from services.common.consuming import Malformed, guarded, preview, printable, write_apart
from services.outcomes import intake, store
from services.outcomes.rules.facts import BookingFactsEvent, check_storable, decode_booking_event

_log = logging.getLogger(__name__)

STREAM = "FACTS"
SUBJECT = BOOKING_FACTS
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


def read_event(data: bytes) -> BookingFactsEvent:
    """One facts.booking body as a storable event; raises for anything else."""
    return check_storable(decode_booking_event(data))


class FactsConsumer:
    def __init__(
        self, js: JetStreamContext, engine: AsyncEngine, *, batch: int = FETCH_BATCH, max_deliver: int = 100
    ) -> None:
        self._js = js
        self._engine = engine
        self._batch = batch
        self._max_deliver = max_deliver

    def _config(self) -> ConsumerConfig:
        return ConsumerConfig(
            durable_name=DURABLE,
            ack_policy=AckPolicy.EXPLICIT,
            deliver_policy=DeliverPolicy.ALL,
            ack_wait=ACK_WAIT_S,
            filter_subjects=list(subject_forms(SUBJECT)),
            # The backstop for a failure nobody foresaw; malformed events and
            # events the database refuses are terminated long before.
            max_deliver=self._max_deliver,
        )

    async def subscribe(self) -> JetStreamContext.PullSubscription:
        # Created, or brought to these subjects: a consumer made before
        # engines had subjects of their own reads only the bare one.
        await self._js.add_consumer(STREAM, self._config())
        return await self._js.pull_subscribe_bind(durable=DURABLE, stream=STREAM)

    async def _restore_consumer(self) -> None:
        """Make the durable consumer again if it is gone (its stream was
        recreated, or an operator deleted it); the subscription pulls from it
        by name, so it goes on once it exists. Making one that exists is a no-op."""
        try:
            await self._js.add_consumer(STREAM, self._config())
        except Exception as error:  # noqa: BLE001 - tried again after the next failed fetch
            _log.warning("facts consumer not restored; retrying", extra={"error": type(error).__name__})

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
            except TRANSIENT as error:
                # A NATS server of the cluster gone, the consumer's leader
                # moving: expected during a loss, and over once it is. A
                # consumer that no longer exists answers the same way.
                _log.warning("fetching facts paused by NATS; retrying", extra={"error": type(error).__name__})
                await asyncio.sleep(RETRY_DELAY_S)
                await self._restore_consumer()
                continue
            except Exception:  # noqa: BLE001 - a broker hiccup must not end consumption for good
                _log.exception("fetching facts failed; retrying")
                await asyncio.sleep(RETRY_DELAY_S)
                await self._restore_consumer()
                continue
            await self.handle(messages)

    async def handle(self, messages: list[Msg]) -> None:
        """Commit one fetched batch, then settle every message in it.

        Malformed events and events the database refuses on their own are
        terminated and counted by field; the good ones beside them commit.
        """
        events: list[tuple[Msg, BookingFactsEvent]] = []
        rejected: list[tuple[Msg, Malformed]] = []
        for message in messages:
            parsed = guarded(read_event, message.data)
            if parsed.value is not None:
                events.append((message, parsed.value))
            elif parsed.malformed is not None:
                rejected.append((message, parsed.malformed))
        try:
            _, refused = await write_apart(events, self._merge)
        except asyncio.CancelledError:
            raise
        except Exception:  # noqa: BLE001 - an outage: nothing was committed, so everything comes back
            _log.exception("facts batch not committed; redelivering", extra={"messages": len(messages)})
            await self._give_back([message for message, _ in events])
            # A malformed event stays malformed; it need not wait for the database.
            await self._reject(rejected)
            return
        refused_ids = {id(message) for (message, _), _ in refused}
        for message, _ in events:
            if id(message) not in refused_ids:
                await message.ack()
        rejected += [
            (message, Malformed("unstorable", printable(f"{type(error).__name__}: {error}")))
            for (message, _), error in refused
        ]
        await self._reject(rejected)

    async def _merge(self, events: Sequence[tuple[Msg, BookingFactsEvent]]) -> None:
        async with self._engine.begin() as conn:
            await intake.merge_events(conn, [event for _, event in events])

    async def _reject(self, rejected: list[tuple[Msg, Malformed]]) -> None:
        """Count and terminate each; a count that cannot be written is only logged.

        The count is its own transaction after the good facts committed:
        failing to record a rejection must never cost the events beside it.
        """
        for message, problem in rejected:
            sender = sender_of(message.subject, SUBJECT)
            _log.warning(
                "malformed facts event terminated",
                extra={
                    "field": problem.field,
                    "problem": printable(problem.problem),
                    "subject": message.subject,
                    "engine": sender.engine if sender is not None else None,
                    "payload": preview(message.data),
                },
            )
            try:
                async with self._engine.begin() as conn:
                    await store.count_rejection(
                        conn,
                        field=problem.field,
                        problem=printable(problem.problem),
                        payload=preview(message.data, PAYLOAD_SAMPLE),
                    )
            except Exception:  # noqa: BLE001 - the event is terminated either way; the log keeps it
                _log.exception("facts rejection not counted", extra={"field": problem.field})
            await message.term()

    async def _give_back(self, messages: list[Msg]) -> None:
        """Nak for redelivery; an event at its last allowed delivery is dead-lettered instead."""
        for message in messages:
            if message.metadata.num_delivered >= self._max_deliver:
                _log.error(
                    "facts event dead-lettered after its last delivery",
                    extra={"max_deliver": self._max_deliver, "payload": preview(message.data)},
                )
                try:
                    async with self._engine.begin() as conn:
                        await store.count_rejection(
                            conn,
                            field="dead_lettered",
                            problem="delivered too often",
                            payload=preview(message.data, PAYLOAD_SAMPLE),
                        )
                except Exception:  # noqa: BLE001 - the database is what failed; the line above keeps the event
                    _log.warning("dead letter not counted: the database is not answering")
                await message.term()
            else:
                await message.nak(delay=RETRY_DELAY_S)
