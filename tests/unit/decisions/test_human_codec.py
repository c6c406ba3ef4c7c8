from datetime import UTC, datetime, timedelta

import pytest
from google.protobuf.timestamp_pb2 import Timestamp

from outrider.v1 import common_pb2, decisions_pb2
from services.common.errors import InvalidArgument
from services.common.paging import encode_cursor
from services.decisions.human.codec import (
    input_from_proto,
    lease_from_proto,
    listing_from_proto,
    page_to_proto,
    subject_from_proto,
)
from services.decisions.human.rules import HumanDecisionKind, HumanDecisionListing, HumanInput, PageKey, Subject
from services.decisions.human.store import HumanDecisionRow

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
        (pushed(external_id="m\x001"), "external_id"),
        (pushed(subject_id="booking\x00"), "subject_id"),
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
        # Found by the gRPC fuzzer: a NUL in an id or a plan was an INTERNAL answer.
        ({"id": "booking\x001"}, "id"),
        ({"id": "booking-1", "plan_ref": "plan\x00a"}, "plan_ref"),
        ({"id": "booking-1", "source": "tracker:ops/\x00"}, "source"),
        ({"id": "b" * 257}, "id"),
    ],
)
def test_a_bad_subject_is_refused_naming_the_field(request_fields, field):
    with pytest.raises(InvalidArgument) as refused:
        subject_from_proto(decisions_pb2.RegisterSubjectRequest(**request_fields))

    assert list(refused.value.fields) == [field]


def test_a_lease_and_a_listing_refuse_a_missing_subject_naming_it():
    with pytest.raises(InvalidArgument) as lease:
        lease_from_proto(decisions_pb2.LeaseSubjectRequest(subject_id=" "))
    with pytest.raises(InvalidArgument) as listing:
        listing_from_proto(decisions_pb2.ListHumanDecisionsRequest())

    assert list(lease.value.fields) == list(listing.value.fields) == ["subject_id"]


def test_a_listing_reads_its_cursor_and_limit():
    cursor = encode_cursor(NOW, 7)
    request = decisions_pb2.ListHumanDecisionsRequest(
        subject_id="booking-4411", page=common_pb2.PageRequest(cursor=cursor, limit=20)
    )

    assert listing_from_proto(request) == HumanDecisionListing("booking-4411", after=PageKey(NOW, 7), limit=20)


def test_a_page_carries_the_cursor_of_the_next_and_none_after_the_last():
    row = HumanDecisionRow(
        id="h-1",
        seq=7,
        subject_id="booking-4411",
        kind=HumanDecisionKind.OPERATOR_INSTRUCTION,
        body="hold the parcel at the hub",
        author="priya",
        provider="chat:ops/dispatch",
        external_id="m-1",
        written_at=NOW,
        observed_at=NOW,
        plan_ref=None,
        step=None,
    )

    more = page_to_proto([row], PageKey(NOW, 7))
    last = page_to_proto([row], None)

    assert [item.id for item in more.items] == ["h-1"] and more.next_cursor == encode_cursor(NOW, 7)
    assert last.next_cursor == ""
