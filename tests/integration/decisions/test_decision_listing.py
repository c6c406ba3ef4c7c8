"""The admin listing: newest first, keyset paged, filtered, never with context."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

from tests.harness import bearer, gateway_client, internal_headers, running
from tests.integration.decisions.memory_support import connect, insert_rows, unit_vector

SECRET = "+91-98450-12345"


async def _seed(template, database, count: int, start: datetime) -> list[str]:
    rows = [
        {
            "embedding": unit_vector(i),
            "decided_at": start + timedelta(minutes=i // 2),  # pairs share a stamp: the id breaks the tie
            "agent_id": "DISPATCH_AGENT" if i % 3 == 0 else "EXCEPTION_AGENT",
            "decision_type": "assignment_failure" if i % 3 == 0 else "stall_response",
            "outcome": ("success", "failure", "unknown", None)[i % 4],
            "context": f'{{"rider": {{"phone": "{SECRET}"}}, "facts": {{"n": {i}}}}}',
        }
        for i in range(count)
    ]
    conn = await connect(template, database)
    try:
        return [str(i) for i in await insert_rows(conn, rows)]
    finally:
        await conn.close()


async def test_listing_pages_newest_first_and_never_carries_context(settings, template, database):
    start = datetime.now(UTC) - timedelta(days=1)
    await _seed(template, database, 12, start)
    async with running(settings, ["decisions"]), gateway_client(settings) as client:
        pages, raw, cursor = [], [], None
        while True:
            params = {"limit": 5, **({"cursor": cursor} if cursor else {})}
            reply = await client.get("/admin/ai/decisions", params=params, headers=bearer(role=4))
            assert reply.status_code == 200, reply.text
            raw.append(reply.text)
            pages.append(reply.json()["items"])
            cursor = reply.json()["next_cursor"]
            if cursor is None:
                break
        filtered = await client.get(
            "/admin/ai/decisions",
            params={"decision_type": "stall_response", "outcome": "pending", "agent_id": "EXCEPTION_AGENT"},
            headers=bearer(role=1),
        )
        judged = await client.get("/admin/ai/decisions", params={"outcome": "success"}, headers=bearer(role=3))
        bad_outcome = await client.get("/admin/ai/decisions", params={"outcome": "won"}, headers=bearer())
        bad_cursor = await client.get("/admin/ai/decisions", params={"cursor": "bm90LWEtY3Vyc29y"}, headers=bearer())
        too_many = await client.get("/admin/ai/decisions", params={"limit": 201}, headers=bearer())
        tenant = await client.get("/admin/ai/decisions", headers=bearer(role=1, tenant=7))
        anonymous = await client.get("/admin/ai/decisions")
    assert [len(p) for p in pages] == [5, 5, 2]
    items = [item for page in pages for item in page]
    keys = [(item["decided_at"], item["id"]) for item in items]
    assert keys == sorted(keys, reverse=True) and len(set(keys)) == 12
    for text in raw:
        assert SECRET not in text and '"context"' not in text and "phone" not in text
    assert set(items[0]) == {
        "id",
        "decision_type",
        "agent_id",
        "subject_id",
        "action",
        "confidence",
        "reasoning",
        "model",
        "decided_at",
        "outcome",
        "outcome_reason",
        "judged_at",
        "judged_by",
        "rollout",
        "model_propensity",
        "execution",
    }
    assert items[0]["decided_at"].endswith("+00:00")
    rows = filtered.json()["items"]
    assert rows and all(
        r["outcome"] is None and r["decision_type"] == "stall_response" and r["agent_id"] == "EXCEPTION_AGENT"
        for r in rows
    )
    assert len(rows) == sum(1 for i in range(12) if i % 4 == 3 and i % 3 != 0)
    assert {r["outcome"] for r in judged.json()["items"]} == {"success"}
    assert bad_outcome.status_code == 422 and next(iter(bad_outcome.json()["error"]["details"]["fields"])) == "outcome"
    assert bad_cursor.status_code == 422 and next(iter(bad_cursor.json()["error"]["details"]["fields"])) == "cursor"
    assert too_many.status_code == 422 and next(iter(too_many.json()["error"]["details"]["fields"])) == "limit"
    assert tenant.status_code == 403
    assert anonymous.status_code == 401


async def test_paging_is_stable_while_decisions_keep_arriving(settings, template, database):
    start = datetime.now(UTC) - timedelta(hours=2)
    original = await _seed(template, database, 15, start)
    async with running(settings, ["decisions"]), gateway_client(settings) as client:
        paged = asyncio.Event()
        arrivals = 0

        async def keep_recording() -> None:
            # New decisions land while the pages are read; offset paging
            # would shift every later page by as many rows and repeat some.
            nonlocal arrivals
            while not paged.is_set():
                recorded = await client.post(
                    "/internal/agent-decisions",
                    json={
                        "decision_type": "stall_response",
                        "agent_id": "EXCEPTION_AGENT",
                        "subject_id": f"new-{arrivals}",
                        "context": {"rider": {"phone": SECRET}},
                        "decision": {"action": "reassign", "confidence": 0.5},
                    },
                    headers=internal_headers(),
                )
                assert recorded.status_code == 201
                arrivals += 1

        first = await client.get("/admin/ai/decisions", params={"limit": 4}, headers=bearer())
        seen = [item["id"] for item in first.json()["items"]]
        cursor = first.json()["next_cursor"]
        # Everything recorded from here on is newer than the first page, so
        # it must never show up on the later ones.
        recorder = asyncio.create_task(keep_recording())
        while cursor is not None:
            # Let a few records land before each page.
            target = arrivals + 2
            while arrivals < target:
                if recorder.done():
                    await recorder  # surfaces a failed record instead of waiting forever
                await asyncio.sleep(0.01)
            reply = await client.get("/admin/ai/decisions", params={"limit": 4, "cursor": cursor}, headers=bearer())
            seen.extend(item["id"] for item in reply.json()["items"])
            cursor = reply.json()["next_cursor"]
        paged.set()
        await recorder
    assert len(seen) == len(set(seen)) == len(original)
    assert set(seen) == set(original)
    assert arrivals >= 6
