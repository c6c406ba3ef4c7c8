"""Heartbeats: telemetry.agent into the agent_heartbeats bucket, and back out.

Heartbeats arrive on a plain NATS subject, not a stream. A heartbeat is worth
something only while it is fresh: replaying a backlog after an outage would
write liveness that is no longer true, and a lost one is replaced by the next,
which an agent sends well inside the bucket's five-minute TTL. The bucket is
the durable part: its TTL is what turns a stopped agent into a `silent` one,
with no sweeper to run and no clock of ours to trust.

Beats come on the bare subject (the shared engine user, for the engine named
`default`) and on each engine's own, `telemetry.agent.<engine>`; a beat for
an agent that engine's key does not list is dropped and counted.

The sink answers only one kind of message, a JetStream publish, and only on
the sender's own inbox: it answers as the services' user, which may publish
anywhere, so a reply subject the sender chose (`telemetry.otlp`, `$JS.API.…`,
`$KV.…`) would have it publish there for them.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from nats.aio.client import Client as NatsClient
from nats.aio.msg import Msg
from nats.aio.subscription import Subscription
from nats.js import JetStreamContext
from nats.js.kv import KeyValue

from outrider.engine_identity import HEARTBEATS, sender_of, subject_forms
from services.common.callers import agent_scope
from services.common.consuming import guarded, preview, printable
from services.common.nats import HEARTBEAT_BUCKET
from services.telemetry import rules
from services.telemetry.counters import Counters

_log = logging.getLogger(__name__)

SUBJECT = HEARTBEATS
# Every replica joins one queue group, so each heartbeat is written once.
QUEUE = "outrider-telemetry-heartbeats"
# A fleet beats a few times a minute per agent; a backlog larger than this
# means the bucket is unreachable, and newer beats will say the same thing.
PENDING_LIMIT = 10_000
READ_TIMEOUT_S = 2.0
# What a JetStream publish to the heartbeat subject gets back instead of the
# acknowledgement it waits for: the shape nats clients read as an API error,
# so the engine author sees the reason at once rather than a timeout.
JETSTREAM_REFUSAL = json.dumps(
    {
        "error": {
            "code": 400,
            "err_code": 10_400,
            "description": "heartbeats go over core NATS, not JetStream: publish to telemetry.agent without"
            " waiting for an ack (outrider.client.TelemetryPublisher.heartbeat does); nothing was recorded",
        }
    }
).encode()


class HeartbeatSink:
    def __init__(self, bucket: KeyValue, counters: Counters, engine_agents: Mapping[str, frozenset[str]]) -> None:
        self._bucket = bucket
        self._counters = counters
        # The agents each engine limited to some may beat for (the rest, any).
        self._engine_agents = engine_agents
        self._subs: list[Subscription] = []

    @classmethod
    async def start(
        cls,
        nc: NatsClient,
        js: JetStreamContext,
        counters: Counters,
        engine_agents: Mapping[str, frozenset[str]],
    ) -> HeartbeatSink:
        sink = cls(await js.key_value(HEARTBEAT_BUCKET), counters, engine_agents)
        for subject in subject_forms(SUBJECT):
            sink._subs.append(
                await nc.subscribe(subject, queue=QUEUE, cb=sink._on_message, pending_msgs_limit=PENDING_LIMIT)
            )
        return sink

    async def stop(self) -> None:
        subs, self._subs = self._subs, []
        for sub in subs:
            await sub.unsubscribe()

    async def _on_message(self, msg: Msg) -> None:
        sender = sender_of(msg.subject, SUBJECT)
        if msg.reply:
            # Only a request carries a reply subject, and a JetStream publish
            # is one: the sender waits for a stream's acknowledgement. It is
            # told on its own inbox, and on nothing else.
            if sender is not None and sender.owns_inbox(msg.reply):
                await msg.respond(JETSTREAM_REFUSAL)
                return
            self._counters.replies_refused += 1
            _log.warning(
                "heartbeat request left unanswered: its reply subject is not the sender's inbox",
                extra={"subject": msg.subject, "reply": printable(msg.reply)},
            )
            return
        parsed = guarded(rules.parse_heartbeat, msg.data)
        if parsed.value is None:
            problem = parsed.malformed
            assert problem is not None, "guarded() gives a value or the reason there is none"
            self._counters.count_malformed(problem.field)
            _log.warning(
                "malformed heartbeat dropped",
                extra={
                    "subject": msg.subject,
                    "field": problem.field,
                    "reason": printable(problem.problem),
                    "payload": preview(msg.data),
                },
            )
            return
        beat = parsed.value
        scope = agent_scope(sender.engine if sender is not None else None, self._engine_agents)
        if not scope.permits(beat.agent_id):
            self._counters.agent_refusals["heartbeat"] += 1
            _log.warning(
                "heartbeat for an agent outside its engine's key dropped",
                extra={"engine": scope.engine, "agent_id": printable(beat.agent_id)},
            )
            return
        try:
            await self._bucket.put(beat.agent_id, rules.heartbeat_value(beat))
        except Exception as error:  # noqa: BLE001 - a lost beat is replaced by the next one
            _log.warning("heartbeat not stored", extra={"agent_id": beat.agent_id, "error": repr(error)})
            return
        self._counters.heartbeats += 1


async def read_live(js: JetStreamContext) -> dict[str, rules.LiveState]:
    """Every agent whose latest heartbeat is still in the bucket.

    An expired key is simply gone, so absence here is what `silent` means.
    """
    bucket = await js.key_value(HEARTBEAT_BUCKET)
    watcher = await bucket.watchall(ignore_deletes=True)
    # nats-py leaves the watcher's methods unannotated, and its Entry says
    # `created` is an int where it holds the datetime read below.
    next_update: Callable[..., Awaitable[Any]] = watcher.updates
    stop: Callable[[], Awaitable[None]] = watcher.stop
    live: dict[str, rules.LiveState] = {}
    try:
        async with asyncio.timeout(READ_TIMEOUT_S):
            while (entry := await next_update(timeout=READ_TIMEOUT_S)) is not None:
                live[entry.key] = rules.read_heartbeat_value(entry.value, entry.created)
    finally:
        await stop()
    return live
