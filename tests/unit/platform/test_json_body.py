"""The gateway reads JSON bodies with pydantic's parser, and a client sees
exactly what `json.loads` would have given the route: the same values, and
for a body only `json.loads` reads, or neither reads, the same answer."""

from __future__ import annotations

import importlib
import json
import math
import pkgutil
import random
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from fastapi.routing import APIRoute

import gateway.routes
from gateway import routing
from gateway.app import create_app
from gateway.routing import JsonBodyRoute, read_json
from services.common.settings import load

INTERNAL_KEY = "k" * 40
DIMENSION = 4
SIMILAR = "/internal/agent-decisions/similar"

# Bodies both parsers read, each a trap for a parser that differs.
READ_ALIKE = {
    "floats at the edges": b"[0.1, -0.0, 5e-324, 1.7976931348623157e308, 1e400, -1e400, 1e-400, 2.5E+3]",
    "integers stay integers": b"[0, -0, 1, 12345678901234567890123456789, 1.0]",
    "a repeated key keeps the last": b'{"a": 1, "a": [2]}',
    "escapes and text": '{"k": "\\u00e9\\n\\"\\\\ é 🚚 \\ud83d\\ude9a \\u0000"}'.encode(),
    "NaN and Infinity": b"[NaN, Infinity, -Infinity]",
    "white space around": b' \r\n\t{"a": {}} \n',
    "a bare string": b'"x"',
}

# Bodies `json.loads` reads and pydantic's parser refuses.
ONLY_THE_STANDARD_PARSER_READS = {
    "a lone surrogate escape": b'{"a": "\\ud800"}',
    "an encoded lone surrogate": b'{"a": "\xed\xa0\x80"}',
    "a UTF-8 byte order mark": b'\xef\xbb\xbf{"a": 1}',
    "UTF-16": '{"a": 1}'.encode("utf-16"),
    "nesting past 200 levels": b"[" * 300 + b"]" * 300,
}

# Bodies neither reads.
UNREADABLE = {
    "trailing text": b'{"a": 1} x',
    "a trailing comma": b"[1,]",
    "a raw line break in a string": b'{"a": "x\ny"}',
    "nothing": b"",
    "not UTF-8": b'{"a": "\xff"}',
    "an integer past Python's digits": b"[" + b"9" * 5000 + b"]",
    "nesting past the interpreter's stack": b"[" * 100_000 + b"]" * 100_000,
}


def same(a: object, b: object) -> bool:
    # repr tells 1 from 1.0 and -0.0 from 0.0, which == does not.
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a):
        return math.isnan(b)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=False))
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    return type(a) is type(b) and repr(a) == repr(b)


@pytest.mark.parametrize(
    "body",
    [*READ_ALIKE.values(), *ONLY_THE_STANDARD_PARSER_READS.values()],
    ids=[*READ_ALIKE, *ONLY_THE_STANDARD_PARSER_READS],
)
def test_a_body_reads_as_json_loads_reads_it(body: bytes) -> None:
    assert same(read_json(body), json.loads(body))


def test_random_floats_read_to_the_same_bits() -> None:
    rng = random.Random(20261130)
    values = [rng.gauss(0, 1) for _ in range(2000)] + [
        rng.random() * 10.0 ** rng.randint(-320, 308) for _ in range(2000)
    ]
    for text in (json.dumps(values), "[" + ",".join(f"{v:.25g}" for v in values) + "]"):
        assert same(read_json(text.encode()), json.loads(text))


@pytest.mark.parametrize("body", UNREADABLE.values(), ids=UNREADABLE)
def test_a_body_neither_reads_fails_as_json_loads_fails(body: bytes) -> None:
    with pytest.raises(Exception) as expected:  # noqa: PT011 - whatever json.loads raises is the expectation
        json.loads(body)
    with pytest.raises(type(expected.value)):
        read_json(body)


def test_a_body_pydantic_reads_never_meets_the_standard_parser(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(_: bytes) -> None:
        raise AssertionError("json.loads was called")

    monkeypatch.setattr(routing.json, "loads", refuse)
    assert read_json(b'{"embedding": [0.5, 1e-3]}') == {"embedding": [0.5, 0.001]}


@pytest.fixture
async def app_client(tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(
        load(
            {
                "OUTRIDER_DATA_DIR": str(tmp_path),
                "OUTRIDER_JWT_SECRET": "j" * 40,
                "OUTRIDER_INTERNAL_KEY": INTERNAL_KEY,
                "OUTRIDER_EMBEDDING_DIM": str(DIMENSION),
            }
        )
    )
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(
        transport=transport, base_url="http://gateway", headers={"X-Internal-Key": INTERNAL_KEY}
    ) as client:
        yield client


def test_every_route_that_reads_a_json_body_reads_it_so() -> None:
    routers = [
        importlib.import_module(f"gateway.routes.{module.name}").router
        for module in pkgutil.iter_modules(gateway.routes.__path__)
    ]
    with_body = [
        route
        for router in routers
        for route in router.routes
        if isinstance(route, APIRoute) and route.body_field is not None
    ]
    assert len(with_body) > 10
    assert [route.path for route in with_body if not isinstance(route, JsonBodyRoute)] == []


async def test_a_body_only_the_standard_parser_reads_is_judged_by_the_contract(app_client: httpx.AsyncClient) -> None:
    # Read, then refused by the contract for what it holds: the field at
    # fault is named, not the body.
    bom = b"\xef\xbb\xbf" + json.dumps({"decision_type": "Not A Type", "embedding": [1, 0, 0, 0]}).encode()
    surrogate = b'{"decision_type": "stall_\\ud800", "embedding": [1, 0, 0, 0]}'
    deep = json.dumps({"decision_type": "stall_response", "context": {"a": json.loads("[" * 250 + "]" * 250)}}).encode()
    for body, field in ((bom, "decision_type"), (surrogate, "decision_type"), (deep, "context")):
        answer = await app_client.post(SIMILAR, content=body, headers={"content-type": "application/json"})
        assert answer.status_code == 422, answer.text
        assert field in answer.json()["error"]["details"]["fields"], answer.text


async def test_an_unreadable_body_answers_the_envelope_it_always_did(app_client: httpx.AsyncClient) -> None:
    cases = (
        (b'{"decision_type": ', "JSON decode error"),
        (b'{"decision_type": "\xff"}', "is not readable JSON (UnicodeDecodeError)"),
        (b"[" * 100_000 + b"]" * 100_000, "is not readable JSON (RecursionError)"),
    )
    for body, reason in cases:
        answer = await app_client.post(SIMILAR, content=body, headers={"content-type": "application/json"})
        assert answer.status_code == 422, answer.text
        assert answer.json()["error"] == {
            "code": "INVALID_ARGUMENT",
            "message": f"invalid body: {reason}",
            "details": {"fields": {"body": reason}},
        }
