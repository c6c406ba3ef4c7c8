"""Erasure of one subject's personal data, end to end: REST and gRPC, every
context that holds it, against real Postgres and NATS."""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg
import httpx

from outrider.v1 import decisions_pb2, decisions_pb2_grpc
from services.common.settings import CONTEXTS
from services.outcomes.consumer import SUBJECT as FACTS_SUBJECT
from tests.harness import (
    bearer,
    eventually,
    gateway_client,
    internal_headers,
    person,
    running,
    service_channel,
    service_nats,
)

SCHEMAS = CONTEXTS
REASON = "request DPDP-2026-0042 from the data principal"


@dataclass(frozen=True)
class Person:
    subject_id: str
    name: str
    phone: str

    @property
    def traces(self) -> tuple[str, str]:
        return self.name, self.phone


ERASED = Person("BK-7001", "Ravi Kumar", "+91 98450 12345")
KEPT = Person("BK-7002", "Meera Iyer", "+91 99000 55555")


def decision(who: Person, n: int) -> dict[str, Any]:
    return {
        "id": str(uuid.uuid4()),
        "decision_type": "stall_response",
        "agent_id": "EXCEPTION_AGENT",
        "subject_id": who.subject_id,
        "context": {"customer_name": who.name, "customer_phone": who.phone, "stall_minutes": 10 + n, "zone": "hsr"},
        "decision": {"action": "reassign" if n % 2 else "wait", "confidence": 0.7},
        "reasoning": f"called {who.name} on {who.phone}; no answer",
        "model": "claude-test",
    }


def human_input(who: Person) -> dict[str, Any]:
    return {
        "provider": "chat:ops/dispatch",
        "external_id": f"m-{who.subject_id}",
        "subject_id": who.subject_id,
        "author": "priya",
        "at": (datetime.now(UTC) - timedelta(minutes=5)).isoformat(),
        "body": f"{who.name} ({who.phone}) asked to hold the parcel",
    }


async def record_subject(api: httpx.AsyncClient, who: Person) -> list[str]:
    """Three decisions (two judged, so precedents), a human input and facts; the decision ids."""
    ids = []
    for n in range(3):
        body = decision(who, n)
        reply = await api.post("/internal/agent-decisions", json=body, headers=internal_headers())
        assert reply.status_code == 201, reply.text
        ids.append(body["id"])
    for decision_id, outcome in zip(ids[:2], ("success", "failure"), strict=True):
        judged = await api.patch(
            f"/internal/agent-decisions/{decision_id}/outcome",
            json={"outcome": outcome, "reason": "from the facts"},
            headers=internal_headers(),
        )
        assert judged.status_code == 200, judged.text
    pushed = await api.post("/internal/human-inputs", json=human_input(who), headers=internal_headers())
    assert pushed.status_code == 201, pushed.text
    facts = await api.post(
        "/internal/facts",
        json={"subject_id": who.subject_id, "at": "2026-01-05T10:00:00Z", "status": "assigned"},
        headers=internal_headers(),
    )
    assert facts.status_code == 200, facts.text
    return ids


async def publish_malformed_facts(url: str) -> None:
    """One rejected event per subject, each carrying its person's phone, under its own field."""
    client = await service_nats(url)
    try:
        js = client.jetstream()
        for who, field, bad in ((ERASED, "at", "yesterday"), (KEPT, "cancelled", "yes")):
            event = {"subject_id": who.subject_id, "at": "2026-01-05T10:00:00Z", "customer_phone": who.phone}
            await js.publish(FACTS_SUBJECT, json.dumps({**event, field: bad}).encode())
    finally:
        await client.close()


async def database_text(dsn: str) -> str:
    """Every row of every table of the five schemas, as text: where a phone could still hide."""
    conn = await asyncpg.connect(dsn)
    try:
        tables = await conn.fetch(
            "select table_schema, table_name from information_schema.tables"
            " where table_schema = any($1::text[]) and table_type = 'BASE TABLE'",
            list(SCHEMAS),
        )
        dumped = []
        for table in tables:
            name = f'"{table["table_schema"]}"."{table["table_name"]}"'
            dumped.append(await conn.fetchval(f"select coalesce(string_agg(t::text, E'\\n'), '') from {name} t"))
        return "\n".join(dumped)
    finally:
        await conn.close()


async def similar_ids(api: httpx.AsyncClient, who: Person) -> set[str]:
    reply = await api.post(
        "/internal/agent-decisions/similar",
        json={"decision_type": "stall_response", "context": decision(who, 0)["context"], "k": 20},
        headers=internal_headers(),
    )
    assert reply.status_code == 200, reply.text
    return {item["id"] for item in reply.json()["items"]}


async def every_answer(api: httpx.AsyncClient, ids: list[str], who: Person) -> str:
    """What the API says about a subject and its decisions, as one text."""
    admin = bearer(role=3)
    answers = [
        await api.get("/admin/ai/decisions", params={"limit": 200}, headers=admin),
        await api.get(f"/admin/ai/subjects/{who.subject_id}/human-decisions", headers=admin),
        await api.post(f"/internal/subjects/{who.subject_id}/lease", headers=internal_headers()),
        await api.post(
            "/internal/agent-decisions/similar",
            json={"decision_type": "stall_response", "context": decision(who, 0)["context"], "k": 20},
            headers=internal_headers(),
        ),
        *[await api.get(f"/admin/ai/decisions/{i}", params={"precedents": 20}, headers=admin) for i in ids],
    ]
    for answer in answers:
        assert answer.status_code == 200, answer.text
    return "\n".join(answer.text for answer in answers)


async def decision_counts(api: httpx.AsyncClient) -> list[dict[str, Any]]:
    reply = await api.get("/admin/ai/insights", params={"days": 1}, headers=bearer(role=3))
    assert reply.status_code == 200, reply.text
    return sorted(reply.json()["decisions"], key=lambda row: (row["decision_type"], str(row["outcome"])))


async def subject_audit(api: httpx.AsyncClient, subject_id: str) -> list[dict[str, Any]]:
    reply = await api.get(
        "/admin/ai/audit", params={"entity": "subject", "entity_id": subject_id}, headers=bearer(role=4)
    )
    assert reply.status_code == 200, reply.text
    items: list[dict[str, Any]] = reply.json()["items"]
    return items


def erase(api: httpx.AsyncClient, subject_id: str, **body: Any):
    payload = {"confirm": subject_id, "reason": REASON, **body}
    return api.post(
        f"/admin/ai/subjects/{subject_id}/erasure",
        json=payload,
        headers=bearer(role=1, sub="u-dpo", email="dpo@example.com"),
    )


async def test_an_erased_subject_is_gone_from_every_answer_and_its_counts_stay(settings, template, database):
    dsn = template.raw_dsn(database)
    async with running(settings, CONTEXTS), gateway_client(settings) as api:
        erased_ids = await record_subject(api, ERASED)
        kept_ids = await record_subject(api, KEPT)
        await publish_malformed_facts(settings.nats_url)

        async def rejections() -> int:
            conn = await asyncpg.connect(dsn)
            try:
                return int(await conn.fetchval("select count(*) from outcomes.fact_rejections"))
            finally:
                await conn.close()

        await eventually(rejections, lambda n: n == 2, what="both malformed events rejected")
        before = await every_answer(api, erased_ids + kept_ids, ERASED)
        assert all(trace in before for trace in (*ERASED.traces, *KEPT.traces))
        # The two subjects' judged decisions are each other's precedents.
        assert set(erased_ids[:2]) <= await similar_ids(api, KEPT)
        counts = await decision_counts(api)

        wrong = await erase(api, ERASED.subject_id, confirm="BK-700")
        assert wrong.status_code == 422
        assert set(wrong.json()["error"]["details"]["fields"]) == {"confirm"}
        no_reason = await api.post(
            f"/admin/ai/subjects/{ERASED.subject_id}/erasure",
            json={"confirm": ERASED.subject_id},
            headers=bearer(role=1),
        )
        assert no_reason.status_code == 422
        assert set(no_reason.json()["error"]["details"]["fields"]) == {"reason"}
        assert ERASED.phone in await every_answer(api, erased_ids, ERASED), "a refused erasure erased nothing"

        done = await erase(api, ERASED.subject_id)
        assert done.status_code == 200, done.text
        assert done.json() == {
            "subject_id": ERASED.subject_id,
            "erased": {"decisions": 3, "human_inputs": 1, "facts": 2},
        }

        after = await every_answer(api, erased_ids + kept_ids, ERASED)
        assert not any(trace in after for trace in ERASED.traces)
        assert all(trace in after for trace in KEPT.traces)
        # No longer precedents, for anyone; the other subject's still are.
        assert not set(erased_ids) & await similar_ids(api, KEPT)
        assert set(kept_ids[:2]) <= await similar_ids(api, ERASED)
        for decision_id in kept_ids:
            detail = await api.get(f"/admin/ai/decisions/{decision_id}", params={"precedents": 20}, headers=bearer())
            assert not {p["id"] for p in detail.json()["precedents"]} & set(erased_ids)
        # Action, outcome, model and times stay, so every count still adds up.
        kept_decision = (await api.get(f"/admin/ai/decisions/{erased_ids[0]}", headers=bearer())).json()
        assert (kept_decision["action"], kept_decision["outcome"], kept_decision["model"]) == (
            "wait",
            "success",
            "claude-test",
        )
        assert kept_decision["reasoning"] is None and kept_decision["precedents"] == []
        assert kept_decision["decided_at"] and kept_decision["judged_at"]
        assert await decision_counts(api) == counts
        human = (await api.get(f"/admin/ai/subjects/{ERASED.subject_id}/human-decisions", headers=bearer())).json()
        assert [(h["external_id"], h["author"], h["body"]) for h in human["items"]] == [
            (f"m-{ERASED.subject_id}", "priya", "")
        ]

        [audited] = await subject_audit(api, ERASED.subject_id)
        assert (audited["field"], audited["changed_by"], audited["changed_by_email"]) == (
            "personal_data",
            "u-dpo",
            "dpo@example.com",
        )
        assert audited["old"] is None
        assert audited["new"] == {"erased": {"decisions": 3, "human_inputs": 1, "facts": 2}, "reason": REASON}

        # Again, over gRPC this time: nothing is left, and the request is audited all the same.
        async with service_channel(settings, "decisions", person(1, sub="u-dpo", email="dpo@example.com")) as channel:
            again = await decisions_pb2_grpc.DecisionsStub(channel).EraseSubject(
                decisions_pb2.EraseSubjectRequest(
                    subject_id=ERASED.subject_id, confirm=ERASED.subject_id, reason=REASON
                )
            )
        assert (again.erased.decisions, again.erased.human_inputs, again.erased.facts) == (0, 0, 0)
        audits = await subject_audit(api, ERASED.subject_id)
        assert [row["new"]["erased"] for row in audits] == [
            {"decisions": 0, "human_inputs": 0, "facts": 0},
            {"decisions": 3, "human_inputs": 1, "facts": 2},
        ]
        assert await subject_audit(api, KEPT.subject_id) == []

    stored = await database_text(dsn)
    assert not any(trace in stored for trace in ERASED.traces)
    assert all(trace in stored for trace in KEPT.traces)


async def test_an_erasure_cut_short_is_completed_by_the_next_call(settings, template, database):
    async with running(settings, ["registry", "decisions", "telemetry"]), gateway_client(settings) as api:
        decisions = [decision(ERASED, n) for n in range(2)]
        for body in decisions:
            assert (
                await api.post("/internal/agent-decisions", json=body, headers=internal_headers())
            ).status_code == 201
        # The outcomes context is not running: the decisions are cleared, the rest waits.
        cut = await erase(api, ERASED.subject_id)
        assert cut.status_code == 503
        assert cut.json()["error"]["details"]["context"] == "outcomes"
        assert await subject_audit(api, ERASED.subject_id) == []
        listed = (await api.get("/admin/ai/decisions", headers=bearer())).json()["items"]
        assert [row["reasoning"] for row in listed] == [None, None]

        async with running(settings, ["outcomes"]):
            done = await eventually(
                lambda: erase(api, ERASED.subject_id),
                lambda reply: reply.status_code == 200,
                what="the erasure completes once outcomes answers",
            )
        # The audit row counts what the first call cleared too, once.
        assert done.json()["erased"] == {"decisions": 2, "human_inputs": 0, "facts": 0}
        [audited] = await subject_audit(api, ERASED.subject_id)
        assert audited["new"]["erased"] == {"decisions": 2, "human_inputs": 0, "facts": 0}
