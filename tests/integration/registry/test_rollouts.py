"""Rollouts over gRPC against a real registry: create, the one-active rule,
pause/resume/abort, the guard's verdicts as the platform, completion writing
the baseline, and the audit rows of each state change."""

from __future__ import annotations

import json

import grpc
import pytest

from outrider.rpc import ERROR_CODE_KEY, ERROR_DETAILS_KEY
from outrider.v1 import registry_pb2, registry_pb2_grpc
from tests.harness import engine_channel, eventually, person, running, service_channel
from tests.integration.registry.helpers import registry_db, registry_stub

EVIDENCE = registry_pb2.ArmEvidence(
    judged=60, successes=45, failures=15, unknown=1, pending=3, mean=0.74, low=0.62, high=0.84
)


@pytest.fixture
async def registry(settings):
    async with running(settings, ["registry"]), registry_stub(settings) as stub:
        yield stub


def create(agent_id: str = "EXCEPTION_AGENT", decision_type: str = "stall_response", **fields):
    change = fields.pop("change", {"model": "claude-opus-5-5"})
    return registry_pb2.CreateRolloutRequest(
        agent_id=agent_id, decision_type=decision_type, change_json=json.dumps(change).encode(), **fields
    )


def verdict(rollout: registry_pb2.Rollout, kind: str, **fields) -> registry_pb2.JudgeRolloutRequest:
    return registry_pb2.JudgeRolloutRequest(
        id=rollout.id,
        verdict=kind,
        step=fields.pop("step", rollout.step),
        control=EVIDENCE,
        candidate=EVIDENCE,
        p_harm=fields.pop("p_harm", 0.02),
        reason=fields.pop("reason", f"{kind} on evidence"),
    )


async def judge_as_platform(settings, request):
    async with service_channel(settings, "registry") as channel:
        return await registry_pb2_grpc.RegistryStub(channel).JudgeRollout(request)


async def rollout_audit(template, database, rollout_id: str):
    async with registry_db(template, database) as conn:
        return await conn.fetch(
            "select field, old, new, changed_by, changed_by_email from audit"
            " where entity = 'rollout' and entity_id = $1 order by id",
            rollout_id,
        )


async def test_a_rollout_starts_at_its_first_step_with_the_defaults_and_is_audited(registry, template, database):
    rollout = await registry.CreateRollout(create())
    assert (rollout.state, rollout.step, rollout.percent, list(rollout.steps)) == ("running", 0, 5, [5, 25, 50, 100])
    assert json.loads(rollout.change_json) == {"model": "claude-opus-5-5"}
    assert json.loads(rollout.baseline_json) == {"model": None}
    assert (rollout.guard.max_drop, rollout.guard.confidence, rollout.guard.min_judged) == (0.05, 0.95, 50)
    assert rollout.created_by == "ops@example.com"
    assert [(e.event, e.percent, e.by) for e in rollout.history] == [("started", 5, "ops@example.com")]
    (row,) = await rollout_audit(template, database, rollout.id)
    assert row["field"] == "created" and row["changed_by"] == "u-1"
    assert row["new"]["change"] == {"model": "claude-opus-5-5"} and row["new"]["steps"] == [5, 25, 50, 100]
    assert (await registry.GetRollout(registry_pb2.GetRolloutRequest(id=rollout.id))) == rollout


async def test_a_second_active_rollout_of_one_agent_and_type_is_refused(registry):
    first = await registry.CreateRollout(create())
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await registry.CreateRollout(create(change={"autonomous": True, "confirm": "EXCEPTION_AGENT"}))
    assert caught.value.code() is grpc.StatusCode.FAILED_PRECONDITION
    assert dict(caught.value.trailing_metadata())[ERROR_CODE_KEY] == "ROLLOUT_EXISTS"
    # Another decision type of the same agent is its own rollout, and an
    # aborted one frees its place.
    await registry.CreateRollout(create(decision_type="stall_escalation"))
    await registry.AbortRollout(registry_pb2.RolloutActionRequest(id=first.id))
    assert (await registry.CreateRollout(create())).state == "running"


async def test_a_change_the_patch_refuses_is_refused_by_its_path(registry, template, database):
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await registry.CreateRollout(create(change={"skill_id": "stall_response", "thresholds": {"stallMinutes": 2}}))
    assert caught.value.code() is grpc.StatusCode.INVALID_ARGUMENT
    details = json.loads(dict(caught.value.trailing_metadata())[ERROR_DETAILS_KEY])
    assert "change.thresholds.stallMinutes" in details["fields"]
    async with registry_db(template, database) as conn:
        assert await conn.fetchval("select count(*) from rollouts") == 0


async def test_pause_resume_and_abort_follow_the_states_and_are_audited(registry, template, database):
    rollout = await registry.CreateRollout(create())
    ask = registry_pb2.RolloutActionRequest(id=rollout.id, reason="holiday freeze")
    paused = await registry.PauseRollout(ask)
    assert (paused.state, paused.percent, paused.reason) == ("paused", 5, "holiday freeze")
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await registry.PauseRollout(ask)
    assert caught.value.code() is grpc.StatusCode.FAILED_PRECONDITION
    resumed = await registry.ResumeRollout(registry_pb2.RolloutActionRequest(id=rollout.id))
    assert resumed.state == "running"
    aborted = await registry.AbortRollout(registry_pb2.RolloutActionRequest(id=rollout.id, reason="wrong model"))
    assert (aborted.state, aborted.percent) == ("aborted", 0)
    with pytest.raises(grpc.aio.AioRpcError):
        await registry.ResumeRollout(registry_pb2.RolloutActionRequest(id=rollout.id))
    assert [e.event for e in aborted.history] == ["started", "paused", "resumed", "aborted"]
    rows = await rollout_audit(template, database, rollout.id)
    assert [(r["field"], r["old"], r["new"]) for r in rows if r["field"] == "state"] == [
        ("state", "running", "paused"),
        ("state", "paused", "running"),
        ("state", "running", "aborted"),
    ]
    assert ("percent", 5, 0) in [(r["field"], r["old"], r["new"]) for r in rows]


async def test_an_unknown_rollout_is_not_found(registry):
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await registry.GetRollout(registry_pb2.GetRolloutRequest(id="0b7ec0de-0000-4000-8000-000000000000"))
    assert caught.value.code() is grpc.StatusCode.NOT_FOUND
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await registry.PauseRollout(registry_pb2.RolloutActionRequest(id="not-a-uuid"))
    assert caught.value.code() is grpc.StatusCode.NOT_FOUND


async def test_the_guard_advances_and_completes_and_the_change_becomes_the_baseline(
    settings, registry, template, database
):
    rollout = await registry.CreateRollout(create(steps=[50, 100]))
    advanced = await judge_as_platform(settings, verdict(rollout, "advance"))
    assert (advanced.step, advanced.percent, advanced.reason) == (1, 100, "advance on evidence")
    assert advanced.control == EVIDENCE and advanced.p_harm == pytest.approx(0.02)
    # The same verdict again judged a step the rollout has left.
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await judge_as_platform(settings, verdict(rollout, "advance"))
    assert dict(caught.value.trailing_metadata())[ERROR_CODE_KEY] == "ROLLOUT_MOVED"
    completed = await judge_as_platform(settings, verdict(advanced, "complete"))
    assert (completed.state, completed.percent) == ("completed", 100)
    agent = await registry.GetAgent(registry_pb2.GetAgentRequest(id="EXCEPTION_AGENT"))
    assert agent.agent.model == "claude-opus-5-5"
    async with registry_db(template, database) as conn:
        pin = await conn.fetchrow("select * from audit where entity = 'agent' and field = 'model'")
    assert (pin["old"], pin["new"], pin["changed_by"]) == (None, "claude-opus-5-5", "rollout-guard")
    rows = await rollout_audit(template, database, rollout.id)
    assert {r["changed_by"] for r in rows if r["field"] != "created"} == {"rollout-guard"}
    assert [e.by for e in completed.history] == ["ops@example.com", "rollout-guard", "rollout-guard"]


async def test_completing_a_skill_change_writes_only_the_keys_it_set(settings, registry):
    change = {"skill_id": "stall_response", "thresholds": {"stallMinutes": 15}}
    rollout = await registry.CreateRollout(create(change=change, steps=[100]))
    await judge_as_platform(settings, verdict(rollout, "complete"))
    skills = await registry.ListSkills(registry_pb2.ListSkillsRequest(agent_id="EXCEPTION_AGENT"))
    skill = next(s for s in skills.items if s.id == "stall_response")
    assert skill.thresholds["stallMinutes"] == 15 and skill.thresholds["reassignConfidence"] == pytest.approx(0.7)
    assert skill.version == 2 and skill.updated_by == "rollout-guard"


async def test_a_halt_sets_the_share_to_zero_with_the_reason(settings, registry, template, database):
    rollout = await registry.CreateRollout(create())
    halted = await judge_as_platform(settings, verdict(rollout, "halt", p_harm=0.97, reason="candidate 9 points worse"))
    assert (halted.state, halted.percent, halted.reason) == ("halted", 0, "candidate 9 points worse")
    rows = await rollout_audit(template, database, rollout.id)
    assert ("state", "running", "halted", "rollout-guard") in [
        (r["field"], r["old"], r["new"], r["changed_by"]) for r in rows
    ]
    agent = await registry.GetAgent(registry_pb2.GetAgentRequest(id="EXCEPTION_AGENT"))
    assert agent.agent.model == ""


async def test_an_observation_is_kept_once_while_nothing_changes(settings, registry, template, database):
    rollout = await registry.CreateRollout(create())
    for _ in range(3):
        observed = await judge_as_platform(settings, verdict(rollout, "observe"))
    assert observed.state == "running" and observed.candidate == EVIDENCE
    assert [e.event for e in observed.history] == ["started", "observed"]
    assert len(await rollout_audit(template, database, rollout.id)) == 1


async def test_each_observation_rewrites_the_reason_and_p_harm_without_an_audit_row(
    settings, registry, template, database
):
    rollout = await registry.CreateRollout(create())
    first = await judge_as_platform(settings, verdict(rollout, "observe", p_harm=0.2, reason="waiting: 10 judged"))
    later = await judge_as_platform(settings, verdict(rollout, "observe", p_harm=0.4, reason="waiting: 20 judged"))
    assert (first.reason, first.p_harm) == ("waiting: 10 judged", pytest.approx(0.2))
    assert (later.reason, later.p_harm) == ("waiting: 20 judged", pytest.approx(0.4))
    assert (later.state, later.step) == ("running", 0)
    assert [(e.event, e.reason) for e in later.history][1:] == [
        ("observed", "waiting: 10 judged"),
        ("observed", "waiting: 20 judged"),
    ]
    # Only the creation is audited: an observation moves nothing.
    assert len(await rollout_audit(template, database, rollout.id)) == 1


async def test_verdicts_are_refused_to_a_person_and_to_an_engine(settings, registry):
    rollout = await registry.CreateRollout(create())
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await registry.JudgeRollout(verdict(rollout, "advance"))
    assert caught.value.code() is grpc.StatusCode.PERMISSION_DENIED
    assert dict(caught.value.trailing_metadata())[ERROR_CODE_KEY] == "GUARD_VERDICTS_ONLY"
    async with engine_channel(settings, "registry") as channel:
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await registry_pb2_grpc.RegistryStub(channel).JudgeRollout(verdict(rollout, "advance"))
    assert caught.value.code() is grpc.StatusCode.PERMISSION_DENIED
    assert (await registry.GetRollout(registry_pb2.GetRolloutRequest(id=rollout.id))).step == 0


async def test_writes_need_role_one_and_listing_pages_and_filters(settings, registry):
    async with registry_stub(settings, who=person(3)) as reader:
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await reader.CreateRollout(create())
        assert caught.value.code() is grpc.StatusCode.PERMISSION_DENIED
        first = await registry.CreateRollout(create())
        second = await registry.CreateRollout(create(agent_id="DISPATCH_AGENT", decision_type="assignment_gap"))
        await registry.PauseRollout(registry_pb2.RolloutActionRequest(id=second.id))
        page = await reader.ListRollouts(registry_pb2.ListRolloutsRequest(page={"limit": 1}))
        assert [r.id for r in page.items] == [second.id] and page.next_cursor
        rest = await reader.ListRollouts(
            registry_pb2.ListRolloutsRequest(page={"limit": 1, "cursor": page.next_cursor})
        )
        assert [r.id for r in rest.items] == [first.id] and not rest.next_cursor
        paused = await reader.ListRollouts(registry_pb2.ListRolloutsRequest(state="paused"))
        assert [r.id for r in paused.items] == [second.id]
        mine = await reader.ListRollouts(registry_pb2.ListRolloutsRequest(agent_id="EXCEPTION_AGENT"))
        assert [r.id for r in mine.items] == [first.id]
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await reader.ListRollouts(registry_pb2.ListRolloutsRequest(state="sleeping"))
        assert caught.value.code() is grpc.StatusCode.INVALID_ARGUMENT


async def snapshot_rollouts(registry) -> list[dict]:
    reply = await registry.GetSnapshot(registry_pb2.GetSnapshotRequest())
    return json.loads(reply.snapshot.document).get("rollouts", [])


async def test_the_snapshot_carries_a_rollout_while_it_runs_and_the_new_pin_once_complete(settings, registry):
    rollout = await registry.CreateRollout(create(steps=[50, 100]))
    carried = await eventually(lambda: snapshot_rollouts(registry), what="the rollout in the snapshot")
    assert carried == [
        {
            "id": rollout.id,
            "agent_id": "EXCEPTION_AGENT",
            "decision_type": "stall_response",
            "percent": 50,
            "change": {"model": "claude-opus-5-5"},
        }
    ]
    await registry.PauseRollout(registry_pb2.RolloutActionRequest(id=rollout.id))
    assert await snapshot_rollouts(registry) == carried
    await registry.ResumeRollout(registry_pb2.RolloutActionRequest(id=rollout.id))
    await judge_as_platform(settings, verdict(rollout, "advance"))
    await eventually(lambda: snapshot_rollouts(registry), lambda seen: seen[0]["percent"] == 100)
    await judge_as_platform(
        settings, verdict(await registry.GetRollout(registry_pb2.GetRolloutRequest(id=rollout.id)), "complete")
    )

    async def document():
        return json.loads((await registry.GetSnapshot(registry_pb2.GetSnapshotRequest())).snapshot.document)

    done = await eventually(document, lambda seen: "rollouts" not in seen, what="the completed rollout gone")
    assert done["agents"]["EXCEPTION_AGENT"]["model"] == "claude-opus-5-5"


async def test_a_halted_rollout_leaves_the_snapshot_at_once(settings, registry):
    rollout = await registry.CreateRollout(create())
    await eventually(lambda: snapshot_rollouts(registry), what="the rollout in the snapshot")
    await judge_as_platform(settings, verdict(rollout, "halt", p_harm=0.99))
    assert await eventually(lambda: snapshot_rollouts(registry), lambda seen: seen == []) == []


async def test_completing_autonomy_on_writes_it_with_the_confirmation_typed_at_the_start(
    settings, registry, template, database
):
    change = {"autonomous": True, "confirm": "EXCEPTION_AGENT"}
    rollout = await registry.CreateRollout(create(change=change, steps=[100]))
    assert json.loads(rollout.change_json) == {"autonomous": True}
    await judge_as_platform(settings, verdict(rollout, "complete"))
    agent = await registry.GetAgent(registry_pb2.GetAgentRequest(id="EXCEPTION_AGENT"))
    assert agent.agent.autonomous is True
    async with registry_db(template, database) as conn:
        row = await conn.fetchrow("select * from audit where entity = 'agent' and field = 'autonomous'")
    assert (row["old"], row["new"], row["changed_by"]) == (False, True, "rollout-guard")
