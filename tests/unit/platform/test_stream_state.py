"""The rules over what a stream holds and owes, and the stream configurations
they lead to: which messages a migration may drop, when readiness turns red,
what the metrics say, and what a new or migrated stream looks like."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from nats.js.api import DiscardPolicy, RetentionPolicy, StorageType, StreamConfig

from gateway.codec.telemetry import stream_exposition, streams_readiness_json
from services.common.nats import (
    ENGINE_PUBLISHES,
    STREAMS,
    StreamLimits,
    merged_stream,
    migrated_stream,
    new_stream,
    stream_subjects,
)
from services.common.stream_state import (
    ConsumerState,
    StreamState,
    alarms,
    owed,
    seconds_behind,
    settles_soon,
    subject_matches,
    unread,
)

FACTS = next(spec for spec in STREAMS if spec.name == "FACTS")
LIMITS = StreamLimits(max_age_s=3600.0, max_bytes=2 * 2**20, max_msgs_per_subject=1000)


def consumer(name: str = "outcomes-facts", *filters: str, pending: int = 0, ack_pending: int = 0, waiting: int = 0):
    return ConsumerState(
        name=name,
        filters=filters or ("facts.booking",),
        pending=pending,
        ack_pending=ack_pending,
        redelivered=0,
        waiting=waiting,
    )


def stream(*consumers: ConsumerState, subjects=None, messages=0, size=0, max_bytes=-1, per_subject=-1, max_msgs=-1):
    return StreamState(
        name="FACTS",
        messages=messages,
        bytes=size,
        max_bytes=max_bytes,
        max_msgs=max_msgs,
        max_msgs_per_subject=per_subject,
        subjects=subjects or {},
        consumers=consumers,
    )


@pytest.mark.parametrize(
    ("pattern", "subject", "matches"),
    [
        ("facts.booking", "facts.booking", True),
        ("facts.booking", "facts.bookings", False),
        ("facts.*", "facts.booking", True),
        ("facts.*", "facts.booking.x", False),
        ("facts.>", "facts.booking.x", True),
        ("facts.>", "facts", False),
        (">", "anything.at.all", True),
        ("telemetry.task.*", "telemetry.task", False),
        ("*.task", "telemetry.task", True),
    ],
)
def test_subject_patterns_match_as_nats_matches_them(pattern, subject, matches):
    assert subject_matches(pattern, subject) is matches


def test_what_a_consumer_has_pending_or_unacknowledged_is_owed():
    state = stream(consumer(pending=3, ack_pending=2), subjects={"facts.booking": 5})
    assert owed(state, ours=FACTS.subjects, retired=FACTS.retired) == [
        "consumer outcomes-facts: 3 not yet delivered, 2 awaiting an ack"
    ]
    assert owed(stream(consumer(), subjects={"facts.booking": 5}), ours=FACTS.subjects) == []


def test_messages_nobody_reads_are_owed_unless_on_a_subject_we_retired():
    held = {"facts.booking": 4, "facts.invoice": 7, "ops.manual": 2}
    # No consumer yet: our subject waits for the one that comes, the operator's
    # subject is theirs, the retired subject is nobody's.
    assert unread(stream(subjects=held), ours=FACTS.subjects, retired=FACTS.retired) == {
        "facts.booking": 4,
        "ops.manual": 2,
    }
    assert owed(stream(consumer(), subjects=held), ours=FACTS.subjects, retired=FACTS.retired) == [
        "2 messages on ops.manual, which no consumer reads"
    ]
    # A consumer reading everything reads them all.
    assert owed(stream(consumer("all", ">"), subjects=held), ours=FACTS.subjects, retired=FACTS.retired) == []


def test_only_deliveries_to_a_consumer_that_is_reading_settle_soon():
    reading = stream(consumer(pending=40, ack_pending=10, waiting=1), subjects={"facts.booking": 50})
    assert settles_soon(reading, ours=FACTS.subjects, retired=FACTS.retired)
    in_flight = stream(consumer(ack_pending=10), subjects={"facts.booking": 10})
    assert settles_soon(in_flight, ours=FACTS.subjects, retired=FACTS.retired)
    backlog_nobody_pulls = stream(consumer(pending=40), subjects={"facts.booking": 40})
    assert not settles_soon(backlog_nobody_pulls, ours=FACTS.subjects, retired=FACTS.retired)
    unread_subject = stream(subjects={"facts.booking": 1})
    assert not settles_soon(unread_subject, ours=FACTS.subjects, retired=FACTS.retired)


def test_fullness_is_the_nearest_limit():
    assert stream().fullness == 0.0
    by_bytes = stream(size=900, max_bytes=1000, per_subject=100, subjects={"a": 10, "b": 20})
    assert by_bytes.fullest() == (0.9, "900 of 1,000 bytes")
    by_subject = stream(size=100, max_bytes=1000, per_subject=100, subjects={"a": 10, "b": 95})
    assert by_subject.fullest() == (0.95, "95 of 100 messages on b")
    by_messages = stream(messages=99, max_msgs=100)
    assert by_messages.fullness == 0.99


def test_readiness_turns_red_at_ninety_percent_and_past_the_lag_bound():
    assert alarms([stream(size=899, max_bytes=1000)], lag_max=10) == []
    assert alarms([stream(size=900, max_bytes=1000)], lag_max=10) == [
        "stream FACTS is 90% full (900 of 1,000 bytes); at 100% its publishes are refused"
    ]
    assert alarms([stream(consumer(pending=10))], lag_max=10) == []
    assert alarms([stream(consumer(pending=11))], lag_max=10) == [
        "consumer outcomes-facts of FACTS is 11 messages behind (OUTRIDER_INGEST_LAG_MAX is 10)"
    ]


def test_the_readiness_entry_names_each_stream_and_consumer():
    entry = streams_readiness_json([stream(consumer(pending=11), size=10, max_bytes=1000)], lag_max=10)
    assert entry == {
        "ready": False,
        "reasons": ["consumer outcomes-facts of FACTS is 11 messages behind (OUTRIDER_INGEST_LAG_MAX is 10)"],
        "fullness": {"FACTS": 0.01},
        "lag": {"FACTS/outcomes-facts": 11},
    }


def test_the_metrics_carry_each_figure_with_escaped_labels():
    text = stream_exposition(
        [stream(consumer('odd"name', pending=4, ack_pending=2), messages=6, size=512, max_bytes=1024)]
    )
    samples = dict(line.rsplit(" ", 1) for line in text.splitlines() if not line.startswith("#"))
    assert samples == {
        "outrider_streams_readable": "1",
        'outrider_stream_messages{stream="FACTS"}': "6",
        'outrider_stream_bytes{stream="FACTS"}': "512",
        'outrider_stream_max_bytes{stream="FACTS"}': "1024",
        'outrider_stream_fullness_ratio{stream="FACTS"}': "0.5",
        'outrider_consumer_pending_messages{stream="FACTS",consumer="odd\\"name"}': "4",
        'outrider_consumer_ack_pending_messages{stream="FACTS",consumer="odd\\"name"}': "2",
        'outrider_consumer_redelivered_messages{stream="FACTS",consumer="odd\\"name"}': "0",
    }
    assert "# TYPE outrider_stream_fullness_ratio gauge" in text
    unreadable = stream_exposition(None)
    assert [line for line in unreadable.splitlines() if not line.startswith("#")] == ["outrider_streams_readable 0"]


def test_a_new_stream_is_a_work_queue_with_every_backstop():
    for spec in STREAMS:
        config = new_stream(spec, LIMITS)
        assert config.retention == RetentionPolicy.WORK_QUEUE
        assert (config.discard, config.discard_new_per_subject) == (DiscardPolicy.NEW, True)
        assert (config.max_bytes, config.max_msgs_per_subject) == (2 * 2**20, 1000)
        assert config.max_msg_size == spec.max_message_bytes
    assert new_stream(FACTS, LIMITS).subjects == ["facts.booking", "facts.booking.*"]


def test_engines_publish_only_subjects_a_consumer_reads():
    assert not any(">" in subject or "*" in subject for subject in ENGINE_PUBLISHES)
    stored = {subject for spec in STREAMS for subject in spec.subjects}
    assert {subject for subject in ENGINE_PUBLISHES if subject.startswith("facts.")} <= stored


def old_facts(**changes) -> StreamConfig:
    base = StreamConfig(
        name="FACTS",
        subjects=["facts.>", "ops.manual"],
        retention=RetentionPolicy.LIMITS,
        storage=StorageType.FILE,
        max_age=86_400.0 * 30,
        max_bytes=10 * 2**30,
        discard=DiscardPolicy.NEW,
        num_replicas=3,
    )
    return replace(base, **changes)


def test_an_existing_stream_loses_retired_subjects_and_keeps_the_operators():
    assert stream_subjects(old_facts(), FACTS) == ["ops.manual", "facts.booking", "facts.booking.*"]
    # A migration stopped midway left the stream on its stand-in subject.
    assert stream_subjects(old_facts(subjects=["outrider.migrating.FACTS"]), FACTS) == [
        "facts.booking",
        "facts.booking.*",
    ]
    assert merged_stream(old_facts(subjects=["ops.manual", "facts.booking", "facts.booking.*"]), FACTS) is None


def test_a_migrated_stream_keeps_the_operators_limits_and_gains_the_backstops():
    config = migrated_stream(old_facts(), FACTS, LIMITS)
    assert config.retention == RetentionPolicy.WORK_QUEUE
    assert (config.max_age, config.max_bytes, config.num_replicas) == (86_400.0 * 30, 10 * 2**30, 3)
    assert (config.max_msgs_per_subject, config.discard_new_per_subject) == (1000, True)
    assert config.max_msg_size == FACTS.max_message_bytes
    assert config.subjects == ["ops.manual", "facts.booking", "facts.booking.*"]
    # One that drops its oldest when full gets no per-subject cap: it would
    # drop unconsumed events per subject too, without telling anyone.
    dropping = migrated_stream(old_facts(discard=DiscardPolicy.OLD), FACTS, LIMITS)
    assert (dropping.max_msgs_per_subject, dropping.discard_new_per_subject) == (-1, False)
    # A cap the operator chose stays.
    assert migrated_stream(old_facts(max_msgs_per_subject=50), FACTS, LIMITS).max_msgs_per_subject == 50


def test_a_consumer_is_as_far_behind_as_the_oldest_message_not_yet_delivered_to_it() -> None:
    now = datetime(2026, 12, 2, 12, tzinfo=UTC)
    behind = consumer(pending=3)
    stamps = [now - timedelta(seconds=40), now - timedelta(seconds=412.5)]
    assert seconds_behind(behind, stamps, now=now) == pytest.approx(412.5)
    assert seconds_behind(behind, [now - timedelta(seconds=7)], now=now) == pytest.approx(7)


def test_a_consumer_with_nothing_pending_or_nothing_found_is_not_behind() -> None:
    now = datetime(2026, 12, 2, 12, tzinfo=UTC)
    # Stamps without a backlog are messages taken meanwhile; a backlog without
    # stamps was taken between the two reads.
    assert seconds_behind(consumer(pending=0), [now - timedelta(hours=1)], now=now) == 0.0
    assert seconds_behind(consumer(pending=5), [], now=now) == 0.0


def test_a_server_clock_ahead_of_ours_reads_as_no_lag_rather_than_a_negative_one() -> None:
    now = datetime(2026, 12, 2, 12, tzinfo=UTC)
    assert seconds_behind(consumer(pending=1), [now + timedelta(seconds=2)], now=now) == 0.0
