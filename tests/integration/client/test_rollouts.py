"""A guarded rollout end to end, as an engine and the guard live it: an
operator starts it over REST, the engine's registry client sees it in the
snapshot and assigns subjects by itself, the recorder stamps each decision
with its arm, CountRolloutArms counts the judged ones per arm, the platform
advances and completes it, and the candidate's pin becomes every subject's."""

from __future__ import annotations

import grpc
import pytest

from outrider.client import DecisionRecorder, RegistryClient
from outrider.client.rollouts import bucket
from outrider.v1 import decisions_pb2, decisions_pb2_grpc, registry_pb2, registry_pb2_grpc
from tests.harness import INTERNAL_KEY, bearer, eventually, gateway_client, internal_headers, running, service_channel

WRITER = bearer(role=1, sub="u-42", email="lead@example.com")
SUBJECTS = [f"BK-{n}" for n in range(40)]


@pytest.fixture
async def platform(settings):
    async with (
        running(settings, ["registry", "decisions"]),
        gateway_client(settings) as api,
        RegistryClient(settings.addr("registry"), INTERNAL_KEY, retry_min_s=0.05, retry_max_s=0.2) as registry,
    ):
        recorder = DecisionRecorder(settings.addr("decisions"), INTERNAL_KEY, registry=registry)
        try:
            yield api, registry, recorder
        finally:
            await recorder.close()


async def judge_as_platform(settings, request: registry_pb2.JudgeRolloutRequest) -> registry_pb2.Rollout:
    async with service_channel(settings, "registry") as channel:
        return await registry_pb2_grpc.RegistryStub(channel).JudgeRollout(request)


async def arm_counts(settings, rollout_id: str) -> dict[str, tuple[int, int, int, int]]:
    async with service_channel(settings, "decisions") as channel:
        reply = await decisions_pb2_grpc.DecisionsStub(channel).CountRolloutArms(
            decisions_pb2.CountRolloutArmsRequest(rollout_ids=[rollout_id])
        )
    return {item.arm: (item.successes, item.failures, item.unknown, item.pending) for item in reply.items}


async def test_a_rollout_reaches_the_engine_its_decisions_are_counted_per_arm_and_completion_is_the_baseline(
    settings, platform
):
    api, registry, recorder = platform
    created = await api.post(
        "/admin/ai/rollouts",
        json={
            "agent_id": "EXCEPTION_AGENT",
            "decision_type": "stall_response",
            "change": {"model": "claude-opus-5-5"},
            "steps": [50, 100],
        },
        headers=WRITER,
    )
    assert created.status_code == 201, created.text
    rollout_id = created.json()["id"]
    await eventually(
        lambda: _async(registry.assignment("EXCEPTION_AGENT", "stall_response", "BK-0")),
        lambda found: found is not None,
        what="the rollout in the engine's snapshot",
    )

    candidates = {s for s in SUBJECTS if bucket(rollout_id, s) < 5000}
    assert 0 < len(candidates) < len(SUBJECTS)
    for subject in SUBJECTS:
        settings_now = registry.for_subject("EXCEPTION_AGENT", "stall_response", subject)
        assert settings_now.model == ("claude-opus-5-5" if subject in candidates else None)
        assert settings_now.assignment.arm == ("candidate" if subject in candidates else "control")
        recorder.record(
            decision_type="stall_response",
            agent_id="EXCEPTION_AGENT",
            subject_id=subject,
            action="wait",
            confidence=0.6,
            model=settings_now.model or "",
        )
    # Outside the rollout's decision type nothing is stamped.
    recorder.record(decision_type="eta_update", agent_id="EXCEPTION_AGENT", subject_id="BK-0", action="x", confidence=1)
    assert await recorder.flush(10) and recorder.counters.sent == len(SUBJECTS) + 1

    listed = await api.get("/admin/ai/decisions", params={"rollout_id": rollout_id, "limit": 200}, headers=WRITER)
    items = listed.json()["items"]
    assert {item["subject_id"] for item in items if item["rollout"]["arm"] == "candidate"} == candidates
    assert len(items) == len(SUBJECTS)
    for item in items[:6]:
        outcome = "success" if item["rollout"]["arm"] == "candidate" else "failure"
        reply = await api.patch(
            f"/internal/agent-decisions/{item['id']}/outcome", json={"outcome": outcome}, headers=internal_headers()
        )
        assert reply.status_code == 200
    counts = await arm_counts(settings, rollout_id)
    judged = {arm: successes + failures for arm, (successes, failures, _, _) in counts.items()}
    pending = {arm: counted[3] for arm, counted in counts.items()}
    assert sum(judged.values()) == 6 and sum(pending.values()) == len(SUBJECTS) - 6
    assert counts["candidate"][1] == 0 and counts["control"][0] == 0

    evidence = registry_pb2.ArmEvidence(judged=3, successes=3, mean=0.8, low=0.4, high=0.99)
    advanced = await judge_as_platform(
        settings,
        registry_pb2.JudgeRolloutRequest(
            id=rollout_id, verdict="advance", step=0, control=evidence, candidate=evidence
        ),
    )
    assert advanced.percent == 100
    await eventually(
        lambda: _async(registry.for_subject("EXCEPTION_AGENT", "stall_response", "BK-0").model),
        lambda model: model == "claude-opus-5-5",
        what="every subject in the candidate arm at 100 %",
    )
    # A verdict on the step it has left is refused, never applied twice.
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await judge_as_platform(settings, registry_pb2.JudgeRolloutRequest(id=rollout_id, verdict="complete", step=0))
    assert refused.value.code() is grpc.StatusCode.FAILED_PRECONDITION
    await judge_as_platform(settings, registry_pb2.JudgeRolloutRequest(id=rollout_id, verdict="complete", step=1))

    # Completed: the rollout leaves the snapshot and its pin is the agent's.
    after = await eventually(
        lambda: _async(registry.snapshot),
        lambda snapshot: snapshot is not None and not snapshot.rollouts,
        what="the completed rollout gone from the engine's snapshot",
    )
    assert after.model("EXCEPTION_AGENT") == "claude-opus-5-5"
    plain = registry.for_subject("EXCEPTION_AGENT", "stall_response", "BK-0")
    assert plain.model == "claude-opus-5-5" and plain.assignment is None
    rollout = (await api.get(f"/admin/ai/rollouts/{rollout_id}", headers=bearer(role=3))).json()
    assert rollout["state"] == "completed"
    assert [(e["event"], e["by"]) for e in rollout["history"]] == [
        ("started", "lead@example.com"),
        ("advanced", "rollout-guard"),
        ("completed", "rollout-guard"),
    ]


async def _async(value):
    return value
