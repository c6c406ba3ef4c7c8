"""Decisions carry their rollout arm: recorded over REST and gRPC, shown in
the listing and the detail, filtered by rollout, and counted per arm for the
rollout guard by the platform alone."""

from __future__ import annotations

import uuid

import grpc
import pytest

from outrider.v1 import common_pb2, decisions_pb2, decisions_pb2_grpc
from tests.harness import bearer, engine_channel, gateway_client, internal_headers, running, service_channel

ROLLOUT = str(uuid.uuid4())
PAYLOAD = {
    "decision_type": "stall_response",
    "agent_id": "EXCEPTION_AGENT",
    "decision": {"action": "reassign", "confidence": 0.8},
}


@pytest.fixture
async def api(settings):
    async with running(settings, ["decisions"]), gateway_client(settings) as client:
        yield client


async def record(api, subject: str, rollout: dict | None = None) -> str:
    body = {**PAYLOAD, "subject_id": subject, **({"rollout": rollout} if rollout else {})}
    reply = await api.post("/internal/agent-decisions", json=body, headers=internal_headers())
    assert reply.status_code == 201, reply.text
    return reply.json()["id"]


async def judge(api, decision_id: str, outcome: str) -> dict:
    reply = await api.patch(
        f"/internal/agent-decisions/{decision_id}/outcome", json={"outcome": outcome}, headers=internal_headers()
    )
    assert reply.status_code == 200, reply.text
    return reply.json()


async def count_arms(settings, *rollout_ids: str) -> dict[tuple[str, str], tuple[int, int, int, int]]:
    async with service_channel(settings, "decisions") as channel:
        reply = await decisions_pb2_grpc.DecisionsStub(channel).CountRolloutArms(
            decisions_pb2.CountRolloutArmsRequest(rollout_ids=list(rollout_ids))
        )
    return {(i.rollout_id, i.arm): (i.successes, i.failures, i.unknown, i.pending) for i in reply.items}


async def test_decisions_are_recorded_with_their_arm_listed_filtered_and_counted(settings, api):
    control = [await record(api, f"b-{i}", {"id": ROLLOUT, "arm": "control"}) for i in range(3)]
    candidate = [await record(api, f"c-{i}", {"id": ROLLOUT, "arm": "candidate"}) for i in range(4)]
    outside = await record(api, "b-9")
    await judge(api, control[0], "success")
    await judge(api, control[1], "failure")
    judged = await judge(api, candidate[0], "success")
    await judge(api, candidate[1], "success")
    await judge(api, candidate[2], "unknown")
    assert judged["rollout"] == {"id": ROLLOUT, "arm": "candidate"}

    listed = (await api.get("/admin/ai/decisions", params={"rollout_id": ROLLOUT}, headers=bearer(role=3))).json()
    assert {item["id"] for item in listed["items"]} == set(control + candidate)
    assert {item["rollout"]["arm"] for item in listed["items"]} == {"control", "candidate"}
    everything = (await api.get("/admin/ai/decisions", headers=bearer(role=3))).json()["items"]
    assert next(item for item in everything if item["id"] == outside)["rollout"] is None
    detail = (await api.get(f"/admin/ai/decisions/{control[2]}", headers=bearer(role=4))).json()
    assert detail["rollout"] == {"id": ROLLOUT, "arm": "control"}
    by_subject = (await api.get("/admin/ai/decisions", params={"subject_id": "c-1"}, headers=bearer())).json()
    assert [item["id"] for item in by_subject["items"]] == [candidate[1]]

    other = str(uuid.uuid4())
    assert await count_arms(settings, ROLLOUT, other) == {
        (ROLLOUT, "control"): (1, 1, 0, 1),
        (ROLLOUT, "candidate"): (2, 0, 1, 1),
        (other, "control"): (0, 0, 0, 0),
        (other, "candidate"): (0, 0, 0, 0),
    }


async def test_an_arm_recorded_over_grpc_is_kept(settings, api):
    async with engine_channel(settings, "decisions") as channel:
        stub = decisions_pb2_grpc.DecisionsStub(channel)
        reply = await stub.RecordDecision(
            decisions_pb2.RecordDecisionRequest(
                decision_type="stall_response",
                agent_id="EXCEPTION_AGENT",
                subject_id="b-1",
                action="wait",
                confidence=0.6,
                rollout=common_pb2.RolloutArm(id=ROLLOUT, arm="candidate"),
            )
        )
    listed = (await api.get("/admin/ai/decisions", params={"rollout_id": ROLLOUT}, headers=bearer())).json()
    assert [(item["id"], item["rollout"]["arm"]) for item in listed["items"]] == [(reply.id, "candidate")]
    assert await count_arms(settings, ROLLOUT) == {
        (ROLLOUT, "control"): (0, 0, 0, 0),
        (ROLLOUT, "candidate"): (0, 0, 0, 1),
    }


@pytest.mark.parametrize(
    ("rollout", "field"),
    [
        ({"id": "r-1", "arm": "control"}, "rollout.id"),
        ({"id": ROLLOUT, "arm": "treatment"}, "rollout.arm"),
        ({"id": ROLLOUT}, "rollout.arm"),
        ({"id": ROLLOUT, "arm": "control", "percent": 5}, "rollout.percent"),
    ],
)
async def test_a_malformed_arm_is_422_naming_the_field(api, rollout, field):
    body = {**PAYLOAD, "subject_id": "b-1", "rollout": rollout}
    reply = await api.post("/internal/agent-decisions", json=body, headers=internal_headers())
    assert reply.status_code == 422
    assert field in reply.json()["error"]["details"]["fields"]
    assert (await api.get("/admin/ai/decisions", headers=bearer())).json()["items"] == []


async def test_a_malformed_arm_over_grpc_is_refused_by_name(settings, api):
    async with engine_channel(settings, "decisions") as channel:
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await decisions_pb2_grpc.DecisionsStub(channel).RecordDecision(
                decisions_pb2.RecordDecisionRequest(
                    decision_type="stall_response",
                    agent_id="EXCEPTION_AGENT",
                    subject_id="b-1",
                    action="wait",
                    confidence=0.6,
                    rollout=common_pb2.RolloutArm(id=ROLLOUT, arm="Candidate"),
                )
            )
    assert caught.value.code() is grpc.StatusCode.INVALID_ARGUMENT
    assert "rollout.arm" in caught.value.details()


async def test_the_counts_are_the_platforms_and_bad_ids_are_refused(settings, api):
    async with engine_channel(settings, "decisions") as channel:
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await decisions_pb2_grpc.DecisionsStub(channel).CountRolloutArms(
                decisions_pb2.CountRolloutArmsRequest(rollout_ids=[ROLLOUT])
            )
    assert caught.value.code() is grpc.StatusCode.PERMISSION_DENIED
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await count_arms(settings, "not-a-rollout")
    assert caught.value.code() is grpc.StatusCode.INVALID_ARGUMENT
    assert (await api.get("/admin/ai/decisions", params={"rollout_id": "r-1"}, headers=bearer())).status_code == 422
