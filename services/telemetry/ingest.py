"""Ingest: telemetry.task from JetStream into the runs table, batch by batch.

Every replica pulls from one durable consumer, so the stream is shared rather
than copied. A batch is written in one statement and acked only after its
transaction commits; a crash anywhere before that leaves the batch unacked,
the stream redelivers it, and the primary key turns the second copy into a
counted duplicate instead of a second row. When the database is down nothing
is acked and nothing more is pulled: the runs wait in the stream, which is
built to hold them, instead of in this process's memory.

Runs come on the bare subject (the shared engine user, for the engine named
`default`) and on each engine's own, `telemetry.task.<engine>`: the subject
says which engine sent a run, and a run for an agent that engine's key does
not list is terminated and counted, whatever its payload claims.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from nats.aio.client import Client as NatsClient
from nats.aio.msg import Msg
from nats.aio.subscription import Subscription
from nats.js import JetStreamContext
from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy, Header
from sqlalchemy.ext.asyncio import AsyncEngine

from outrider.engine_identity import TASK_RUNS, sender_of, subject_forms
from services.common.callers import agent_scope
from services.common.consuming import guarded, preview, printable, write_apart
from services.common.settings import Settings, SettingsError
from services.telemetry import rules, store
from services.telemetry.counters import Counters

_log = logging.getLogger(__name__)

STREAM = "TELEMETRY"
SUBJECT = TASK_RUNS
DURABLE = "telemetry-ingest"
# Consumer-wide cap on delivered-but-unacked runs, across every replica. Each
# replica holds at most WRITERS + 1 batches (those being written and the one
# being pulled); the cap is what keeps a crowd of replicas, or stuck ones,
# from taking the stream into memory.
MAX_ACK_PENDING = 10_000
# Batches written at once by one replica (see Ingest.run).
WRITERS = 4
MAX_BATCH_SIZE = MAX_ACK_PENDING // (WRITERS + 1)
# How long past a pull request's own expiry we wait for its closing status
# before giving up on it (a reconnect can swallow the status).
_PULL_GRACE_S = 1.0
_SHUTDOWN_WRITE_S = 5.0


@dataclass(frozen=True, slots=True)
class IngestConfig:
    batch_size: int = 200
    batch_wait_s: float = 2.0
    ack_wait_s: float = 30.0
    retry_delay_s: float = 1.0
    max_backoff_s: float = 15.0
    max_deliver: int = 100
    # The agents each engine limited to some may send runs for (the rest, any).
    engine_agents: Mapping[str, frozenset[str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not 1 <= self.batch_size <= MAX_BATCH_SIZE:
            raise SettingsError(
                f"OUTRIDER_TELEMETRY_BATCH_SIZE must be between 1 and {MAX_BATCH_SIZE}, got {self.batch_size}"
            )
        if not 0.01 <= self.batch_wait_s <= 60:
            raise SettingsError(
                f"OUTRIDER_TELEMETRY_BATCH_WAIT_MS must be between 10 and 60000, got {self.batch_wait_s * 1000:.0f}"
            )
        # A batch may be held for its whole wait before it is written; an ack
        # wait shorter than that would redeliver every quiet-hour batch.
        if self.ack_wait_s <= self.batch_wait_s:
            raise SettingsError(
                f"OUTRIDER_TELEMETRY_ACK_WAIT_S ({self.ack_wait_s:g}) must exceed the batch wait "
                f"({self.batch_wait_s:g} s)"
            )

    @classmethod
    def from_settings(cls, settings: Settings) -> IngestConfig:
        return cls(
            batch_size=settings.telemetry_batch_size,
            batch_wait_s=settings.telemetry_batch_wait_ms / 1000,
            ack_wait_s=float(settings.telemetry_ack_wait_s),
            max_deliver=settings.max_deliver,
            engine_agents=settings.engine_agents,
        )


async def ensure_consumer(
    js: JetStreamContext,
    config: IngestConfig,
    *,
    durable: str = DURABLE,
    subjects: tuple[str, ...] = subject_forms(SUBJECT),
) -> None:
    """Create a shared durable consumer, or bring its settings to ours.

    Malformed runs are terminated at once and runs the database refuses are
    found and terminated by the write; max_deliver is the backstop against a
    message failing for a reason nobody foresaw. It is generous because a
    database outage redelivers too: the ingest stops pulling while the
    database is away, so an outage costs the runs in flight one delivery per
    attempt to reconnect, not one per second.

    An existing consumer is brought to these subjects too: one made before
    engines had subjects of their own reads only the bare one.
    """
    single = subjects[0] if len(subjects) == 1 else None
    await js.add_consumer(
        STREAM,
        ConsumerConfig(
            name=durable,
            durable_name=durable,
            filter_subject=single,
            filter_subjects=None if single else list(subjects),
            deliver_policy=DeliverPolicy.ALL,
            ack_policy=AckPolicy.EXPLICIT,
            ack_wait=config.ack_wait_s,
            max_ack_pending=MAX_ACK_PENDING,
            max_deliver=config.max_deliver,
        ),
    )


class BatchPuller:
    """Pulls batches from the durable consumer, one pull request per batch.

    The server applies "this many or this long, whichever comes first" by
    itself: a request for n messages that expires after `wait` is answered as
    messages arrive and ends at the n-th, or with a 408 status at expiry.
    nats-py's fetch() speaks the same protocol but waits on a fresh task per
    message, which measured as more work than the rest of the ingest together.
    """

    def __init__(self, nc: NatsClient, *, stream: str, durable: str) -> None:
        self._nc = nc
        self._next = f"$JS.API.CONSUMER.MSG.NEXT.{stream}.{durable}"
        self._inbox = nc.new_inbox()
        self._sub: Subscription | None = None
        self._arrived: list[Msg] = []
        self._wanted = 0
        self._ended = asyncio.Event()
        self.problem: str | None = None

    async def start(self) -> None:
        self._sub = await self._nc.subscribe(self._inbox, cb=self._on_message)

    async def stop(self) -> list[Msg]:
        """Stop pulling; returns what arrived but was never handed out."""
        if self._sub is not None:
            await self._sub.unsubscribe()
            self._sub = None
        left, self._arrived = self._arrived, []
        return left

    async def _on_message(self, msg: Msg) -> None:
        status = JetStreamContext.is_status_msg(msg)
        if status is None:
            self._arrived.append(msg)
            if len(self._arrived) >= self._wanted:
                self._ended.set()
            return
        if status == "100":  # idle heartbeat: the request is still open
            return
        if status not in ("404", "408"):  # anything but "no messages" / "expired"
            self.problem = f"{status} {(msg.header or {}).get(Header.DESCRIPTION, '')}".strip()
        self._ended.set()

    async def fetch(self, size: int, wait: float) -> list[Msg]:
        """Up to `size` messages, returning early when that many arrived."""
        self.problem = None
        self._wanted = size
        missing = size - len(self._arrived)
        if missing > 0:
            self._ended.clear()
            request = json.dumps({"batch": missing, "expires": int(wait * 1e9)}).encode()
            await self._nc.publish(self._next, request, reply=self._inbox)
            try:
                async with asyncio.timeout(wait + _PULL_GRACE_S):
                    await self._ended.wait()
            except TimeoutError:
                pass
        # Messages of an earlier, abandoned request may have joined this one;
        # they are deliveries like any other and are written with it.
        batch, self._arrived = self._arrived, []
        return batch


def delivery_count(msg: Msg) -> int:
    """How many times the stream has delivered this message.

    Read straight from the ack subject, which carries it as a token:
    $JS.ACK.<stream>.<consumer>.<delivered>.… (9 tokens), or with a domain and
    account hash after ACK (11 or more). Msg.metadata reads the same token but
    also builds a datetime and two sequence objects per message, which
    measured as a sixth of the ingest's CPU for this one integer. Anything
    else falls back to it.
    """
    tokens = (msg.reply or "").split(".")
    if tokens[:2] == ["$JS", "ACK"]:
        if len(tokens) == 9:
            return int(tokens[4])
        if len(tokens) >= 11:
            return int(tokens[Msg.Ack.NumDelivered])
    return msg.metadata.num_delivered


async def settle(messages: Iterable[Msg], how: str, delay: float | None = None) -> None:
    """Ack, nak or term each message; a failure leaves it to redelivery."""
    try:
        for msg in messages:
            if how == "ack":
                await msg.ack()
            elif how == "nak":
                await msg.nak(delay=delay)
            else:
                await msg.term()
    except Exception as error:  # noqa: BLE001 - unsettled means redelivered, and a duplicate is harmless
        _log.warning(
            "could not settle telemetry messages; they will be redelivered", extra={"how": how, "error": repr(error)}
        )


class Ingest:
    # The subjects this ingest takes and its consumer; the OTLP ingest, which
    # shares the pull and write loop, names its own.
    subjects: tuple[str, ...] = subject_forms(SUBJECT)
    durable = DURABLE

    def __init__(
        self, nc: NatsClient, js: JetStreamContext, engine: AsyncEngine, counters: Counters, config: IngestConfig
    ) -> None:
        self._js = js
        self._engine = engine
        self._counters = counters
        self._config = config
        self._puller = BatchPuller(nc, stream=STREAM, durable=self.durable)

    async def start(self) -> None:
        await ensure_consumer(self._js, self._config, durable=self.durable, subjects=self.subjects)
        await self._puller.start()

    async def run(self) -> None:
        """Pull and write until cancelled.

        Several batches are written at once while the next one is pulled. A
        commit waits for its WAL flush, and Postgres flushes the commits that
        wait together in one go, so concurrent batches multiply throughput
        without weakening what an ack means.
        """
        writing: set[asyncio.Task[bool]] = set()
        batch: list[Msg] = []
        try:
            while True:
                batch = await self._puller.fetch(self._config.batch_size, self._config.batch_wait_s)
                if self._puller.problem is not None:
                    await self._recover_consumer(self._puller.problem)
                if len(writing) >= WRITERS:
                    await asyncio.wait(writing, return_when=asyncio.FIRST_COMPLETED)
                finished = {task for task in writing if task.done()}
                writing -= finished
                if not all(task.result() for task in finished):
                    # The database just failed: give this batch back too, let
                    # the other writes end, and pull nothing more until it
                    # answers again.
                    await self._give_back(batch, self._config.retry_delay_s)
                    batch = []
                    if writing:
                        await asyncio.wait(writing)
                    writing.clear()
                    await self._wait_for_database()
                    continue
                if batch:
                    writing.add(asyncio.create_task(self._write(batch), name="telemetry.ingest.write"))
                    batch = []
        finally:
            if writing:
                _, unfinished = await asyncio.wait(writing, timeout=_SHUTDOWN_WRITE_S)
                for task in unfinished:
                    task.cancel()
                if unfinished:
                    _log.warning("stopped with batches unwritten; they will be redelivered")
            # Hand back what was pulled and not written, so another replica
            # takes it now instead of after the ack wait.
            await self._give_back([*batch, *await self._puller.stop()], None)

    async def _write(self, batch: list[Msg]) -> bool:
        """Write one batch; False when the database is down (the batch went back whole).

        A run that fails to write on its own (its data, not the database, is
        at fault) is found by writing halves apart and terminated, so the
        good runs beside it commit instead of waiting behind it forever.
        """
        counters = self._counters
        runs: list[tuple[Msg, rules.TaskRun]] = []
        malformed: list[Msg] = []
        foreign: list[Msg] = []
        counters.received += len(batch)
        for msg in batch:
            if delivery_count(msg) > 1:
                counters.redelivered += 1
            parsed = guarded(rules.parse_task, msg.data)
            if parsed.value is not None:
                if self._permitted(msg, parsed.value):
                    runs.append((msg, parsed.value))
                else:
                    foreign.append(msg)
                continue
            problem = parsed.malformed
            assert problem is not None, "guarded() gives a value or the reason there is none"
            counters.count_malformed(problem.field)
            malformed.append(msg)
            _log.warning(
                "malformed task run terminated",
                extra={
                    "field": problem.field,
                    "reason": printable(problem.problem),
                    "payload": preview(msg.data),
                    "stream_seq": msg.metadata.sequence.stream,
                },
            )
        # Terminated, not nak'd: a message that is malformed or refused now is
        # so on every redelivery, and retrying it forever would hide the others.
        await settle([*malformed, *foreign], "term")
        if not runs:
            return True
        try:
            inserted, failed = await write_apart(runs, self._insert)
        except asyncio.CancelledError:
            await self._give_back([msg for msg, _ in runs], None)
            raise
        except Exception as error:  # noqa: BLE001 - an outage: nothing was committed, the batch goes back
            _log.warning(
                "telemetry batch not written; it goes back to the stream",
                extra={"runs": len(runs), "error": printable(f"{type(error).__name__}: {error}")},
            )
            await self._give_back([msg for msg, _ in runs], self._config.retry_delay_s)
            return False
        counters.inserted += sum(inserted)
        counters.duplicates += len(runs) - len(failed) - sum(inserted)
        for (msg, run), refusal in failed:
            counters.count_malformed("unstorable")
            _log.warning(
                "task run the database refuses terminated",
                extra={
                    "agent_id": printable(run.agent_id),
                    "task_id": printable(run.task_id),
                    "error": printable(f"{type(refusal).__name__}: {refusal}"),
                    "payload": preview(msg.data),
                },
            )
        refused = {id(msg) for (msg, _), _ in failed}
        await settle([msg for (msg, _), _ in failed], "term")
        await settle([msg for msg, _ in runs if id(msg) not in refused], "ack")
        return True

    def _permitted(self, msg: Msg, run: rules.TaskRun) -> bool:
        """Whether the engine that published `msg`, as its subject says, may
        send runs for the run's agent; a refusal is counted and logged."""
        sender = sender_of(msg.subject, SUBJECT)
        scope = agent_scope(sender.engine if sender is not None else None, self._config.engine_agents)
        if scope.permits(run.agent_id):
            return True
        self._counters.agent_refusals["task_run"] += 1
        _log.warning(
            "task run for an agent outside its engine's key terminated",
            extra={"engine": scope.engine, "agent_id": printable(run.agent_id)},
        )
        return False

    async def _insert(self, runs: Sequence[tuple[Msg, rules.TaskRun]]) -> int:
        async with self._engine.begin() as conn:
            return await store.insert_runs(conn, runs=[run for _, run in runs])

    async def _give_back(self, messages: list[Msg], delay: float | None) -> None:
        """Nak messages not written, to be redelivered after `delay` (None:
        at once, to another replica); one delivered for the last time is
        dead-lettered instead.

        JetStream stops delivering a message after max_deliver attempts, and
        leaves it in the stream: the work queue removes a message only once
        it is acked or terminated. So one at its last attempt is terminated
        here, after it is counted and logged, instead of staying in the
        stream unseen until its age limit.
        """
        last = [msg for msg in messages if delivery_count(msg) >= self._config.max_deliver]
        final = {id(msg) for msg in last}
        if last:
            self._counters.dead_lettered += len(last)
            _log.error(
                "telemetry runs dead-lettered after their last delivery",
                extra={
                    "runs": len(last),
                    "max_deliver": self._config.max_deliver,
                    "payloads": [preview(msg.data, 60) for msg in last[:5]],
                },
            )
            await settle(last, "term")
        await settle([msg for msg in messages if id(msg) not in final], "nak", delay)

    async def _wait_for_database(self) -> None:
        delay = self._config.retry_delay_s
        attempts = 0
        while True:
            await asyncio.sleep(delay)
            attempts += 1
            try:
                async with self._engine.connect() as conn:
                    await store.ping(conn)
            except Exception:  # noqa: BLE001 - any failure means "still down"
                delay = min(delay * 2, self._config.max_backoff_s)
                continue
            _log.info("database answers again; telemetry ingest resumes", extra={"attempts": attempts})
            return

    async def _recover_consumer(self, problem: str) -> None:
        """The pull was refused (consumer deleted, stream gone): recreate and go on."""
        _log.warning("telemetry pull refused; recreating the consumer", extra={"problem": problem})
        await asyncio.sleep(self._config.retry_delay_s)
        try:
            await ensure_consumer(self._js, self._config, durable=self.durable, subjects=self.subjects)
        except Exception as error:  # noqa: BLE001 - retried after the next refused pull
            _log.warning("telemetry consumer not recreated", extra={"error": repr(error)})
