"""Which stored rejection samples name a subject being erased."""

from __future__ import annotations

import pytest

from services.outcomes.rules.erasure import RejectionSample, names_subject, samples_naming


@pytest.mark.parametrize(
    "payload",
    [
        '{"subject_id": "BK-1042", "at": "2026-09-29T10:00:00+05:30", "status": 7}',
        '{"subject_id":"BK-1042","rider_phone":"+91 98450 12345"',
        '{"at": "2026-09-29T10:00:00+05:30", "subject_id" :  " BK-1042 ", "status": "x"}',
        '{"note": "cut short", "subject_id": "BK-1042"…',
    ],
)
def test_a_sample_whose_subject_is_the_one_erased_names_it(payload):
    assert names_subject(payload, "BK-1042")


@pytest.mark.parametrize(
    "payload",
    [
        '{"subject_id": "BK-10420", "status": 7}',
        '{"subject_id": "XBK-1042", "status": 7}',
        '{"subject_id": "BK-1043", "note": "see BK-1042"}',
        '{"at": "2026-09-29T10:00:00+05:30", "status"',
        "not json at all",
        "",
    ],
)
def test_a_sample_about_another_subject_or_none_does_not(payload):
    assert not names_subject(payload, "BK-1042")


def test_a_numeric_booking_id_matches_as_a_number_or_a_string():
    assert names_subject('{"subject_id": 1042, "status": []}', "1042")
    assert names_subject('{"subject_id": "1042"}', "1042")
    assert not names_subject('{"subject_id": 10421}', "1042")
    assert not names_subject('{"subject_id": 1042.5}', "1042")


def test_an_id_with_characters_json_escapes_is_found_as_json_spells_it():
    assert names_subject('{"subject_id": "a\\"b"}', 'a"b')


def test_the_fields_whose_sample_names_the_subject_come_back_sorted():
    samples = [
        RejectionSample("status", "expected a non-empty string", '{"subject_id": "BK-1042", "status": 7}'),
        RejectionSample("at", "'x' is not an RFC 3339 timestamp", '{"subject_id": "BK-9", "at": "x"}'),
        RejectionSample("cancelled", "expected true or false", '{"subject_id": "BK-1042", "cancelled": 1}'),
    ]
    assert samples_naming(samples, "BK-1042") == ["cancelled", "status"]
