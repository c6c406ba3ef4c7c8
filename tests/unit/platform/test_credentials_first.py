"""No body is parsed for a caller without a credential, and no console path breaks the gateway.

Issue 28, findings 11 and 2d: an unauthenticated malformed body answered
422 (it had been parsed before the gate ran), and `/console/assets/%00`
or a 5,000-character asset path answered a plain-text 500.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from gateway.app import create_app
from gateway.console import DIST
from services.common.settings import load

# The probes a load balancer sends without a credential.
OPEN = {("get", "/healthz"), ("get", "/readyz")}
MALFORMED = b'{"decision_type": "stall_response", "context": {'


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return create_app(
        load(
            {
                "OUTRIDER_DATA_DIR": str(tmp_path_factory.mktemp("credentials")),
                "OUTRIDER_JWT_SECRET": "j" * 40,
                "OUTRIDER_INTERNAL_KEY": "k" * 40,
            }
        )
    )


@pytest.fixture
async def client(app: Any) -> AsyncIterator[httpx.AsyncClient]:
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://gateway") as session:
            yield session


def _operations(app: Any) -> list[tuple[str, str]]:
    found = []
    for path, item in app.openapi()["paths"].items():
        for method in item:
            if (method, path) not in OPEN:
                # Any value fills a path parameter: the credential is checked first.
                found.append((method, re.sub(r"\{[^}]+\}", "x1", path)))
    return found


async def test_every_route_refuses_a_malformed_body_without_credentials_as_401(app: Any, client) -> None:
    operations = _operations(app)
    assert len(operations) >= 30
    answers = {}
    for method, path in operations:
        reply = await client.request(
            method.upper(), path, content=MALFORMED, headers={"content-type": "application/json"}
        )
        answers[f"{method} {path}"] = reply.status_code
    assert {name: status for name, status in answers.items() if status != 401} == {}


async def test_a_wrong_credential_is_refused_before_a_large_malformed_body_is_parsed(client) -> None:
    body = b'{"decision_type": "' + b"x" * (900 * 1024) + b"\\q"
    for headers in ({}, {"X-Internal-Key": "w" * 40}, {"Authorization": "Bearer not.a.token"}):
        engine = await client.post(
            "/internal/agent-decisions", content=body, headers={**headers, "content-type": "application/json"}
        )
        person = await client.post(
            "/admin/ai/skills", content=body, headers={**headers, "content-type": "application/json"}
        )
        assert (engine.status_code, person.status_code) == (401, 401), (engine.text, person.text)


@pytest.mark.parametrize(
    "path",
    [
        "/console/assets/%00",
        "/console/assets/a%00b.js",
        "/console/assets/" + "a" * 5000,
        "/console/assets/" + "a/" * 3000,
    ],
    ids=["nul", "inner nul", "5,000 characters", "3,000 levels"],
)
async def test_an_asset_path_the_filesystem_cannot_look_up_is_a_404_in_the_envelope(client, path: str) -> None:
    reply = await client.get(path)
    assert reply.status_code == 404, reply.text[:200]
    assert reply.json()["error"]["code"] == "NOT_FOUND"
    assert "a" * 300 not in reply.text


ASSETS = DIST / "assets"


async def test_a_real_asset_is_still_served(client) -> None:
    name = sorted(path.name for path in ASSETS.iterdir())[0]
    reply = await client.get(f"/console/assets/{name}")
    assert reply.status_code == 200
