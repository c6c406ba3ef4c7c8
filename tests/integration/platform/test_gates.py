"""Every route's gate, enumerated from the gateway's own OpenAPI document, so a
route added later is covered without anyone remembering to list it."""

from __future__ import annotations

import re

import pytest

from gateway.app import create_app
from services.common.settings import CONTEXTS, load
from tests.harness import (
    INTERNAL_KEY,
    JWT_SECRET,
    bearer,
    gateway_client,
    internal_headers,
    reserved_port,
)

OPEN_PATHS = {"/healthz", "/readyz"}
WRITE_METHODS = {"post", "patch", "put", "delete"}


def gate_settings():
    # Nothing listens on these ports: a request that passes its gate fails
    # upstream (503), which is how a test tells "gate passed" from "gate shut".
    env = {
        "OUTRIDER_DATA_DIR": "/nonexistent-outrider-data",
        "OUTRIDER_JWT_SECRET": JWT_SECRET,
        "OUTRIDER_INTERNAL_KEY": INTERNAL_KEY,
        **{f"OUTRIDER_{c.upper()}_ADDR": f"127.0.0.1:{reserved_port()}" for c in CONTEXTS},
    }
    return load(env)


def routes() -> list[tuple[str, str]]:
    spec = create_app(gate_settings()).openapi()
    found = []
    for path, operations in spec["paths"].items():
        for method in operations:
            found.append((method, re.sub(r"\{[^}]+\}", "x1", path)))
    return sorted(found)


ADMIN = [(m, p) for m, p in routes() if p.startswith("/admin/")]
# Reads of personal data, even redacted, are role 1's alone: named here, so
# a reviewer sees each read taken away from roles 3 and 4.
WRITER_READS = [("get", "/admin/ai/decisions/x1/context")]
ADMIN_WRITES = [(m, p) for m, p in ADMIN if m in WRITE_METHODS] + WRITER_READS
INTERNAL = [(m, p) for m, p in routes() if p.startswith("/internal/") or p == "/metrics"]
# OTLP/HTTP's own paths (/v1/traces) take the engine key, as /internal/* does.
ENGINE = [(m, p) for m, p in routes() if p.startswith("/v1/")]


def test_every_route_has_a_known_gate():
    unknown = [(m, p) for m, p in routes() if (m, p) not in ADMIN + INTERNAL + ENGINE and p not in OPEN_PATHS]
    assert unknown == []
    assert ("get", "/admin/ai/agents") in ADMIN
    assert set(WRITER_READS) <= set(ADMIN)


@pytest.fixture
async def client():
    async with gateway_client(gate_settings()) as c:
        yield c


async def call(client, method: str, path: str, headers: dict[str, str]):
    kwargs = {"json": {}} if method in WRITE_METHODS else {}
    return await client.request(method.upper(), path, headers=headers, **kwargs)


BAD_TOKENS = {
    "no token": {},
    "not bearer": {"Authorization": "Basic abc"},
    "bad signature": bearer(role=1, secret="another-secret-entirely-0123456789"),
    "expired": bearer(role=1, ttl_s=-60),
    "garbage": {"Authorization": "Bearer not.a.jwt"},
}


@pytest.mark.parametrize(("method", "path"), ADMIN)
@pytest.mark.parametrize("case", sorted(BAD_TOKENS))
async def test_admin_routes_refuse_bad_tokens(client, method, path, case):
    reply = await call(client, method, path, BAD_TOKENS[case])
    assert reply.status_code == 401
    assert reply.json()["error"]["code"] in {"UNAUTHENTICATED", "INVALID_TOKEN", "TOKEN_EXPIRED"}


@pytest.mark.parametrize(("method", "path"), ADMIN)
async def test_admin_routes_refuse_tenants_and_outside_roles(client, method, path):
    tenant = await call(client, method, path, bearer(role=1, tenant=7))
    assert tenant.status_code == 403
    assert tenant.json()["error"]["code"] == "STAFF_ONLY"
    role_two = await call(client, method, path, bearer(role=2))
    assert role_two.status_code == 403


@pytest.mark.parametrize(("method", "path"), ADMIN_WRITES)
async def test_admin_writes_need_role_one(client, method, path):
    for role in (3, 4):
        reply = await call(client, method, path, bearer(role=role))
        assert reply.status_code == 403
        assert reply.json()["error"]["code"] == "FORBIDDEN"


@pytest.mark.parametrize(("method", "path"), ADMIN)
async def test_staff_with_the_right_role_pass_the_gate(client, method, path):
    role = 1 if method in WRITE_METHODS or (method, path) in WRITER_READS else 4
    reply = await call(client, method, path, bearer(role=role))
    assert reply.status_code not in (401, 403)


@pytest.mark.parametrize(("method", "path"), INTERNAL + ENGINE)
async def test_internal_routes_need_the_key(client, method, path):
    missing = await call(client, method, path, {})
    wrong = await call(client, method, path, internal_headers("wrong-key"))
    assert missing.status_code == 401
    assert wrong.status_code == 401
    right = await call(client, method, path, internal_headers())
    assert right.status_code not in (401, 403)


async def test_errors_use_the_envelope(client):
    reply = await client.get("/admin/ai/no-such-thing", headers=bearer(role=1))
    assert reply.status_code == 404
    assert set(reply.json()["error"]) == {"code", "message", "details"}
