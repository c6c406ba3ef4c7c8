"""GET /admin/ai/agents/{id}/models: the models a pin can choose from, gathered
from the pin, the agent's decisions, routing's arms and telemetry's model calls."""

from __future__ import annotations

from datetime import UTC, datetime

from outrider.rpc import keyed_channel as channel
from outrider.v1 import decisions_pb2, decisions_pb2_grpc
from outrider.wire import json_bytes
from tests.harness import INTERNAL_KEY, bearer, gateway_client, running, with_env
from tests.integration.telemetry.support import execute

READER = bearer(role=4)
WRITER = bearer(role=1)


async def decide(memory: decisions_pb2_grpc.DecisionsStub, agent_id: str, model: str, subject: str) -> str:
    reply = await memory.RecordDecision(
        decisions_pb2.RecordDecisionRequest(
            decision_type="stall_response",
            agent_id=agent_id,
            subject_id=subject,
            context_json=json_bytes({"minutes_stalled": 12}),
            action="reassign",
            confidence=0.8,
            model=model,
        )
    )
    return reply.id


async def model_call(template, database, agent_id: str, model: str, span: str) -> None:
    await execute(
        template,
        database,
        "insert into model_calls (trace_id, span_id, agent_id, operation, response_model, status, started_at,"
        " duration_ms) values ('t-models', $1, $2, 'chat', $3, 'succeeded', $4, 120)",
        span,
        agent_id,
        model,
        datetime.now(UTC),
    )


async def test_models_come_with_where_they_were_seen(settings, template, database):
    settings = with_env(settings, allowed_models="claude-*, house-model-?")
    async with running(settings, ["registry", "decisions", "outcomes", "telemetry"]):
        async with gateway_client(settings) as api:
            pin = {"model": "claude-opus-4-8"}
            pinned = await api.patch("/admin/ai/agents/EXCEPTION_AGENT", json=pin, headers=WRITER)
            assert pinned.status_code == 200, pinned.text
            async with channel(settings.addr("decisions"), INTERNAL_KEY) as ch:
                memory = decisions_pb2_grpc.DecisionsStub(ch)
                judged = await decide(memory, "EXCEPTION_AGENT", "claude-sonnet-4-5", "b-1")
                await memory.SetOutcome(decisions_pb2.SetOutcomeRequest(id=judged, outcome="success", reason="ok"))
                await decide(memory, "EXCEPTION_AGENT", "claude-haiku-4-5", "b-2")
                # Another agent's decisions say nothing about this one's models.
                await decide(memory, "DISPATCH_AGENT", "claude-other-1", "b-3")
            await model_call(template, database, "EXCEPTION_AGENT", "claude-sonnet-4-5", "s-1")
            await model_call(template, database, "DISPATCH_AGENT", "claude-elsewhere-2", "s-2")
            reply = await api.get("/admin/ai/agents/EXCEPTION_AGENT/models", headers=READER)
    assert reply.status_code == 200, reply.text
    body = reply.json()
    assert body["agent_id"] == "EXCEPTION_AGENT"
    assert body["pin"] == "claude-opus-4-8"
    assert body["allowed_patterns"] == ["claude-*", "house-model-?"]
    # The judged decision put its model on routing's arm for stall_response;
    # the pending one did not; another agent's decisions and calls are not here.
    assert body["models"] == [
        {"model": "claude-opus-4-8", "seen_in": ["pin"]},
        {"model": "claude-sonnet-4-5", "seen_in": ["decisions", "routing", "telemetry"]},
        {"model": "claude-haiku-4-5", "seen_in": ["decisions"]},
    ]


async def test_an_unknown_agent_is_not_found(settings):
    async with running(settings, ["registry", "decisions", "outcomes", "telemetry"]), gateway_client(settings) as api:
        reply = await api.get("/admin/ai/agents/NOBODY/models", headers=READER)
    assert reply.status_code == 404
