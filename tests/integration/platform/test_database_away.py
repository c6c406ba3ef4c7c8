"""Every context whose Postgres is away answers DATABASE_UNAVAILABLE, a 503
naming the context, for the calls that need the database."""

from __future__ import annotations

import pytest

from tests.harness import bearer, database_away, gateway_client, internal_headers, running

ROUTES = [
    ("registry", "get", "/admin/ai/agents", None),
    ("registry", "get", "/admin/ai/audit", None),
    ("decisions", "get", "/admin/ai/decisions", None),
    (
        "decisions",
        "post",
        "/internal/agent-decisions/similar",
        {"decision_type": "stall_response", "context": {"stall_minutes": 12}},
    ),
    ("outcomes", "get", "/admin/ai/conversation-metrics", None),
    ("playground", "get", "/admin/ai/playground/runs", None),
    ("telemetry", "get", "/admin/ai/insights", None),
    ("telemetry", "get", "/admin/ai/runs", None),
]


@pytest.mark.parametrize(("context", "method", "path", "body"), ROUTES, ids=[f"{r[1]} {r[2]}" for r in ROUTES])
async def test_a_call_that_needs_the_absent_database_is_told_to_try_again(
    settings, template, database, context, method, path, body
):
    async with running(settings, [context]), gateway_client(settings) as client:
        headers = {**bearer(role=1), **internal_headers()}
        first = await client.request(method, path, json=body, headers=headers)
        async with database_away(template, database):
            # The context itself keeps running.
            away = await client.request(method, path, json=body, headers=headers)
        back = await client.request(method, path, json=body, headers=headers)
    assert (first.status_code, back.status_code) == (200, 200), (first.text, back.text)
    assert away.status_code == 503, away.text
    assert away.json()["error"]["code"] == "DATABASE_UNAVAILABLE"
    assert away.json()["error"]["details"]["context"] == context
    assert database not in away.text
