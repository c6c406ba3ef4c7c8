import json
from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from services.outcomes.rules.facts import (
    FACT_FIELDS,
    MAX_SUBJECT_ID,
    BookingFactsEvent,
    MalformedFacts,
    Observation,
    SubjectFacts,
    check_storable,
    decode_booking_event,
    merge_all,
    parse_booking_event,
    parse_timestamp,
)
from services.outcomes.rules.judging import BookingFacts

T0 = datetime(2024, 5, 1, 10, 0, tzinfo=UTC)
IST = timezone(timedelta(hours=5, minutes=30))


def minutes(n: int) -> datetime:
    return T0 + timedelta(minutes=n)


def event(at: datetime, subject_id: str = "b-1", **facts) -> BookingFactsEvent:
    return BookingFactsEvent(subject_id=subject_id, at=at, **facts)


# ─── parsing ────────────────────────────────────────────────────────────────


def test_a_full_event_parses_into_utc_facts():
    parsed = parse_booking_event(
        {
            "subject_id": "b-1",
            "at": "2024-05-01T15:30:00+05:30",
            "status": "delivered",
            "assigned_at": "2024-05-01T09:00:00Z",
            "delivered_at": "2024-05-01T09:55:00.123456789Z",
            "sla_due_at": "2024-05-01T06:00:00-04:00",
            "cancelled": False,
        }
    )
    assert parsed == BookingFactsEvent(
        subject_id="b-1",
        at=T0,
        status="delivered",
        assigned_at=minutes(-60),
        delivered_at=minutes(-5) + timedelta(microseconds=123456),
        sla_due_at=T0,
        cancelled=False,
    )
    assert parsed.at.tzinfo is UTC


def test_an_integer_subject_id_is_kept_as_text():
    assert parse_booking_event({"subject_id": 42, "at": "2024-05-01T10:00:00Z", "cancelled": True}).subject_id == "42"


def test_unknown_keys_are_ignored_and_nulls_say_nothing():
    parsed = parse_booking_event(
        {
            "subject_id": "b-1",
            "at": "2024-05-01T10:00:00Z",
            "status": "assigned",
            "rider_id": 7,
            "delivered_at": None,
            "cancelled": None,
        }
    )
    assert parsed == event(T0, status="assigned")
    assert parsed.observations() == {"status": Observation("assigned", T0)}


def test_lower_case_separators_are_rfc3339_too():
    assert parse_timestamp("at", "2024-05-01t10:00:00z") == T0


@pytest.mark.parametrize("field", ["at", "assigned_at", "delivered_at", "sla_due_at"])
def test_a_naive_timestamp_is_refused_naming_its_field(field):
    payload = {"subject_id": "b-1", "at": "2024-05-01T10:00:00Z", "status": "x"}
    payload[field] = "2024-05-01T10:00:00"
    with pytest.raises(MalformedFacts) as caught:
        parse_booking_event(payload)
    assert caught.value.field == field
    assert "offset" in str(caught.value)


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"subject_id": None}, "subject_id"),
        ({"subject_id": "  "}, "subject_id"),
        ({"subject_id": True}, "subject_id"),
        ({"subject_id": ["b-1"]}, "subject_id"),
        ({"at": 1714557600}, "at"),
        ({"at": "2024-05-01"}, "at"),
        ({"at": "yesterday"}, "at"),
        ({"at": "2024-02-30T10:00:00Z"}, "at"),
        ({"status": 3}, "status"),
        ({"status": ""}, "status"),
        ({"cancelled": "true"}, "cancelled"),
        ({"cancelled": 1}, "cancelled"),
        ({"delivered_at": "20240501T100000Z"}, "delivered_at"),
        ({"sla_due_at": "2024-05-01T10:00:00+0530"}, "sla_due_at"),
    ],
)
def test_a_bad_field_is_named(change, field):
    payload = {"subject_id": "b-1", "at": "2024-05-01T10:00:00Z", "status": "assigned", **change}
    with pytest.raises(MalformedFacts) as caught:
        parse_booking_event(payload)
    assert caught.value.field == field
    assert str(caught.value).startswith(f"{field}:")


@pytest.mark.parametrize("missing", ["subject_id", "at"])
def test_required_fields_are_named_when_missing(missing):
    payload = {"subject_id": "b-1", "at": "2024-05-01T10:00:00Z", "status": "assigned"}
    del payload[missing]
    with pytest.raises(MalformedFacts) as caught:
        parse_booking_event(payload)
    assert caught.value.field == missing


def test_an_event_with_no_facts_is_refused():
    with pytest.raises(MalformedFacts) as caught:
        parse_booking_event({"subject_id": "b-1", "at": "2024-05-01T10:00:00Z", "delivered": True})
    assert caught.value.field == "payload"


@pytest.mark.parametrize("payload", [[], "facts", None])
def test_a_payload_that_is_not_an_object_is_refused(payload):
    with pytest.raises(MalformedFacts) as caught:
        parse_booking_event(payload)
    assert caught.value.field == "payload"


def test_malformed_facts_is_a_value_error():
    assert issubclass(MalformedFacts, ValueError)


def test_decode_reads_a_message_body():
    body = b'{"subject_id": "b-1", "at": "2024-05-01T10:00:00Z", "cancelled": true}'
    assert decode_booking_event(body) == event(T0, cancelled=True)


@pytest.mark.parametrize("body", [b"{not json", b"\xff\xfe", ""])
def test_decode_refuses_what_is_not_json(body):
    with pytest.raises(MalformedFacts) as caught:
        decode_booking_event(body)
    assert caught.value.field == "payload"


def test_an_event_built_directly_is_normalised_and_checked():
    assert event(T0.astimezone(IST), delivered_at=minutes(5).astimezone(IST)) == event(T0, delivered_at=minutes(5))
    with pytest.raises(MalformedFacts) as caught:
        event(T0, delivered_at=datetime(2024, 5, 1, 10, 0))
    assert caught.value.field == "delivered_at"


# ─── merging ────────────────────────────────────────────────────────────────


def test_the_newest_observation_of_each_field_wins():
    state = merge_all(
        SubjectFacts("b-1"),
        [event(minutes(10), status="delivered"), event(minutes(5), status="assigned")],
    )
    assert state.status == Observation("delivered", minutes(10))


def test_fields_are_merged_independently():
    state = merge_all(
        SubjectFacts("b-1"),
        [
            event(minutes(10), status="in_transit"),
            event(minutes(5), assigned_at=minutes(4), status="assigned"),
            event(minutes(1), sla_due_at=minutes(300)),
        ],
    )
    assert state.to_booking_facts() == BookingFacts(
        status="in_transit", assigned_at=minutes(4), sla_due_at=minutes(300)
    )


def test_a_newer_observation_can_retract_a_fact():
    state = merge_all(SubjectFacts("b-1"), [event(minutes(1), cancelled=True), event(minutes(2), cancelled=False)])
    assert state.to_booking_facts().cancelled is False


def test_a_cancellation_wins_a_tie_whichever_arrives_first():
    yes, no = event(T0, cancelled=True), event(T0, cancelled=False)
    assert merge_all(SubjectFacts("b-1"), [yes, no]) == merge_all(SubjectFacts("b-1"), [no, yes])
    assert merge_all(SubjectFacts("b-1"), [no, yes]).cancelled == Observation(True, T0)


def test_merging_a_stale_event_returns_the_same_state():
    state = SubjectFacts("b-1").merge(event(minutes(10), status="delivered"))
    assert state.merge(event(minutes(1), status="assigned")) is state


def test_an_event_for_another_subject_is_refused():
    with pytest.raises(ValueError, match="b-2"):
        SubjectFacts("b-1").merge(event(T0, subject_id="b-2", status="assigned"))


def test_an_empty_state_reads_as_nothing_known():
    assert SubjectFacts("b-1").to_booking_facts() == BookingFacts()
    assert SubjectFacts("b-1").to_json() == {}


def test_the_state_field_names_are_the_fact_fields():
    assert set(SubjectFacts.__dataclass_fields__) - {"subject_id"} == set(FACT_FIELDS)
    assert set(BookingFacts.__dataclass_fields__) == set(FACT_FIELDS)


# ─── storing ────────────────────────────────────────────────────────────────


def test_the_state_is_stored_as_field_value_and_at():
    state = merge_all(
        SubjectFacts("b-1"),
        [event(minutes(5), status="delivered", delivered_at=minutes(4)), event(minutes(1), cancelled=False)],
    )
    document = state.to_json()
    assert document == {
        "status": {"value": "delivered", "at": "2024-05-01T10:05:00+00:00"},
        "delivered_at": {"value": "2024-05-01T10:04:00+00:00", "at": "2024-05-01T10:05:00+00:00"},
        "cancelled": {"value": False, "at": "2024-05-01T10:01:00+00:00"},
    }
    assert SubjectFacts.from_json("b-1", json.loads(json.dumps(document))) == state


@pytest.mark.parametrize(
    ("document", "field"),
    [
        ({"rider": {"value": "x", "at": "2024-05-01T10:00:00Z"}}, "rider"),
        ({"status": "delivered"}, "status"),
        ({"status": {"value": "delivered"}}, "status"),
        ({"status": {"value": None, "at": "2024-05-01T10:00:00Z"}}, "status"),
        ({"status": {"value": "delivered", "at": "2024-05-01T10:00:00"}}, "status.at"),
        ({"cancelled": {"value": "no", "at": "2024-05-01T10:00:00Z"}}, "cancelled"),
        ({"delivered_at": {"value": "soon", "at": "2024-05-01T10:00:00Z"}}, "delivered_at"),
    ],
)
def test_a_corrupt_stored_state_is_refused_naming_the_field(document, field):
    with pytest.raises(MalformedFacts) as caught:
        SubjectFacts.from_json("b-1", document)
    assert caught.value.field == field


# ─── order independence ─────────────────────────────────────────────────────

instants = st.builds(
    lambda minute, zone: minutes(minute).astimezone(zone),
    st.integers(min_value=0, max_value=4),
    st.sampled_from([UTC, IST, timezone(timedelta(hours=-4))]),
)
events = st.builds(
    BookingFactsEvent,
    subject_id=st.just("b-1"),
    at=instants,
    status=st.none() | st.sampled_from(["created", "assigned", "in_transit", "delivered"]),
    assigned_at=st.none() | instants,
    delivered_at=st.none() | instants,
    sla_due_at=st.none() | instants,
    cancelled=st.none() | st.booleans(),
).filter(lambda built: built.observations())


@settings(max_examples=150, deadline=None)
@given(st.lists(events, max_size=8).flatmap(lambda batch: st.tuples(st.just(batch), st.permutations(batch))))
def test_any_arrival_order_merges_to_the_same_state(batches):
    original, shuffled = batches
    first = merge_all(SubjectFacts("b-1"), original)
    second = merge_all(SubjectFacts("b-1"), shuffled)
    assert first == second
    assert first.to_json() == second.to_json()


@settings(max_examples=150, deadline=None)
@given(st.lists(events, min_size=1, max_size=8), st.data())
def test_redelivering_events_changes_nothing(batch, data):
    repeats = data.draw(st.lists(st.sampled_from(batch), max_size=8))
    once = merge_all(SubjectFacts("b-1"), batch)
    assert merge_all(once, repeats) == once
    assert merge_all(SubjectFacts("b-1"), batch + repeats + batch) == once


@settings(max_examples=100, deadline=None)
@given(st.lists(events, max_size=6))
def test_the_stored_form_reads_back_to_the_same_state(batch):
    state = merge_all(SubjectFacts("b-1"), batch)
    assert SubjectFacts.from_json("b-1", json.loads(json.dumps(state.to_json()))) == state


@pytest.mark.parametrize(
    ("event", "field"),
    [
        (BookingFactsEvent(subject_id="b" * (MAX_SUBJECT_ID + 1), at=T0, status="x"), "subject_id"),
        (BookingFactsEvent(subject_id="b\x001", at=T0, status="x"), "subject_id"),
        (BookingFactsEvent(subject_id="b-1", at=T0, status="on\x00way"), "status"),
        (BookingFactsEvent(subject_id="b-1", at=T0, status="\ud800"), "status"),
    ],
)
def test_facts_postgres_cannot_store_are_malformed(event, field):
    with pytest.raises(MalformedFacts) as caught:
        check_storable(event)
    assert caught.value.field == field


def test_storable_facts_pass_unchanged():
    event = BookingFactsEvent(subject_id="b" * MAX_SUBJECT_ID, at=T0, status="délivré ✓")
    assert check_storable(event) is event
