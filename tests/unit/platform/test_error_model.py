"""One error model: domain errors carry no transport; one table maps them to
gRPC status, one maps status to HTTP, and together they give DESIGN.md §3's
codes for every error the rules can raise."""

from __future__ import annotations

import importlib
import json
import pkgutil
from pathlib import Path

import grpc
import pytest

import services
from gateway.errors import GRPC_TO_HTTP, field_path, from_rpc_error, validation_fields
from outrider.rpc import ERROR_CODE_KEY, ERROR_DETAILS_KEY
from services.common import errors
from services.common.clients import ContextCallError
from services.common.grpc_server import (
    STATUS_OF_ERROR,
    error_metadata,
    status_of,
    upstream_error,
)

# DESIGN.md §3, the HTTP answer of each kind of refusal.
HTTP_OF_ERROR = {
    errors.InvalidArgument: 422,
    errors.NotFound: 404,
    errors.AlreadyExists: 409,
    errors.Conflict: 409,
    errors.PermissionDenied: 403,
    errors.Unauthenticated: 401,
    errors.RateLimited: 429,
    errors.Unavailable: 503,
}


def _every_module_loaded() -> None:
    # Rules define their own errors; load every service module so each
    # subclass is found, not only the ones some earlier test imported.
    for module in pkgutil.walk_packages(services.__path__, "services."):
        if ".migrations" not in module.name:
            importlib.import_module(module.name)


def _subclasses(kind: type) -> set[type]:
    found = set()
    for sub in kind.__subclasses__():
        found |= {sub, *_subclasses(sub)}
    return found


_every_module_loaded()
EVERY_ERROR = sorted(
    (kind for kind in _subclasses(errors.DomainError) if any(base in HTTP_OF_ERROR for base in kind.__mro__)),
    key=lambda kind: f"{kind.__module__}.{kind.__qualname__}",
)


def test_only_abstract_bases_have_no_status() -> None:
    # A base that only groups a context's errors is never raised itself.
    unmapped = {kind.__name__ for kind in _subclasses(errors.DomainError)} - {kind.__name__ for kind in EVERY_ERROR}
    assert unmapped == {"RegistryRuleError"}


def test_the_domain_errors_module_knows_no_transport() -> None:
    source = Path(errors.__file__).read_text() if errors.__file__ else ""
    assert "import grpc" not in source and "fastapi" not in source


def test_every_error_kind_is_found() -> None:
    names = {kind.__name__ for kind in EVERY_ERROR}
    assert {
        "InvalidDecision",
        "MalformedFacts",
        "InvalidRegistryChange",
        "PlaygroundInputError",
        "MalformedTelemetry",
        "UpstreamUnavailable",
    } <= names


def _sample(kind: type[errors.DomainError]) -> errors.DomainError:
    if issubclass(kind, errors.UpstreamUnavailable):
        return kind("registry")
    if issubclass(kind, errors.FieldError):
        return kind("a.field", "is wrong")
    if issubclass(kind, errors.InvalidArgument):
        return kind("refused", field="a.field")
    return kind("refused", code=None, details={})


@pytest.mark.parametrize("kind", EVERY_ERROR, ids=lambda kind: kind.__name__)
def test_every_domain_error_reaches_its_design_status(kind: type[errors.DomainError]) -> None:
    error = _sample(kind)
    expected = next(HTTP_OF_ERROR[base] for base in kind.__mro__ if base in HTTP_OF_ERROR)
    assert GRPC_TO_HTTP[status_of(error)] == expected
    assert error.code.isupper() and " " not in error.code


@pytest.mark.parametrize("kind", EVERY_ERROR, ids=lambda kind: kind.__name__)
def test_a_refused_input_names_its_fields(kind: type[errors.DomainError]) -> None:
    error = _sample(kind)
    if isinstance(error, errors.InvalidArgument):
        assert error.details["fields"] == error.fields == {"a.field": error.fields["a.field"]}


def test_an_unlisted_error_is_internal() -> None:
    assert status_of(errors.DomainError("x")) == grpc.StatusCode.INTERNAL


@pytest.mark.parametrize(("status", "http"), sorted(GRPC_TO_HTTP.items(), key=lambda pair: pair[0].value[0]))
def test_every_status_maps_to_http_through_the_envelope(status: grpc.StatusCode, http: int) -> None:
    rpc_error = grpc.aio.AioRpcError(
        status,
        grpc.aio.Metadata(),
        grpc.aio.Metadata((ERROR_CODE_KEY, "SOME_CODE"), (ERROR_DETAILS_KEY, "{}")),
        details="the context's own words",
    )
    answer = from_rpc_error(rpc_error, "decisions")
    assert answer.status == http
    assert (answer.code, answer.message) == ("SOME_CODE", "the context's own words")
    if http == 503:
        # The context answered that something behind it is down: its code, and which context said so.
        assert answer.details == {"context": "decisions"}
    if http == 422:
        assert answer.details == {"fields": {}}


@pytest.mark.parametrize("status", [grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED])
def test_a_context_that_never_answered_is_named_without_its_address(status: grpc.StatusCode) -> None:
    transport = grpc.aio.AioRpcError(
        status,
        grpc.aio.Metadata(),
        grpc.aio.Metadata(),
        details="failed to connect to all addresses; last error: ipv4:10.0.0.7:50052",
    )
    answer = from_rpc_error(transport, "decisions")
    assert (answer.status, answer.code, answer.details) == (503, "UPSTREAM_UNAVAILABLE", {"context": "decisions"})
    assert "10.0.0.7" not in answer.message and "decisions" in answer.message


def test_an_unknown_status_is_a_plain_500() -> None:
    rpc_error = grpc.aio.AioRpcError(
        grpc.StatusCode.DATA_LOSS, grpc.aio.Metadata(), grpc.aio.Metadata(), details="select * from secrets"
    )
    answer = from_rpc_error(rpc_error, "outcomes")
    assert (answer.status, answer.code) == (500, "INTERNAL") and "secrets" not in answer.message


@pytest.mark.parametrize("kind", sorted(STATUS_OF_ERROR, key=lambda kind: kind.__name__), ids=lambda k: k.__name__)
def test_a_refusal_from_another_context_passes_on_unchanged(kind: type[errors.DomainError]) -> None:
    original = kind("agent X does not exist", code="AGENT_NOT_FOUND", details={"fields": {"agent_id": "unknown"}})
    metadata = grpc.aio.Metadata(*error_metadata(original))
    failure = ContextCallError(
        "registry", grpc.aio.AioRpcError(status_of(original), grpc.aio.Metadata(), metadata, details=original.message)
    )
    upgraded = upstream_error(failure)
    assert upgraded is not None
    if kind is errors.Unavailable:
        assert isinstance(upgraded, errors.UpstreamUnavailable) and upgraded.details == {"context": "registry"}
        return
    assert type(upgraded) is kind
    assert (upgraded.code, upgraded.message, upgraded.details) == (original.code, original.message, original.details)


def test_a_context_that_does_not_answer_is_named() -> None:
    silent = ContextCallError(
        "decisions",
        grpc.aio.AioRpcError(
            grpc.StatusCode.DEADLINE_EXCEEDED, grpc.aio.Metadata(), grpc.aio.Metadata(), details="deadline"
        ),
    )
    upgraded = upstream_error(silent)
    assert isinstance(upgraded, errors.UpstreamUnavailable)
    assert status_of(upgraded) == grpc.StatusCode.UNAVAILABLE and "decisions" in upgraded.message


def test_metadata_carries_code_and_details_as_json() -> None:
    pairs = dict(error_metadata(errors.InvalidArgument("bad", field="k")))
    assert pairs[ERROR_CODE_KEY] == "INVALID_ARGUMENT"
    assert json.loads(pairs[ERROR_DETAILS_KEY]) == {"fields": {"k": "bad"}}


@pytest.mark.parametrize(
    ("location", "path"),
    [
        (("body", "decision", "confidence"), "decision.confidence"),
        (("body", "turns", 2, "role"), "turns[2].role"),
        (("body", "thresholds", "stallMinutes", "[key]"), "thresholds.stallMinutes"),
        (("query", "limit"), "limit"),
        (("body",), "body"),
        (("body", 17), "body[17]"),
    ],
)
def test_validation_locations_become_field_paths(location: tuple, path: str) -> None:
    assert field_path(location) == path


def test_undecodable_json_blames_the_body() -> None:
    assert validation_fields([{"type": "json_invalid", "loc": ("body", 17), "msg": "JSON decode error"}]) == {
        "body": "JSON decode error"
    }
