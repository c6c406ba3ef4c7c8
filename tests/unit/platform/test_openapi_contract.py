"""The OpenAPI document is the REST contract: every body in and out is typed,
and every error answer is the one envelope.

A client generated from the document (the console's is) must neither send
what the gateway refuses for its shape nor read a field the gateway does not
promise; an untyped body or response would let either happen unnoticed.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from gateway.app import create_app
from services.common.settings import load

# Answers that are not JSON by design (the snapshot's 304, Prometheus text),
# and readiness, whose 503 is its own report of which context is down.
# An export is a file, CSV or JSON Lines, streamed page by page.
NON_JSON = {
    ("get", "/metrics", "200"),
    ("get", "/internal/ai/registry", "304"),
    ("get", "/readyz", "503"),
    ("get", "/admin/ai/decisions/export", "200"),
    ("get", "/admin/ai/runs/export", "200"),
    ("get", "/admin/ai/audit/export", "200"),
}
# OTLP/HTTP's receiver answers every refusal with a google.rpc.Status, as the
# OTLP specification requires: an exporter parses that, never our envelope.
OTLP_REFUSALS = {("post", "/v1/traces", status) for status in ("400", "401", "413", "415", "503")}


@pytest.fixture(scope="module")
def document(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    settings = load(
        {
            "OUTRIDER_DATA_DIR": str(tmp_path_factory.mktemp("openapi")),
            "OUTRIDER_JWT_SECRET": "j" * 40,
            "OUTRIDER_INTERNAL_KEY": "k" * 40,
            "OUTRIDER_EMBEDDING_DIM": "16",
        }
    )
    return create_app(settings).openapi()


def operations(document: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for path, item in document["paths"].items():
        for method, operation in item.items():
            yield method, path, operation


def resolve(document: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[1]
        schema = document["components"]["schemas"][name]
    return schema


def is_typed(document: dict[str, Any], schema: dict[str, Any]) -> bool:
    """A schema that says what the value is: a type, a reference, or typed alternatives."""
    schema = resolve(document, schema)
    if "anyOf" in schema and "type" not in schema and "properties" not in schema:
        return all(is_typed(document, option) for option in schema["anyOf"])
    return bool(schema.get("type") or schema.get("properties"))


def test_every_request_body_is_a_typed_object(document: dict[str, Any]) -> None:
    untyped = []
    bodies = 0
    for method, path, operation in operations(document):
        body = operation.get("requestBody")
        if body is None:
            continue
        bodies += 1
        schema = body["content"].get("application/json", {}).get("schema", {})
        resolved = resolve(document, schema)
        if resolved.get("type") != "object" or not resolved.get("properties"):
            untyped.append(f"{method.upper()} {path}")
    assert bodies >= 10
    assert untyped == [], f"request bodies without a typed object schema: {untyped}"


def test_every_request_object_refuses_unknown_fields_or_says_it_ignores_them(document: dict[str, Any]) -> None:
    open_ended = []
    for method, path, operation in operations(document):
        body = operation.get("requestBody")
        if body is None:
            continue
        schema = resolve(document, body["content"]["application/json"]["schema"])
        # Facts are the one body that ignores unknown keys on purpose (a
        # producer may add fields); it must say so in its description.
        if schema.get("additionalProperties") is not False and "ignored" not in schema.get("description", ""):
            open_ended.append(f"{method.upper()} {path}")
    assert open_ended == []


def test_every_success_answer_has_a_typed_schema(document: dict[str, Any]) -> None:
    untyped = []
    for method, path, operation in operations(document):
        for status, response in operation["responses"].items():
            if not status.startswith("2") or (method, path, status) in NON_JSON:
                continue
            schema = response.get("content", {}).get("application/json", {}).get("schema")
            if schema is None or not is_typed(document, schema):
                untyped.append(f"{method.upper()} {path} {status}")
    assert untyped == [], f"success answers without a typed schema: {untyped}"


def test_every_error_answer_is_the_envelope(document: dict[str, Any]) -> None:
    wrong = []
    for method, path, operation in operations(document):
        for status, response in operation["responses"].items():
            if status.startswith(("2", "3")) or (method, path, status) in NON_JSON:
                continue
            ref = response.get("content", {}).get("application/json", {}).get("schema", {}).get("$ref", "")
            expected = "ValidationErrorEnvelope" if status == "422" else "ErrorEnvelope"
            if (method, path, status) in OTLP_REFUSALS:
                expected = "OtlpStatus"
            if not ref.endswith(f"/{expected}"):
                wrong.append(f"{method.upper()} {path} {status}: {ref or 'no schema'}")
    assert wrong == [], f"error answers outside the envelope: {wrong}"
    assert "HTTPValidationError" not in document["components"]["schemas"]


def test_every_operation_documents_its_auth_failure(document: dict[str, Any]) -> None:
    open_routes = {"/healthz", "/readyz"}
    missing = [
        f"{method.upper()} {path}"
        for method, path, operation in operations(document)
        if path not in open_routes and "401" not in operation["responses"]
    ]
    assert missing == []


def test_the_validation_error_names_fields(document: dict[str, Any]) -> None:
    schemas = document["components"]["schemas"]
    details = resolve(document, schemas["ValidationErrorBody"]["properties"]["details"])
    assert details["required"] == ["fields"]
    assert details["properties"]["fields"]["additionalProperties"] == {"type": "string"}


def test_the_embedding_length_is_the_deployments(document: dict[str, Any]) -> None:
    for name in ("DecisionIn", "SimilarIn"):
        field = document["components"]["schemas"][name]["properties"]["embedding"]
        assert (field["minItems"], field["maxItems"]) == (16, 16), name
