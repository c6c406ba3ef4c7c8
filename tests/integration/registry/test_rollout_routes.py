"""Rollouts through the gateway: shapes as DESIGN §9, role gates, tenants,
the 409s and the audit rows, against a real registry."""

from __future__ import annotations

import pytest

from tests.harness import bearer, gateway_client, running

WRITER = bearer(role=1, sub="u-42", email="lead@example.com")
MODEL_ROLLOUT = {
    "agent_id": "EXCEPTION_AGENT",
    "decision_type": "stall_response",
    "change": {"model": "claude-opus-5-5"},
}


@pytest.fixture
async def api(settings):
    async with running(settings, ["registry"]), gateway_client(settings) as client:
        yield client


async def started(api, body=None) -> dict:
    reply = await api.post("/admin/ai/rollouts", json=body or MODEL_ROLLOUT, headers=WRITER)
    assert reply.status_code == 201, reply.text
    return reply.json()


async def test_a_rollout_is_created_with_its_first_step_and_has_the_design_shape(api):
    rollout = await started(api, {**MODEL_ROLLOUT, "steps": [10, 50, 100], "guard": {"min_judged": 80}})
    assert set(rollout) >= {
        "id",
        "agent_id",
        "decision_type",
        "change",
        "steps",
        "step",
        "percent",
        "state",
        "guard",
        "arms",
        "p_harm",
        "reason",
        "created_by",
        "created_at",
        "updated_at",
    }
    assert (rollout["state"], rollout["step"], rollout["percent"], rollout["steps"]) == (
        "running",
        0,
        10,
        [10, 50, 100],
    )
    assert rollout["change"] == {"model": "claude-opus-5-5"} and rollout["baseline"] == {"model": None}
    assert rollout["guard"] == {"max_drop": 0.05, "confidence": 0.95, "min_judged": 80}
    assert set(rollout["arms"]) == {"control", "candidate"}
    assert set(rollout["arms"]["candidate"]) == {
        "judged",
        "successes",
        "failures",
        "unknown",
        "pending",
        "mean",
        "low",
        "high",
    }
    assert rollout["p_harm"] is None and rollout["created_by"] == "lead@example.com"
    assert rollout["created_at"].endswith("+00:00")
    reply = await api.get(f"/admin/ai/rollouts/{rollout['id']}", headers=bearer(role=4))
    assert reply.status_code == 200 and reply.json() == rollout


async def test_a_second_rollout_for_the_same_agent_and_type_is_409(api):
    first = await started(api)
    second = await api.post(
        "/admin/ai/rollouts",
        json={**MODEL_ROLLOUT, "change": {"skill_id": "stall_response", "enabled": False}},
        headers=WRITER,
    )
    assert second.status_code == 409
    error = second.json()["error"]
    assert error["code"] == "ROLLOUT_EXISTS" and error["details"]["rollout_id"] == first["id"]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({**MODEL_ROLLOUT, "steps": [50, 25, 100]}, "steps[1]"),
        ({**MODEL_ROLLOUT, "steps": [5, 50]}, "steps"),
        ({**MODEL_ROLLOUT, "change": {"model": "gpt-5"}}, "change.model"),
        ({**MODEL_ROLLOUT, "change": {"autonomous": True}}, "change.confirm"),
        ({**MODEL_ROLLOUT, "change": {"skill_id": "stall_response", "thresholds": {"stallMinutes": 99}}}, None),
        ({**MODEL_ROLLOUT, "guard": {"max_drop": 1.5}}, None),
        ({**MODEL_ROLLOUT, "decision_type": "Stall Response"}, None),
        ({**MODEL_ROLLOUT, "color": "red"}, None),
    ],
)
async def test_malformed_rollouts_are_422_naming_the_field(api, body, field):
    reply = await api.post("/admin/ai/rollouts", json=body, headers=WRITER)
    assert reply.status_code == 422, reply.text
    if field is not None:
        assert field in reply.json()["error"]["details"]["fields"]
    listed = await api.get("/admin/ai/rollouts", headers=WRITER)
    assert listed.json()["items"] == []


async def test_an_unknown_agent_is_404(api):
    reply = await api.post("/admin/ai/rollouts", json={**MODEL_ROLLOUT, "agent_id": "NOBODY"}, headers=WRITER)
    assert reply.status_code == 404


async def test_pause_resume_abort_answer_the_rollout_and_409_when_the_state_refuses(api):
    rollout = await started(api)
    base = f"/admin/ai/rollouts/{rollout['id']}"
    paused = await api.post(f"{base}/pause", json={"reason": "holiday freeze"}, headers=WRITER)
    assert paused.status_code == 200 and paused.json()["state"] == "paused"
    assert paused.json()["reason"] == "holiday freeze" and paused.json()["percent"] == 5
    assert (await api.post(f"{base}/pause", headers=WRITER)).status_code == 409
    assert (await api.post(f"{base}/resume", headers=WRITER)).json()["state"] == "running"
    aborted = await api.post(f"{base}/abort", headers=WRITER)
    assert aborted.status_code == 200 and (aborted.json()["state"], aborted.json()["percent"]) == ("aborted", 0)
    refused = await api.post(f"{base}/resume", headers=WRITER)
    assert refused.status_code == 409 and refused.json()["error"]["code"] == "ROLLOUT_STATE"
    assert [e["event"] for e in aborted.json()["history"]] == ["started", "paused", "resumed", "aborted"]
    missing = await api.post("/admin/ai/rollouts/0b7ec0de-0000-4000-8000-000000000000/pause", headers=WRITER)
    assert missing.status_code == 404


async def test_readers_read_and_only_role_one_writes_and_tenants_see_nothing(api):
    rollout = await started(api)
    base = f"/admin/ai/rollouts/{rollout['id']}"
    for role in (3, 4):
        reader = bearer(role=role)
        assert (await api.get("/admin/ai/rollouts", headers=reader)).status_code == 200
        assert (await api.get(base, headers=reader)).status_code == 200
        assert (await api.post("/admin/ai/rollouts", json=MODEL_ROLLOUT, headers=reader)).status_code == 403
        for action in ("pause", "resume", "abort"):
            assert (await api.post(f"{base}/{action}", headers=reader)).status_code == 403
    tenant = bearer(role=1, tenant=7)
    assert (await api.get("/admin/ai/rollouts", headers=tenant)).status_code == 403
    assert (await api.post(f"{base}/abort", headers=tenant)).status_code == 403
    assert (await api.get(base, headers=WRITER)).json()["state"] == "running"


async def test_the_listing_pages_and_filters(api):
    first = await started(api)
    second = await started(api, {**MODEL_ROLLOUT, "agent_id": "DISPATCH_AGENT", "decision_type": "assignment_gap"})
    await api.post(f"/admin/ai/rollouts/{second['id']}/pause", headers=WRITER)
    page = (await api.get("/admin/ai/rollouts?limit=1", headers=WRITER)).json()
    assert [r["id"] for r in page["items"]] == [second["id"]] and page["next_cursor"]
    rest = (await api.get(f"/admin/ai/rollouts?limit=1&cursor={page['next_cursor']}", headers=WRITER)).json()
    assert [r["id"] for r in rest["items"]] == [first["id"]] and rest["next_cursor"] is None
    paused = (await api.get("/admin/ai/rollouts?state=paused", headers=WRITER)).json()
    assert [r["id"] for r in paused["items"]] == [second["id"]]
    mine = (await api.get("/admin/ai/rollouts?agent_id=EXCEPTION_AGENT", headers=WRITER)).json()
    assert [r["id"] for r in mine["items"]] == [first["id"]]
    assert (await api.get("/admin/ai/rollouts?state=sleeping", headers=WRITER)).status_code == 422
    assert (await api.get("/admin/ai/rollouts?agent_id=NOBODY", headers=WRITER)).status_code == 404


async def test_every_state_change_is_in_the_audit_listing(api):
    rollout = await started(api)
    await api.post(f"/admin/ai/rollouts/{rollout['id']}/abort", json={"reason": "wrong model"}, headers=WRITER)
    reply = await api.get(f"/admin/ai/audit?entity=rollout&entity_id={rollout['id']}", headers=bearer(role=3))
    assert reply.status_code == 200
    rows = reply.json()["items"]
    assert [row["field"] for row in reversed(rows)] == ["created", "state", "percent", "reason"]
    assert {(row["changed_by"], row["changed_by_email"]) for row in rows} == {("u-42", "lead@example.com")}
