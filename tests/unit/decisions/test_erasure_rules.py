"""Erasure rules: what an erasure request must say, and the audit row it leaves."""

from __future__ import annotations

import uuid

import pytest

from services.decisions.rules import (
    MAX_ERASURE_REASON_CHARS,
    Erased,
    Erasure,
    InvalidDecision,
    erasure_audit,
    erasure_request,
)


def test_a_request_names_the_subject_twice_and_says_why():
    request = erasure_request(subject_id="BK-1042", confirm="BK-1042", reason="customer asked, ticket 88")
    assert (request.subject_id, request.reason) == ("BK-1042", "customer asked, ticket 88")


@pytest.mark.parametrize(
    ("confirm", "code", "problem"),
    [
        ("", "CONFIRMATION_REQUIRED", "type BK-1042 to erase its personal data"),
        ("bk-1042", "CONFIRMATION_MISMATCH", "must be exactly BK-1042"),
        ("BK-1042 ", "CONFIRMATION_MISMATCH", "must be exactly BK-1042"),
        ("BK-10", "CONFIRMATION_MISMATCH", "must be exactly BK-1042"),
    ],
)
def test_the_confirmation_is_an_exact_typed_match(confirm, code, problem):
    with pytest.raises(InvalidDecision) as refused:
        erasure_request(subject_id="BK-1042", confirm=confirm, reason="asked")
    assert refused.value.code == code
    assert refused.value.fields == {"confirm": problem}


@pytest.mark.parametrize("reason", ["", "   ", "x" * (MAX_ERASURE_REASON_CHARS + 1), "a\x00b"])
def test_a_reason_is_required_and_bounded(reason):
    with pytest.raises(InvalidDecision) as refused:
        erasure_request(subject_id="BK-1042", confirm="BK-1042", reason=reason)
    assert set(refused.value.fields) == {"reason"}


@pytest.mark.parametrize("subject_id", ["", "  ", " BK-1042", "BK-1042\n", "x" * 257, "a\x00b"])
def test_the_subject_is_named_exactly_as_stored(subject_id):
    # Trimming would erase a subject nobody named: " BK-1" is not "BK-1".
    with pytest.raises(InvalidDecision) as refused:
        erasure_request(subject_id=subject_id, confirm=subject_id, reason="asked")
    assert set(refused.value.fields) == {"subject_id"}


def test_the_audit_row_says_what_was_cleared_and_why_under_the_subject():
    erasure = Erasure(
        id=uuid.UUID(int=7),
        subject_id="BK-1042",
        reason="customer asked",
        erased=Erased(decisions=3, human_inputs=1, facts=2),
    )
    entry = erasure_audit(erasure)
    assert (entry.request_id, entry.entity, entry.entity_id, entry.field) == (
        uuid.UUID(int=7),
        "subject",
        "BK-1042",
        "personal_data",
    )
    assert entry.new == {"erased": {"decisions": 3, "human_inputs": 1, "facts": 2}, "reason": "customer asked"}
