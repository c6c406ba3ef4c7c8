"""A failed search of a SearchPrecedents stream says what a FindSimilar call would."""

from __future__ import annotations

import json
import logging

import pytest

from services.common import errors
from services.common.grpc_server import answerable, status_of
from services.decisions.codec import precedent_refusal


@pytest.mark.parametrize(
    "error",
    [
        errors.InvalidArgument("k: must be between 1 and 100", field="k"),
        errors.NotFound("no such type", code="TYPE_NOT_FOUND", details={"type": "stall_response"}),
        errors.Unavailable("database unavailable"),
    ],
)
def test_a_domain_error_keeps_its_status_code_message_and_details(error):
    answer = precedent_refusal(42, answerable(error))
    assert answer.tag == 42
    assert answer.WhichOneof("answer") == "refused"
    refused = answer.refused
    assert (refused.status, refused.code, refused.message) == (status_of(error).name, error.code, error.message)
    assert json.loads(refused.details_json) == error.details


def test_an_unexpected_failure_is_logged_and_answered_without_its_text(caplog):
    with caplog.at_level(logging.ERROR):
        answer = precedent_refusal(7, answerable(RuntimeError("select * from decisions where subject = 'BK-9'")))
    refused = answer.refused
    assert (refused.status, refused.code, refused.message, refused.details_json) == (
        "INTERNAL",
        "INTERNAL",
        "internal error",
        b"",
    )
    assert "BK-9" not in answer.SerializeToString().decode(errors="replace")
    assert any(record.exc_info for record in caplog.records)
