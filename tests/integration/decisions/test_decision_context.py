"""A decision's context for role 1, through REST against real Postgres: redacted
by the playground's rules in the decisions context, each read audited in the
registry, refused to everyone else, gone once its subject is erased."""

from __future__ import annotations

import uuid
from typing import Any

import httpx

from tests.harness import bearer, gateway_client, internal_headers, running
from tests.integration.decisions.memory_support import connect, insert_rows, unit_vector

NAME, PHONE, EMAIL = "Ravi Kumar", "+91 98450 12345", "ravi.kumar@example.com"
DPO = {"sub": "u-dpo", "email": "dpo@example.com"}


def _decision(subject_id: str) -> dict[str, Any]:
    return {
        "id": str(uuid.uuid4()),
        "decision_type": "stall_response",
        "agent_id": "EXCEPTION_AGENT",
        "subject_id": subject_id,
        "context": {
            "customer_name": NAME,
            "booking": {"customer_phone": PHONE, "eta_min": 7},
            "note_from_ops": f"mail {EMAIL} if late",
            "stall_minutes": 12,
            "zone": "hsr",
        },
        "decision": {"action": "reassign", "confidence": 0.7},
        "model": "claude-test",
    }


async def _record(api: httpx.AsyncClient, subject_id: str) -> str:
    body = _decision(subject_id)
    reply = await api.post("/internal/agent-decisions", json=body, headers=internal_headers())
    assert reply.status_code == 201, reply.text
    return str(body["id"])


async def _context_reads(api: httpx.AsyncClient, decision_id: str) -> list[dict[str, Any]]:
    reply = await api.get(
        "/admin/ai/audit", params={"entity": "decision", "entity_id": decision_id}, headers=bearer(role=4)
    )
    assert reply.status_code == 200, reply.text
    return [row for row in reply.json()["items"] if row["field"] == "context_read"]


async def test_role_1_reads_a_context_redacted_and_each_read_is_audited(settings):
    async with running(settings, ["registry", "decisions", "outcomes"]), gateway_client(settings) as api:
        decision_id = await _record(api, "BK-8101")

        first = await api.get(f"/admin/ai/decisions/{decision_id}/context", headers=bearer(role=1, **DPO))
        second = await api.get(f"/admin/ai/decisions/{decision_id}/context", headers=bearer(role=1, **DPO))
        reads = await _context_reads(api, decision_id)

    assert first.status_code == 200, first.text
    body = first.json()
    assert not any(value in first.text for value in (NAME, "Ravi", "Kumar", PHONE, "98450", EMAIL))
    assert body == {
        "decision_id": decision_id,
        "context": {
            "customer_name": "<person#1>",
            "booking": {"customer_phone": "<phone#1>", "eta_min": 7},
            "note_from_ops": "mail <email#1> if late",
            "stall_minutes": 12,
            "zone": "hsr",
        },
        "redacted": {"email": 1, "person": 1, "phone": 1},
        "erased_at": None,
    }
    assert second.json() == body
    assert len(reads) == 2
    for row in reads:
        assert (row["changed_by"], row["changed_by_email"]) == ("u-dpo", "dpo@example.com")
        assert row["new"] == {"redacted": {"email": 1, "person": 1, "phone": 1}, "erased": False}
    assert not any(value in str(reads) for value in (NAME, PHONE, EMAIL))


async def test_only_role_1_reads_a_context_and_an_unknown_decision_is_not_found(settings):
    async with running(settings, ["registry", "decisions", "outcomes"]), gateway_client(settings) as api:
        decision_id = await _record(api, "BK-8102")
        path = f"/admin/ai/decisions/{decision_id}/context"

        refused = {
            "role 3": await api.get(path, headers=bearer(role=3)),
            "role 4": await api.get(path, headers=bearer(role=4)),
            "tenant": await api.get(path, headers=bearer(role=1, tenant=7)),
            "no one": await api.get(path),
        }
        missing = await api.get(f"/admin/ai/decisions/{uuid.uuid4()}/context", headers=bearer(role=1))
        not_an_id = await api.get("/admin/ai/decisions/booking-7/context", headers=bearer(role=1))
        reads = await _context_reads(api, decision_id)

    assert {who: reply.status_code for who, reply in refused.items()} == {
        "role 3": 403,
        "role 4": 403,
        "tenant": 403,
        "no one": 401,
    }
    assert not any(PHONE in reply.text or NAME in reply.text for reply in refused.values())
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "DECISION_NOT_FOUND", missing.text
    assert not_an_id.status_code == 422
    assert reads == [], "a refused read reads nothing and audits nothing"


async def test_an_erased_subjects_decision_answers_that_its_context_is_gone(settings):
    async with running(settings, ["registry", "decisions", "outcomes"]), gateway_client(settings) as api:
        decision_id = await _record(api, "BK-8103")
        erased = await api.post(
            "/admin/ai/subjects/BK-8103/erasure",
            json={"confirm": "BK-8103", "reason": "request DPDP-2026-0077"},
            headers=bearer(role=1, **DPO),
        )
        gone = await api.get(f"/admin/ai/decisions/{decision_id}/context", headers=bearer(role=1, **DPO))
        reads = await _context_reads(api, decision_id)

    assert erased.status_code == 200, erased.text
    assert gone.status_code == 200, gone.text
    body = gone.json()
    assert (body["context"], body["redacted"]) == ({}, {})
    assert body["erased_at"] is not None
    assert [row["new"] for row in reads] == [{"redacted": {}, "erased": True}]


async def test_a_read_the_registry_cannot_audit_shows_nothing(settings, template, database):
    conn = await connect(template, database)
    try:
        [decision_id] = await insert_rows(
            conn, [{"embedding": unit_vector(1), "context": f'{{"customer_phone": "{PHONE}", "zone": "hsr"}}'}]
        )
    finally:
        await conn.close()
    # The registry, which keeps the audit log, is not running.
    async with running(settings, ["decisions"]), gateway_client(settings) as api:
        reply = await api.get(f"/admin/ai/decisions/{decision_id}/context", headers=bearer(role=1, **DPO))

    assert reply.status_code == 503, reply.text
    assert "zone" not in reply.text and "98450" not in reply.text and "phone" not in reply.text
