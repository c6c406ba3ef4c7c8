"""Decisions carry their model's propensity and how their action was carried
out (DESIGN §10): recorded over REST, gRPC and the SDK, held to their range,
and shown in the reply, the listing and the detail."""

from __future__ import annotations

import grpc
import pytest

from outrider.client.decisions import DecisionRecorder
from outrider.v1 import decisions_pb2, decisions_pb2_grpc
from tests.harness import (
    INTERNAL_KEY,
    bearer,
    engine_channel,
    gateway_client,
    internal_headers,
    running,
    service_channel,
)

PAYLOAD = {
    "decision_type": "stall_response",
    "agent_id": "EXCEPTION_AGENT",
    "subject_id": "b-1",
    "decision": {"action": "reassign", "confidence": 0.8},
    "model": "m-small",
}


@pytest.fixture
async def api(settings):
    async with running(settings, ["decisions"]), gateway_client(settings) as client:
        yield client


def grpc_decision(**fields) -> decisions_pb2.RecordDecisionRequest:
    return decisions_pb2.RecordDecisionRequest(
        decision_type="stall_response",
        agent_id="EXCEPTION_AGENT",
        subject_id="b-2",
        action="wait",
        confidence=0.6,
        model="m-large",
        **fields,
    )


async def test_propensity_and_execution_are_kept_and_shown_everywhere(settings, api):
    body = {**PAYLOAD, "model_propensity": 0.25, "execution": "confirmed"}
    recorded = await api.post("/internal/agent-decisions", json=body, headers=internal_headers())
    assert recorded.status_code == 201, recorded.text
    said = recorded.json()["id"]
    plain = (await api.post("/internal/agent-decisions", json=PAYLOAD, headers=internal_headers())).json()["id"]
    async with engine_channel(settings, "decisions") as channel:
        stub = decisions_pb2_grpc.DecisionsStub(channel)
        over_grpc = (await stub.RecordDecision(grpc_decision(model_propensity=1.0, execution="autonomous"))).id
        batch = await stub.RecordDecisions(
            decisions_pb2.RecordDecisionsRequest(
                decisions=[grpc_decision(model_propensity=0.5, execution="overridden"), grpc_decision()]
            )
        )
    batched, batched_plain = (result.id for result in batch.results)

    listed = (await api.get("/admin/ai/decisions", headers=bearer())).json()["items"]
    shown = {item["id"]: (item["model_propensity"], item["execution"]) for item in listed}
    assert shown == {
        said: (0.25, "confirmed"),
        plain: (None, None),
        over_grpc: (1.0, "autonomous"),
        batched: (0.5, "overridden"),
        batched_plain: (None, None),
    }
    detail = (await api.get(f"/admin/ai/decisions/{said}", headers=bearer())).json()
    assert (detail["model_propensity"], detail["execution"]) == (0.25, "confirmed")
    judged = await api.patch(
        f"/internal/agent-decisions/{over_grpc}/outcome", json={"outcome": "success"}, headers=internal_headers()
    )
    assert (judged.json()["model_propensity"], judged.json()["execution"]) == (1.0, "autonomous")

    async with service_channel(settings, "decisions") as channel:
        stub = decisions_pb2_grpc.DecisionsStub(channel)
        detail_message = await stub.GetDecision(decisions_pb2.GetDecisionRequest(id=batched, precedents=0))
        plain_message = await stub.GetDecision(decisions_pb2.GetDecisionRequest(id=plain, precedents=0))
    assert detail_message.decision.model_propensity == 0.5
    assert detail_message.decision.execution == "overridden"
    assert not plain_message.decision.HasField("model_propensity")
    assert plain_message.decision.execution == ""


async def test_the_sdk_sends_both(settings, api):
    recorder = DecisionRecorder(settings.addr("decisions"), INTERNAL_KEY)
    try:
        decision_id = recorder.record(
            decision_type="stall_response",
            agent_id="EXCEPTION_AGENT",
            subject_id="b-3",
            action="reassign",
            confidence=0.7,
            model="m-small",
            model_propensity=0.125,
            execution="proposed",
        )
        assert await recorder.flush(5.0)
    finally:
        await recorder.close()
    detail = (await api.get(f"/admin/ai/decisions/{decision_id}", headers=bearer())).json()
    assert (detail["model_propensity"], detail["execution"]) == (0.125, "proposed")


@pytest.mark.parametrize(
    ("extra", "field"),
    [
        ({"model_propensity": 0}, "model_propensity"),
        ({"model_propensity": 1.5}, "model_propensity"),
        ({"model_propensity": -0.2}, "model_propensity"),
        ({"model_propensity": "0.5"}, "model_propensity"),
        ({"execution": "manual"}, "execution"),
        ({"execution": "Autonomous"}, "execution"),
    ],
)
async def test_out_of_range_over_rest_is_422_naming_the_field(api, extra, field):
    reply = await api.post("/internal/agent-decisions", json={**PAYLOAD, **extra}, headers=internal_headers())
    assert reply.status_code == 422
    assert field in reply.json()["error"]["details"]["fields"]
    assert (await api.get("/admin/ai/decisions", headers=bearer())).json()["items"] == []


@pytest.mark.parametrize(
    ("fields", "named"),
    [
        ({"model_propensity": 0.0}, "model_propensity"),
        ({"model_propensity": 1.0000001}, "model_propensity"),
        ({"model_propensity": float("nan")}, "model_propensity"),
        ({"execution": "later"}, "execution"),
    ],
)
async def test_out_of_range_over_grpc_is_refused_by_name(settings, api, fields, named):
    async with engine_channel(settings, "decisions") as channel:
        stub = decisions_pb2_grpc.DecisionsStub(channel)
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await stub.RecordDecision(grpc_decision(**fields))
        batch = await stub.RecordDecisions(
            decisions_pb2.RecordDecisionsRequest(decisions=[grpc_decision(**fields), grpc_decision()])
        )
    assert caught.value.code() is grpc.StatusCode.INVALID_ARGUMENT
    assert named in caught.value.details()
    refused, recorded = batch.results
    assert refused.error_code == "INVALID_ARGUMENT" and named in refused.error_message
    assert recorded.created and not recorded.error_code
    listed = (await api.get("/admin/ai/decisions", headers=bearer())).json()["items"]
    assert [item["id"] for item in listed] == [recorded.id]
