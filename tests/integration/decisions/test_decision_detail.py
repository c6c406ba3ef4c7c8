"""One decision for the console: no context, its outcome history in order,
its nearest judged precedents (itself excluded); and the listing's model and
time filters."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

from tests.harness import bearer, gateway_client, internal_headers, running
from tests.integration.decisions.memory_support import (
    connect,
    insert_rows,
    near,
    unit_vector,
)

SECRET = "+91-98450-12345"


async def _seed(template, database, rows: list[dict]) -> list[str]:
    conn = await connect(template, database)
    try:
        return [str(i) for i in await insert_rows(conn, rows)]
    finally:
        await conn.close()


async def test_detail_carries_history_and_nearest_precedents_without_context(settings, template, database):
    base = unit_vector(1)
    context = f'{{"rider": {{"phone": "{SECRET}"}}}}'
    target, close, far, other_type, pending = await _seed(
        template,
        database,
        [
            {"embedding": base, "context": context},
            {"embedding": near(base, 2, 0.1), "outcome": "success", "context": context},
            {"embedding": near(base, 3, 1.5), "outcome": "failure", "context": context},
            {"embedding": near(base, 4, 0.05), "outcome": "success", "decision_type": "assignment_failure"},
            {"embedding": near(base, 5, 0.05)},
        ],
    )
    async with running(settings, ["registry", "decisions"]), gateway_client(settings) as client:
        machine = await client.patch(
            f"/internal/agent-decisions/{target}/outcome",
            json={"outcome": "failure", "reason": "window closed late"},
            headers=internal_headers(),
        )
        human = await client.patch(
            f"/admin/ai/decisions/{target}/outcome",
            json={"outcome": "success", "reason": "rider did arrive"},
            headers=bearer(role=1, sub="u-9", email="judge@example.com"),
        )
        detail = await client.get(f"/admin/ai/decisions/{target}", headers=bearer(role=3))
        one = await client.get(f"/admin/ai/decisions/{target}", params={"precedents": 1}, headers=bearer(role=4))
        none = await client.get(f"/admin/ai/decisions/{target}", params={"precedents": 0}, headers=bearer(role=4))
        missing = await client.get(f"/admin/ai/decisions/{uuid.uuid4()}", headers=bearer(role=4))
        not_an_id = await client.get("/admin/ai/decisions/booking-7", headers=bearer(role=4))
        too_many = await client.get(f"/admin/ai/decisions/{target}", params={"precedents": 101}, headers=bearer())
    assert machine.status_code == 200 and human.status_code == 200, (machine.text, human.text)
    assert detail.status_code == 200, detail.text
    body = detail.json()
    assert SECRET not in detail.text and "context" not in body
    assert body["id"] == target and body["outcome"] == "success" and body["judged_by"] == "human"
    assert [(h["old_outcome"], h["new_outcome"], h["judged_by"], h["changed_by_email"]) for h in body["history"]] == [
        (None, "failure", "engine:default", None),
        ("failure", "success", "human", "judge@example.com"),
    ]
    assert body["history"][1]["reason"] == "rider did arrive" and body["history"][1]["changed_by"] == "u-9"
    # Same type, judged, nearest first; the decision itself, the other type and the pending one never appear.
    assert [p["id"] for p in body["precedents"]] == [close, far]
    assert body["precedents"][0]["similarity"] > body["precedents"][1]["similarity"]
    assert all("context" not in p for p in body["precedents"])
    assert body["precedent_summary"] == {"successes": 1, "failures": 1, "success_rate": 0.5}
    assert other_type not in detail.text and pending not in detail.text
    assert [p["id"] for p in one.json()["precedents"]] == [close]
    assert none.json()["precedents"] == [] and none.json()["precedent_summary"]["success_rate"] is None
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "DECISION_NOT_FOUND"
    assert not_an_id.status_code == 422
    assert too_many.status_code == 422


async def test_listing_filters_by_model_and_time(settings, template, database):
    now = datetime.now(UTC)
    ids = await _seed(
        template, database, [{"embedding": unit_vector(i), "decided_at": now - timedelta(hours=i)} for i in range(6)]
    )
    conn = await connect(template, database)
    try:
        await conn.execute(
            "update decisions set model = case when extract(hour from now() - decided_at)::int % 2 = 0"
            " then 'claude-strong' else 'claude-weak' end"
        )
    finally:
        await conn.close()
    async with running(settings, ["decisions"]), gateway_client(settings) as client:

        async def listed(**params) -> list[str]:
            reply = await client.get("/admin/ai/decisions", params=params, headers=bearer(role=4))
            assert reply.status_code == 200, reply.text
            return [item["id"] for item in reply.json()["items"]]

        strong = await listed(model="claude-strong")
        window = await listed(
            decided_from=(now - timedelta(hours=3, minutes=30)).isoformat(),
            decided_to=(now - timedelta(minutes=30)).isoformat(),
        )
        both = await listed(model="claude-weak", decided_from=(now - timedelta(hours=3, minutes=30)).isoformat())
        empty_span = await client.get(
            "/admin/ai/decisions",
            headers=bearer(role=4),
            params={"decided_from": now.isoformat(), "decided_to": (now - timedelta(hours=1)).isoformat()},
        )
        naive = await client.get(
            "/admin/ai/decisions", params={"decided_from": "2026-09-29T10:00:00"}, headers=bearer(role=4)
        )
    assert strong == [ids[0], ids[2], ids[4]]
    assert window == [ids[1], ids[2], ids[3]]
    assert both == [ids[1], ids[3]]
    assert empty_span.status_code == 422 and list(empty_span.json()["error"]["details"]["fields"]) == ["decided_to"]
    assert naive.status_code == 422
