"""What a JetStream stream holds and what its consumers still owe, read in
one go and judged by pure rules.

Four readers share the figures: a start deciding whether a stream may be
recreated (nothing in it is owed to anyone), `/readyz` deciding whether a
stream is near full or a consumer too far behind, `/metrics`, and the
telemetry context's ingest state, which the alert job reads.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from nats.js import JetStreamContext
from nats.js.errors import NotFoundError

# A stream this full turns readiness red: the publisher whose event is refused
# next is the first to notice otherwise, and by then it is too late to act.
FULL_AT = 0.9


def subject_matches(pattern: str, subject: str) -> bool:
    """Whether a concrete subject falls under a NATS subject pattern:
    `*` stands for one token, a final `>` for one or more."""
    wanted, given = pattern.split("."), subject.split(".")
    for index, token in enumerate(wanted):
        if token == ">":
            return len(given) > index
        if index >= len(given) or token not in ("*", given[index]):
            return False
    return len(wanted) == len(given)


@dataclass(frozen=True, slots=True)
class ConsumerState:
    name: str
    # The subjects it reads; none means every subject of its stream.
    filters: tuple[str, ...]
    # Stored and not yet delivered to it: its lag.
    pending: int
    # Delivered and neither acknowledged nor terminated yet.
    ack_pending: int
    # Of those, delivered more than once.
    redelivered: int
    # Pull requests waiting for messages: someone is reading right now.
    waiting: int = 0
    # The stream sequence of the last message delivered to it: what it has
    # not been handed yet is stored after it.
    delivered_seq: int = 0

    def reads(self, subject: str) -> bool:
        return not self.filters or any(subject_matches(pattern, subject) for pattern in self.filters)


@dataclass(frozen=True, slots=True)
class StreamState:
    name: str
    messages: int
    bytes: int
    # Each limit is -1 (or 0) when the stream has none.
    max_bytes: int
    max_msgs: int
    max_msgs_per_subject: int
    # Messages held, by concrete subject.
    subjects: Mapping[str, int] = field(default_factory=dict)
    consumers: tuple[ConsumerState, ...] = ()

    def fullest(self) -> tuple[float, str]:
        """How full the stream is, 0 to 1, by whichever limit it is nearest,
        and that limit said in words."""
        measures = [(0.0, "no limit")]
        if self.max_bytes > 0:
            measures.append((self.bytes / self.max_bytes, f"{self.bytes:,} of {self.max_bytes:,} bytes"))
        if self.max_msgs > 0:
            measures.append((self.messages / self.max_msgs, f"{self.messages:,} of {self.max_msgs:,} messages"))
        if self.max_msgs_per_subject > 0 and self.subjects:
            subject, held = max(self.subjects.items(), key=lambda item: item[1])
            measures.append(
                (held / self.max_msgs_per_subject, f"{held:,} of {self.max_msgs_per_subject:,} messages on {subject}")
            )
        return max(measures, key=lambda measure: measure[0])

    @property
    def fullness(self) -> float:
        return self.fullest()[0]


async def read_stream(js: JetStreamContext, name: str) -> StreamState:
    """The stream's figures and every consumer's, as the server has them now."""
    info = await js.stream_info(name, subjects_filter=">")
    consumers = await js.consumers_info(name)
    config, state = info.config, info.state
    return StreamState(
        name=name,
        messages=state.messages,
        bytes=state.bytes,
        max_bytes=config.max_bytes if config.max_bytes is not None else -1,
        max_msgs=config.max_msgs if config.max_msgs is not None else -1,
        max_msgs_per_subject=config.max_msgs_per_subject if config.max_msgs_per_subject is not None else -1,
        subjects=dict(state.subjects or {}),
        consumers=tuple(
            ConsumerState(
                name=consumer.name,
                filters=tuple(
                    consumer.config.filter_subjects
                    or ([consumer.config.filter_subject] if consumer.config.filter_subject else [])
                ),
                pending=consumer.num_pending or 0,
                ack_pending=consumer.num_ack_pending or 0,
                redelivered=consumer.num_redelivered or 0,
                waiting=consumer.num_waiting or 0,
                delivered_seq=consumer.delivered.stream_seq if consumer.delivered else 0,
            )
            for consumer in consumers
        ),
    )


def seconds_behind(consumer: ConsumerState, stored_at: Iterable[datetime], *, now: datetime) -> float:
    """How far behind a consumer is: the age of the oldest message not yet
    delivered to it, given when the first such message on each subject it
    reads was stored; 0 when nothing is pending.

    The stamps are the NATS server's clock; one ahead of ours counts as just
    stored rather than as a negative lag."""
    stamps = list(stored_at)
    if not consumer.pending or not stamps:
        return 0.0
    return max(0.0, (now - min(stamps)).total_seconds())


async def first_undelivered(js: JetStreamContext, stream: str, consumer: ConsumerState) -> list[datetime]:
    """When the first message stored after what `consumer` was last handed
    was stored, on each subject it reads (none found, none listed)."""
    stamps = []
    for pattern in consumer.filters or (">",):
        try:
            found = await js.get_msg(stream, seq=consumer.delivered_seq + 1, subject=pattern, next=True)
        except NotFoundError:
            continue
        if found.time is not None:
            stamps.append(found.time)
    return stamps


def unread(state: StreamState, *, ours: Sequence[str], retired: Sequence[str] = ()) -> dict[str, int]:
    """Messages on subjects no consumer reads, by subject, that someone is still owed.

    A subject we retired (under `retired` and not under `ours`) is owed to
    nobody: no consumer will ever come for it. A subject that is neither ours
    nor retired is an operator's, and its unread messages are theirs to keep.
    """

    def abandoned(subject: str) -> bool:
        return any(subject_matches(p, subject) for p in retired) and not any(subject_matches(p, subject) for p in ours)

    return {
        subject: held
        for subject, held in sorted(state.subjects.items())
        if held and not abandoned(subject) and not any(consumer.reads(subject) for consumer in state.consumers)
    }


def owed(state: StreamState, *, ours: Sequence[str], retired: Sequence[str] = ()) -> list[str]:
    """What the stream still owes, one line each; empty when nothing: what a
    consumer has pending or unacknowledged, and what `unread` finds."""
    lines = [
        f"consumer {consumer.name}: {consumer.pending:,} not yet delivered, {consumer.ack_pending:,} awaiting an ack"
        for consumer in state.consumers
        if consumer.pending or consumer.ack_pending
    ]
    lines += [
        f"{held:,} messages on {subject}, which no consumer reads"
        for subject, held in unread(state, ours=ours, retired=retired).items()
    ]
    return lines


def settles_soon(state: StreamState, *, ours: Sequence[str], retired: Sequence[str] = ()) -> bool:
    """Whether what the stream owes is only what consumers that are reading
    right now will take: once no new message arrives, it is settled in moments.
    A backlog nobody pulls, or a subject nobody reads, is not."""
    return not unread(state, ours=ours, retired=retired) and all(
        consumer.waiting or not consumer.pending for consumer in state.consumers
    )


def alarms(states: Sequence[StreamState], *, lag_max: int) -> list[str]:
    """Why the streams are not fit to take traffic, one line each; empty when they are."""
    lines = []
    for state in states:
        ratio, measure = state.fullest()
        if ratio >= FULL_AT:
            lines.append(f"stream {state.name} is {ratio:.0%} full ({measure}); at 100% its publishes are refused")
        lines += [
            f"consumer {consumer.name} of {state.name} is {consumer.pending:,} messages behind"
            f" (OUTRIDER_INGEST_LAG_MAX is {lag_max:,})"
            for consumer in state.consumers
            if consumer.pending > lag_max
        ]
    return lines
