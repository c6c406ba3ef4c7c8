"""A refused call reaches the engine as the class of its code or family,
with the code and details the server sent in the trailing metadata."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import grpc
import pytest
from grpc.aio import AioRpcError, Metadata

import services.common.errors as domain
from outrider.client.registry import SnapshotFormatError, UnknownThreshold
from outrider.errors import (
    CLASS_OF_CODE,
    FAMILY_OF_STATUS,
    LEASE_REFUSAL_OF_CODE,
    Conflict,
    DatabaseUnavailable,
    DecisionIdReused,
    HumanSourceConflict,
    HumanSourcesMisconfigured,
    InvalidArgument,
    LeaseRefused,
    LeaseUnavailable,
    NotFound,
    OutriderError,
    RateLimited,
    Unauthenticated,
    Unavailable,
    lease_refusal,
    refusal,
)
from outrider.nats_access import CredentialRefused
from outrider.rpc import ERROR_CODE_KEY, ERROR_DETAILS_KEY, refusal_metadata
from services.common.grpc_server import STATUS_OF_ERROR

ROOT = Path(__file__).resolve().parents[3]


def refused(status: grpc.StatusCode, message: str = "", *trailing: tuple[str, str | bytes]) -> AioRpcError:
    """An error as grpc.aio raises it, with the trailing metadata a server set."""
    return AioRpcError(status, Metadata(), Metadata(*trailing), details=message)


def sent(code: str, details: object = None) -> tuple[tuple[str, str], ...]:
    pairs = ((ERROR_CODE_KEY, code),)
    return pairs if details is None else (*pairs, (ERROR_DETAILS_KEY, json.dumps(details)))


def test_the_code_and_details_the_server_sent_are_read() -> None:
    error = refusal(
        refused(
            grpc.StatusCode.INVALID_ARGUMENT,
            "confidence: must be between 0 and 1",
            *sent("INVALID_FIELD", {"fields": {"confidence": "must be between 0 and 1"}}),
        )
    )
    assert type(error) is InvalidArgument
    assert (error.code, error.message, error.status) == (
        "INVALID_FIELD",
        "confidence: must be between 0 and 1",
        grpc.StatusCode.INVALID_ARGUMENT,
    )
    assert error.details == {"fields": {"confidence": "must be between 0 and 1"}}
    assert str(error) == "confidence: must be between 0 and 1"


def test_a_refusal_of_the_transport_is_named_by_its_status() -> None:
    error = refusal(refused(grpc.StatusCode.UNAVAILABLE, "failed to connect to all addresses"))
    assert type(error) is Unavailable
    assert (error.code, error.details, error.status) == ("UNAVAILABLE", {}, grpc.StatusCode.UNAVAILABLE)


def test_no_answer_in_time_is_unavailable() -> None:
    error = refusal(refused(grpc.StatusCode.DEADLINE_EXCEEDED, "Deadline Exceeded"))
    assert isinstance(error, Unavailable)
    assert (error.code, error.status) == ("DEADLINE_EXCEEDED", grpc.StatusCode.DEADLINE_EXCEEDED)


@pytest.mark.parametrize(
    ("status", "code", "kind", "family"),
    [
        (grpc.StatusCode.FAILED_PRECONDITION, "DECISION_ID_REUSED", DecisionIdReused, Conflict),
        (grpc.StatusCode.UNAVAILABLE, "DATABASE_UNAVAILABLE", DatabaseUnavailable, Unavailable),
        (grpc.StatusCode.NOT_FOUND, "DECISION_NOT_FOUND", NotFound, NotFound),
        (grpc.StatusCode.RESOURCE_EXHAUSTED, "RATE_LIMITED", RateLimited, RateLimited),
        (grpc.StatusCode.UNAUTHENTICATED, "UNAUTHENTICATED", Unauthenticated, Unauthenticated),
    ],
)
def test_a_code_with_a_class_of_its_own_is_still_its_family(
    status: grpc.StatusCode, code: str, kind: type[OutriderError], family: type[OutriderError]
) -> None:
    error = refusal(refused(status, "refused", *sent(code, {})))
    assert type(error) is kind and isinstance(error, family)
    assert error.code == code


def test_a_status_of_no_family_is_a_bare_outrider_error() -> None:
    error = refusal(refused(grpc.StatusCode.INTERNAL, "internal error", *sent("INTERNAL")))
    assert type(error) is OutriderError
    assert (error.code, error.status) == ("INTERNAL", grpc.StatusCode.INTERNAL)


@pytest.mark.parametrize("text", ["not json", "[1, 2]", '"a string"'])
def test_details_that_are_not_a_json_object_read_as_none(text: str) -> None:
    code, details = refusal_metadata(
        refused(grpc.StatusCode.NOT_FOUND, "", (ERROR_CODE_KEY, "SUBJECT_NOT_FOUND"), (ERROR_DETAILS_KEY, text))
    )
    assert (code, details) == ("SUBJECT_NOT_FOUND", {})


def test_a_lease_refused_for_misconfigured_sources_says_so() -> None:
    error = lease_refusal(
        "BK-1",
        refused(
            grpc.StatusCode.UNAVAILABLE,
            "lease refused: OUTRIDER_HUMAN_SOURCES['tracker:ops/bookings'].url must be an http(s) URL",
            *sent("HUMAN_SOURCES_MISCONFIGURED", {}),
        ),
    )
    assert type(error) is HumanSourcesMisconfigured
    assert isinstance(error, LeaseRefused) and isinstance(error, Unavailable)
    assert (error.subject_id, error.code, error.status) == (
        "BK-1",
        "HUMAN_SOURCES_MISCONFIGURED",
        grpc.StatusCode.UNAVAILABLE,
    )
    assert error.reason == error.message
    assert str(error) == f"lease of BK-1 refused (HUMAN_SOURCES_MISCONFIGURED): {error.message}"


@pytest.mark.parametrize(
    ("status", "code", "kind"),
    [
        (grpc.StatusCode.UNAVAILABLE, "HUMAN_SOURCE_TIMEOUT", LeaseUnavailable),
        (grpc.StatusCode.UNAVAILABLE, "HUMAN_SOURCE_UNAVAILABLE", LeaseUnavailable),
        (grpc.StatusCode.UNAVAILABLE, "DATABASE_UNAVAILABLE", LeaseUnavailable),
        (grpc.StatusCode.FAILED_PRECONDITION, "HUMAN_SOURCE_MALFORMED", HumanSourceConflict),
        (grpc.StatusCode.FAILED_PRECONDITION, "HUMAN_SOURCE_MISMATCH", HumanSourceConflict),
        (grpc.StatusCode.FAILED_PRECONDITION, "HUMAN_INPUT_INVALID", HumanSourceConflict),
        (grpc.StatusCode.FAILED_PRECONDITION, "HUMAN_INPUT_OWNED_ELSEWHERE", HumanSourceConflict),
        (grpc.StatusCode.NOT_FOUND, "SUBJECT_NOT_FOUND", LeaseRefused),
        (grpc.StatusCode.UNAUTHENTICATED, "UNAUTHENTICATED", LeaseRefused),
    ],
)
def test_every_refused_lease_is_a_lease_refused_of_its_kind(
    status: grpc.StatusCode, code: str, kind: type[LeaseRefused]
) -> None:
    details = {"subject_id": "BK-1", "source": "tracker:ops/bookings"}
    error = lease_refusal("BK-1", refused(status, "lease refused", *sent(code, details)))
    assert type(error) is kind
    assert (error.code, error.details, error.status) == (code, details, status)


def test_a_lease_the_transport_refused_is_unavailable_by_its_status() -> None:
    error = lease_refusal("BK-1", refused(grpc.StatusCode.DEADLINE_EXCEEDED, "Deadline Exceeded"))
    assert type(error) is LeaseUnavailable
    assert error.code == "DEADLINE_EXCEEDED"


def test_the_errors_the_sdk_finds_itself_are_outrider_errors_of_no_status() -> None:
    for error, code, also in [
        (SnapshotFormatError("format 2 is not 1"), "SNAPSHOT_UNREADABLE", ValueError),
        (UnknownThreshold("no threshold 'x'"), "UNKNOWN_THRESHOLD", LookupError),
        (CredentialRefused("NATS refused user 'engine'"), "NATS_CREDENTIALS_REFUSED", OutriderError),
    ]:
        assert isinstance(error, OutriderError) and isinstance(error, also)
        assert (error.code, error.status) == (code, None)
        assert str(error) == error.message


def test_the_families_are_the_servers_table() -> None:
    # One family per status the servers raise a domain error with, named as
    # the servers name it.
    assert {status: kind.__name__ for kind, status in STATUS_OF_ERROR.items()} == {
        status: kind.__name__ for status, kind in FAMILY_OF_STATUS.items() if status in STATUS_OF_ERROR.values()
    }


def raised_codes() -> dict[str, set[type[domain.DomainError]]]:
    """Every code the services raise a domain error with, and the error classes that carry it."""
    found: dict[str, set[type[domain.DomainError]]] = {}
    for path in (ROOT / "services").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
                continue
            kind = getattr(domain, node.func.id, None)
            for keyword in node.keywords:
                if (
                    keyword.arg == "code"
                    and isinstance(keyword.value, ast.Constant)
                    and isinstance(kind, type)
                    and issubclass(kind, domain.DomainError)
                ):
                    found.setdefault(keyword.value.value, set()).add(kind)
    return found


def server_status(kind: type[domain.DomainError]) -> grpc.StatusCode:
    return next(STATUS_OF_ERROR[base] for base in kind.__mro__ if base in STATUS_OF_ERROR)


@pytest.mark.parametrize("code", sorted({**CLASS_OF_CODE, **LEASE_REFUSAL_OF_CODE}))
def test_each_code_with_a_class_is_one_the_servers_raise_in_its_family(code: str) -> None:
    kinds = raised_codes().get(code)
    assert kinds, f"no service raises {code}"
    ours = {**CLASS_OF_CODE, **LEASE_REFUSAL_OF_CODE}[code]
    for kind in kinds:
        assert issubclass(ours, FAMILY_OF_STATUS[server_status(kind)])
