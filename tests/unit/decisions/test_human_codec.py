from datetime import UTC, datetime, timedelta

import pytest
from google.protobuf.timestamp_pb2 import Timestamp

from outrider.v1 import decisions_pb2
from services.common.errors import InvalidArgument
from services.decisions.human.codec import input_from_proto, subject_from_proto
from services.decisions.human.rules import HumanInput, Subject

NOW = datetime(2026, 9, 29, 15, 30, tzinfo=UTC)


def stamp(value: datetime) -> Timestamp:
    ts = Timestamp()
    ts.FromDatetime(value)
    return ts


def pushed(**changes) -> decisions_pb2.RecordHumanInputRequest:
    fields = {
        "provider": "chat:ops/dispatch",
        "external_id": "m-1",
        "subject_id": "booking-4411",
        "author": "priya",
        "at": stamp(NOW - timedelta(minutes=3)),
        "body": "hold the parcel at the hub",
    }
    fields.update(changes)
    return decisions_pb2.RecordHumanInputRequest(**fields)


def test_a_pushed_input_parses_into_the_domain_input():
    assert input_from_proto(pushed(), now=NOW) == HumanInput(
        provider="chat:ops/dispatch",
        external_id="m-1",
        subject_id="booking-4411",
        author="priya",
        written_at=NOW - timedelta(minutes=3),
        body="hold the parcel at the hub",
    )


def without_at() -> decisions_pb2.RecordHumanInputRequest:
    request = pushed()
    request.ClearField("at")
    return request


@pytest.mark.parametrize(
    ("message", "field"),
    [
        (pushed(provider=""), "provider"),
        (pushed(provider="dispatch"), "provider"),
        (pushed(external_id="  "), "external_id"),
        (pushed(external_id=" m-1"), "external_id"),
        (pushed(subject_id=""), "subject_id"),
        (without_at(), "at"),
        (pushed(at=stamp(NOW + timedelta(minutes=5))), "at"),
        (pushed(body=" \n "), "body"),
    ],
)
def test_a_bad_pushed_input_is_refused_naming_the_field(message, field):
    with pytest.raises(InvalidArgument) as refused:
        input_from_proto(message, now=NOW)

    assert list(refused.value.fields) == [field]


def test_a_subject_without_source_or_plan_has_neither():
    assert subject_from_proto(decisions_pb2.RegisterSubjectRequest(id="booking-1")) == Subject(id="booking-1")
    assert subject_from_proto(
        decisions_pb2.RegisterSubjectRequest(id="booking-1", source="tracker:ops/bookings", plan_ref="plan-a")
    ) == Subject(id="booking-1", source="tracker:ops/bookings", plan_ref="plan-a")


@pytest.mark.parametrize(
    ("request_fields", "field"),
    [
        ({"id": ""}, "id"),
        ({"id": "booking-1", "source": "bookings"}, "source"),
        ({"id": "booking-1", "plan_ref": " plan-a"}, "plan_ref"),
    ],
)
def test_a_bad_subject_is_refused_naming_the_field(request_fields, field):
    with pytest.raises(InvalidArgument) as refused:
        subject_from_proto(decisions_pb2.RegisterSubjectRequest(**request_fields))

    assert list(refused.value.fields) == [field]
