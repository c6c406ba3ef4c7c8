"""The autonomy guard against real registry, decisions and outcomes contexts:
an opted-in autonomous agent whose autonomous decisions are judged worse than
its confirmed ones has its autonomy switched off after a sweep, audited as
autonomy-guard; an agent with the same evidence that did not opt in keeps it."""

from __future__ import annotations

import asyncio
import uuid

import pytest

from outrider.v1 import decisions_pb2, decisions_pb2_grpc
from tests.harness import bearer, engine_channel, eventually, gateway_client, internal_headers, running
from tests.integration.registry.helpers import registry_db

WRITER = bearer(role=1, sub="u-42", email="lead@example.com")
STAFF = bearer(role=3)
# (execution, successes, failures): alone 25 %, with a person 90 %.
WORSE_ALONE = [("autonomous", 10, 30), ("confirmed", 36, 4)]


@pytest.fixture
async def api(settings):
    async with running(settings, ["registry", "decisions", "outcomes"]), gateway_client(settings) as client:
        client.settings = settings
        yield client


async def autonomous(api, agent_id: str, *, guarded: bool) -> None:
    reply = await api.patch(
        f"/admin/ai/agents/{agent_id}",
        json={"autonomous": True, "confirm": agent_id, "autonomy_guard": guarded},
        headers=WRITER,
    )
    assert reply.status_code == 200, reply.text


async def record(api, agent_id: str, decision_type: str) -> None:
    async with engine_channel(api.settings, "decisions") as channel:
        decisions = decisions_pb2_grpc.DecisionsStub(channel)
        for execution, successes, failures in WORSE_ALONE:
            outcomes = ["success"] * successes + ["failure"] * failures
            requests = [
                decisions_pb2.RecordDecisionRequest(
                    id=str(uuid.uuid4()),
                    decision_type=decision_type,
                    agent_id=agent_id,
                    subject_id=f"{agent_id}-{execution}-{n}",
                    action="reassign",
                    confidence=0.7,
                    execution=execution,
                )
                for n in range(len(outcomes))
            ]
            await decisions.RecordDecisions(decisions_pb2.RecordDecisionsRequest(decisions=requests))
            for request, outcome in zip(requests, outcomes, strict=True):
                await decisions.SetOutcome(decisions_pb2.SetOutcomeRequest(id=request.id, outcome=outcome))


async def agent(api, agent_id: str) -> dict:
    reply = await api.get(f"/admin/ai/agents/{agent_id}", headers=STAFF)
    assert reply.status_code == 200, reply.text
    return reply.json()


async def test_a_guarded_agent_doing_worse_alone_is_demoted_after_a_sweep_an_unguarded_one_is_not(
    api, template, database
):
    decision_type = f"guard_{uuid.uuid4().hex[:8]}"
    await autonomous(api, "EXCEPTION_AGENT", guarded=True)
    await autonomous(api, "DISPATCH_AGENT", guarded=False)
    await record(api, "EXCEPTION_AGENT", decision_type)
    await record(api, "DISPATCH_AGENT", decision_type)
    evidence = await api.get("/admin/ai/agents/EXCEPTION_AGENT/evidence", headers=STAFF)
    assert evidence.json()["recommendation"] == "demote"

    async def probe() -> dict:
        swept = await api.post("/internal/outcomes/sweep", headers=internal_headers())
        assert swept.status_code == 200, swept.text
        await asyncio.sleep(0.2)
        return await agent(api, "EXCEPTION_AGENT")

    demoted = await eventually(probe, lambda a: not a["autonomous"], timeout=30, step=0.1, what="the demotion")
    assert demoted["autonomy_guard"] is True
    # Both agents are weighed in the same pass, so the other's is decided by now.
    kept = await agent(api, "DISPATCH_AGENT")
    assert kept["autonomous"] is True
    async with registry_db(template, database) as conn:
        rows = await conn.fetch(
            "select entity_id, field, old, new from audit where changed_by = 'autonomy-guard' order by id"
        )
    assert [(r["entity_id"], r["field"], r["old"], r["new"]) for r in rows] == [
        ("EXCEPTION_AGENT", "autonomous", True, False)
    ]
