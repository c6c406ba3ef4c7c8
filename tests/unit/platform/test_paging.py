"""Keyset paging, shared by every listing."""

from __future__ import annotations

import base64
import json
import uuid
from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from services.common.errors import FieldError
from services.common.paging import (
    MAX_LIMIT,
    decode_cursor,
    encode_cursor,
    instant_and_uuid,
    one_page,
    page_limit,
)
from services.decisions.human.rules import PageKey as HumanPageKey
from services.decisions.queries import page_key
from services.registry.codec import audit_position

IST = timezone(timedelta(hours=5, minutes=30))


ZONES = st.sampled_from([UTC, IST, timezone(timedelta(hours=-7)), timezone(timedelta(hours=5, minutes=45))])


@given(st.datetimes(timezones=ZONES), st.uuids())
def test_a_time_and_id_cursor_round_trips_to_the_microsecond_and_the_instant(moment: datetime, ident: uuid.UUID):
    back = decode_cursor(encode_cursor(moment, ident), instant_and_uuid)
    assert back == (moment, ident) and back[0].utcoffset() == moment.utcoffset()


def test_every_listing_reads_its_own_cursor_back() -> None:
    moment = datetime(2026, 9, 29, 20, 57, 3, 120045, tzinfo=IST)
    ident = uuid.uuid4()
    assert decode_cursor(encode_cursor(moment, ident), page_key).id == ident
    assert decode_cursor(encode_cursor(moment, 7), HumanPageKey.from_parts) == HumanPageKey(moment, 7)
    assert decode_cursor(encode_cursor(12345), audit_position) == 12345


def forged(*parts: object) -> str:
    return base64.urlsafe_b64encode(json.dumps(list(parts)).encode()).decode()


@pytest.mark.parametrize(
    "cursor",
    [
        "%%%",
        "bm90LWEtY3Vyc29y",
        forged("2026-09-29T20:57:00", str(uuid.uuid4())),
        forged("x", "y"),
        forged(1, 2),
        forged("2026-09-29T20:57:00+05:30"),
        base64.urlsafe_b64encode(b'{"a": 1}').decode(),
    ],
)
def test_a_cursor_not_issued_here_is_refused_by_name(cursor: str) -> None:
    with pytest.raises(FieldError) as caught:
        decode_cursor(cursor, instant_and_uuid, field="after_cursor")
    assert caught.value.fields == {"after_cursor": "is not a cursor this service issued"}


@pytest.mark.parametrize("cursor", [forged("0"), forged("-4"), forged("x")])
def test_an_audit_cursor_names_a_real_row(cursor: str) -> None:
    with pytest.raises(FieldError):
        decode_cursor(cursor, audit_position)


def test_no_cursor_means_the_first_page() -> None:
    assert decode_cursor("", instant_and_uuid) is None


def test_the_limit_defaults_and_refuses_out_of_range() -> None:
    assert page_limit(0) == 50 and page_limit(MAX_LIMIT) == MAX_LIMIT
    assert page_limit(0, default=500, maximum=1000) == 500
    for bad in (MAX_LIMIT + 1, -1):
        with pytest.raises(FieldError) as caught:
            page_limit(bad)
        assert list(caught.value.fields) == ["limit"]


def test_one_row_more_than_the_limit_means_another_page() -> None:
    rows = [(n, f"r{n}") for n in range(4)]
    page, cursor = one_page(rows, 3, lambda row: (row[0],))
    assert page == rows[:3] and decode_cursor(cursor, lambda parts: int(parts[0])) == 2
    assert one_page(rows[:3], 3, lambda row: (row[0],)) == (rows[:3], "")
    assert one_page([], 3, lambda row: (row[0],)) == ([], "")
