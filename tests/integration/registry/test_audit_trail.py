"""The audit trail through REST: the rows other contexts append (a person's
verdict on a decision) and the listing's time filter, against real Postgres."""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from tests.harness import bearer, eventually, gateway_client, internal_headers, running

READER = bearer(role=4)
LEAD = bearer(role=1, sub="u-lead", email="lead@example.com")


async def recorded(api: httpx.AsyncClient) -> str:
    body = {
        "id": str(uuid.uuid4()),
        "decision_type": "stall_response",
        "agent_id": "EXCEPTION_AGENT",
        "subject_id": "BK-8101",
        "context": {"stall_minutes": 14, "zone": "hsr"},
        "decision": {"action": "reassign", "confidence": 0.8},
        "model": "claude-test",
    }
    reply = await api.post("/internal/agent-decisions", json=body, headers=internal_headers())
    assert reply.status_code == 201, reply.text
    return str(body["id"])


def rejudge(api: httpx.AsyncClient, decision_id: str, outcome: str, reason: str, headers: dict[str, str] = LEAD):
    return api.patch(
        f"/admin/ai/decisions/{decision_id}/outcome", json={"outcome": outcome, "reason": reason}, headers=headers
    )


async def audit(api: httpx.AsyncClient, **params: Any) -> list[dict[str, Any]]:
    reply = await api.get("/admin/ai/audit", params=params, headers=READER)
    assert reply.status_code == 200, reply.text
    items: list[dict[str, Any]] = reply.json()["items"]
    return items


async def test_a_persons_verdicts_are_audited_once_each_and_an_engines_are_not(settings):
    async with running(settings, ["registry", "decisions", "telemetry"]), gateway_client(settings) as api:
        decision_id = await recorded(api)
        by_engine = await api.patch(
            f"/internal/agent-decisions/{decision_id}/outcome",
            json={"outcome": "success", "reason": "delivered"},
            headers=internal_headers(),
        )
        assert by_engine.status_code == 200, by_engine.text
        assert await audit(api, entity="decision") == []

        changed = await rejudge(api, decision_id, "failure", "the customer called to complain")
        assert changed.status_code == 200, changed.text
        # The same verdict again is a retry: no second row.
        assert (await rejudge(api, decision_id, "failure", "the customer called to complain")).status_code == 200
        [row] = await audit(api, entity="decision", entity_id=decision_id)
        assert (row["field"], row["old"], row["new"]) == (
            "verdict",
            {"outcome": "success"},
            {"outcome": "failure", "reason": "the customer called to complain"},
        )
        assert (row["changed_by"], row["changed_by_email"]) == ("u-lead", "lead@example.com")

        assert (await rejudge(api, decision_id, "unknown", "could not reach them")).status_code == 200
        rows = await audit(api, entity="decision", entity_id=decision_id)
        assert [(r["old"]["outcome"], r["new"]["outcome"]) for r in rows] == [
            ("failure", "unknown"),
            ("success", "failure"),
        ]
        assert [r["entity_id"] for r in await audit(api, actor="lead@example.com")] == [decision_id, decision_id]


async def test_a_verdict_the_registry_did_not_hear_is_kept_and_audited_by_the_retry(settings):
    async with running(settings, ["decisions", "telemetry"]), gateway_client(settings) as api:
        decision_id = await recorded(api)
        cut = await rejudge(api, decision_id, "failure", "the parcel came back")
        # The registry is not running: the call fails, the verdict stands.
        assert cut.status_code == 503, cut.text
        assert cut.json()["error"]["details"]["context"] == "registry"
        shown = await api.get(f"/admin/ai/decisions/{decision_id}", headers=READER)
        assert shown.json()["outcome"] == "failure"

        async with running(settings, ["registry"]):
            listed = await eventually(
                lambda: api.get("/admin/ai/audit", params={"entity": "decision"}, headers=READER),
                lambda reply: reply.status_code == 200,
                what="the gateway reaches the registry again",
            )
            assert listed.json()["items"] == []
            done = await eventually(
                lambda: rejudge(api, decision_id, "failure", "the parcel came back"),
                lambda reply: reply.status_code == 200,
                what="the retried verdict is audited once the registry answers",
            )
            assert done.json()["outcome"] == "failure"
            [row] = await audit(api, entity="decision", entity_id=decision_id)
            assert row["old"] is None
            assert row["new"] == {"outcome": "failure", "reason": "the parcel came back"}
            # Nothing is left waiting: a further retry appends nothing.
            assert (await rejudge(api, decision_id, "failure", "the parcel came back")).status_code == 200
            assert len(await audit(api, entity="decision", entity_id=decision_id)) == 1


async def test_the_audit_lists_a_span_of_time(settings):
    async with running(settings, ["registry"]), gateway_client(settings) as api:

        async def set_stall_minutes(minutes: int) -> None:
            reply = await api.patch(
                "/admin/ai/skills/stall_response", json={"thresholds": {"stallMinutes": minutes}}, headers=LEAD
            )
            assert reply.status_code == 200, reply.text

        await set_stall_minutes(11)
        await asyncio.sleep(0.05)
        between = datetime.now(UTC)
        await asyncio.sleep(0.05)
        await set_stall_minutes(12)
        await set_stall_minutes(13)

        def minutes(rows: list[dict[str, Any]]) -> list[int]:
            return [row["new"]["stallMinutes"] for row in rows]

        assert minutes(await audit(api, entity="skill", **{"from": between.isoformat()})) == [13, 12]
        assert minutes(await audit(api, entity="skill", to=between.isoformat())) == [11]
        everything = await audit(
            api,
            entity="skill",
            **{"from": (between - timedelta(hours=1)).isoformat(), "to": (between + timedelta(hours=1)).isoformat()},
        )
        assert minutes(everything) == [13, 12, 11]
        assert await audit(api, **{"from": (between + timedelta(hours=1)).isoformat()}) == []


@pytest.mark.parametrize(
    ("params", "field", "words"),
    [
        ({"from": "2026-03-02T10:00:00+00:00", "to": "2026-03-01T10:00:00+00:00"}, "to", "must be later than from"),
        ({"from": "2026-03-01T10:00:00+00:00", "to": "2026-03-01T10:00:00+00:00"}, "to", "must be later than from"),
        ({"from": "yesterday"}, "from", "RFC 3339"),
        ({"to": "2026-03-01T10:00:00"}, "to", "offset"),
    ],
)
async def test_a_span_that_is_no_span_is_refused_in_words(settings, params, field, words):
    async with running(settings, ["registry"]), gateway_client(settings) as api:
        reply = await api.get("/admin/ai/audit", params=params, headers=READER)
        assert reply.status_code == 422, reply.text
        fields = reply.json()["error"]["details"]["fields"]
        assert words in fields[field]


async def test_the_audit_is_read_by_staff_only(settings):
    async with running(settings, ["registry"]), gateway_client(settings) as api:
        stranger = bearer(role=2)
        reply = await api.get("/admin/ai/audit", params={"from": "2026-03-01T10:00:00+00:00"}, headers=stranger)
        assert reply.status_code == 403
