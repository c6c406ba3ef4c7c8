"""Registry writes through the gateway: rules enforced, audit in the same transaction,
optimistic concurrency, and bad input refused naming every field."""

from __future__ import annotations

import asyncio

import grpc
import pytest

from outrider.rpc import ERROR_CODE_KEY
from outrider.v1 import registry_pb2, registry_pb2_grpc
from tests.harness import bearer, gateway_client, person, running, service_channel
from tests.integration.registry.helpers import audit_count, registry_db

WRITER = bearer(role=1, sub="u-42", email="lead@example.com")


@pytest.fixture
async def api(settings):
    async with running(settings, ["registry"]) as servers, gateway_client(settings) as client:
        client.servers = servers
        yield client


async def stored_skill(template, database, skill_id: str):
    async with registry_db(template, database) as conn:
        return await conn.fetchrow("select * from skills where id = $1", skill_id)


# ─── Skills ────────────────────────────────────────────────────────────────


async def test_a_skill_patch_bumps_the_version_and_audits_each_field(api, template, database):
    reply = await api.patch(
        "/admin/ai/skills/stall_response",
        json={"enabled": False, "thresholds": {"stallMinutes": 12, "reassignConfidence": 0.8}, "version": 1},
        headers=WRITER,
    )
    assert reply.status_code == 200, reply.text
    body = reply.json()
    assert body["enabled"] is False and body["version"] == 2
    assert body["thresholds"] == {"stallMinutes": 12, "reassignConfidence": 0.8}
    assert body["updated_by"] == "u-42"
    async with registry_db(template, database) as conn:
        rows = await conn.fetch("select * from audit where entity_id = 'stall_response' order by field")
    assert [(r["entity"], r["field"]) for r in rows] == [("skill", "enabled"), ("skill", "thresholds")]
    assert rows[0]["old"] is True and rows[0]["new"] is False
    assert rows[1]["old"] == {"stallMinutes": 10, "reassignConfidence": 0.7}
    assert rows[1]["new"] == {"stallMinutes": 12, "reassignConfidence": 0.8}
    assert {(r["changed_by"], r["changed_by_email"]) for r in rows} == {("u-42", "lead@example.com")}
    assert all(r["changed_at"] is not None for r in rows)


async def test_a_patch_that_changes_nothing_bumps_no_version_and_writes_no_audit(api, template, database):
    reply = await api.patch(
        "/admin/ai/skills/stall_response", json={"enabled": True, "thresholds": {"stallMinutes": 10}}, headers=WRITER
    )
    assert reply.status_code == 200, reply.text
    assert reply.json()["version"] == 1
    async with registry_db(template, database) as conn:
        assert await audit_count(conn) == 0


async def test_a_stale_version_is_refused_and_changes_nothing(api, template, database):
    first = await api.patch("/admin/ai/skills/stall_response", json={"enabled": False, "version": 1}, headers=WRITER)
    stale = await api.patch(
        "/admin/ai/skills/stall_response", json={"thresholds": {"stallMinutes": 20}, "version": 1}, headers=WRITER
    )
    assert first.status_code == 200
    assert stale.status_code == 409
    error = stale.json()["error"]
    assert error["code"] == "VERSION_CONFLICT"
    assert "version" in error["details"]
    row = await stored_skill(template, database, "stall_response")
    assert row["version"] == 2 and row["thresholds"]["stallMinutes"] == 10


THRESHOLD_CASES = [
    # The skill's own schema refuses these (the registry's rules).
    ({"stallMinutes": 2}, {"thresholds.stallMinutes": "between 3 and 60"}, "INVALID_THRESHOLDS"),
    ({"stallMinutes": 61}, {"thresholds.stallMinutes": "between 3 and 60"}, "INVALID_THRESHOLDS"),
    ({"stallMinutes": 10.5}, {"thresholds.stallMinutes": "whole number"}, "INVALID_THRESHOLDS"),
    ({"reassignConfidence": 0.72}, {"thresholds.reassignConfidence": "multiple of 0.05"}, "INVALID_THRESHOLDS"),
    ({"retryCount": 3}, {"thresholds.retryCount": "unknown threshold"}, "INVALID_THRESHOLDS"),
    # All or nothing: one good key beside bad ones is not applied, and every bad key is named.
    (
        {"stallMinutes": 12, "reassignConfidence": 2, "nope": 1},
        {"thresholds.reassignConfidence": "between 0.5 and 1", "thresholds.nope": "unknown threshold"},
        "INVALID_THRESHOLDS",
    ),
    # The contract refuses these before the registry sees them: not numbers at all.
    ({"stallMinutes": "12"}, {"thresholds.stallMinutes": "must be a number"}, "INVALID_ARGUMENT"),
    ({"stallMinutes": True}, {"thresholds.stallMinutes": "must be a number"}, "INVALID_ARGUMENT"),
    ({"stallMinutes": None}, {"thresholds.stallMinutes": "must be a number"}, "INVALID_ARGUMENT"),
]


@pytest.mark.parametrize(("thresholds", "named", "code"), THRESHOLD_CASES)
async def test_bad_thresholds_are_refused_naming_each_key(api, template, database, thresholds, named, code):
    reply = await api.patch("/admin/ai/skills/stall_response", json={"thresholds": thresholds}, headers=WRITER)
    assert reply.status_code == 422, reply.text
    error = reply.json()["error"]
    assert error["code"] == code
    assert set(error["details"]["fields"]) == set(named)
    for key, fragment in named.items():
        assert fragment in error["details"]["fields"][key]
    row = await stored_skill(template, database, "stall_response")
    assert row["version"] == 1 and row["thresholds"] == {"stallMinutes": 10, "reassignConfidence": 0.7}


async def test_a_threshold_on_a_step_passes_despite_binary_fractions(api):
    reply = await api.patch(
        "/admin/ai/skills/stall_response", json={"thresholds": {"reassignConfidence": 0.85}}, headers=WRITER
    )
    assert reply.status_code == 200, reply.text
    assert reply.json()["thresholds"]["reassignConfidence"] == 0.85


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"enabled": "yes"}, "enabled"),
        ({"thresholds": [1, 2]}, "thresholds"),
        ({"version": 0}, "version"),
        ({"version": "1"}, "version"),
        ({"title": "renamed"}, "title"),
        ({"tool_names": ["scan_bookings"], "colour": "red"}, "colour"),
    ],
)
async def test_malformed_skill_patches_are_refused_naming_the_field(api, template, database, body, field):
    reply = await api.patch("/admin/ai/skills/stall_response", json=body, headers=WRITER)
    assert reply.status_code == 422, reply.text
    error = reply.json()["error"]
    assert error["code"] == "INVALID_ARGUMENT"
    assert field in error["details"]["fields"]
    async with registry_db(template, database) as conn:
        assert await audit_count(conn) == 0


async def test_a_skill_the_seed_disabled_for_a_reason_cannot_be_enabled(api, template, database):
    reply = await api.patch("/admin/ai/skills/dispatch_rebalance", json={"enabled": True}, headers=WRITER)
    assert reply.status_code == 409
    assert reply.json()["error"]["code"] == "SKILL_BLOCKED"
    row = await stored_skill(template, database, "dispatch_rebalance")
    assert row["enabled"] is False


async def test_patching_a_missing_skill_is_404(api):
    reply = await api.patch("/admin/ai/skills/no_such_skill", json={"enabled": False}, headers=WRITER)
    assert reply.status_code == 404
    assert reply.json()["error"]["code"] == "SKILL_NOT_FOUND"


async def test_a_failure_after_the_entity_write_leaves_neither_change_nor_audit(api, template, database):
    async with registry_db(template, database) as conn:
        # The audit insert fails after the skill row was already updated in
        # the same transaction: a real database error, not a mocked one.
        await conn.execute(
            """
            create function registry.refuse_audit() returns trigger language plpgsql as $$
            begin raise exception 'audit store refused the row'; end $$;
            create trigger refuse_audit before insert on registry.audit
            for each row execute function registry.refuse_audit();
            """
        )
    before = await api.get("/internal/ai/registry", headers={"X-Internal-Key": "test-internal-key-0123456789abcdef"})
    reply = await api.patch(
        "/admin/ai/skills/stall_response", json={"enabled": False, "thresholds": {"stallMinutes": 30}}, headers=WRITER
    )
    assert reply.status_code == 500
    assert reply.json()["error"]["code"] == "INTERNAL"
    row = await stored_skill(template, database, "stall_response")
    assert row["enabled"] is True and row["version"] == 1 and row["thresholds"]["stallMinutes"] == 10
    async with registry_db(template, database) as conn:
        assert await audit_count(conn) == 0
    after = await api.get("/internal/ai/registry", headers={"X-Internal-Key": "test-internal-key-0123456789abcdef"})
    assert after.headers["etag"] == before.headers["etag"]


async def test_fifty_concurrent_patches_on_one_version_one_wins(api, template, database):
    async def attempt(n: int):
        return await api.patch(
            "/admin/ai/skills/stall_response",
            json={"thresholds": {"stallMinutes": 11 + n % 40}, "version": 1},
            headers=WRITER,
        )

    replies = await asyncio.gather(*(attempt(n) for n in range(50)))
    statuses = sorted(r.status_code for r in replies)
    assert statuses.count(200) == 1
    assert statuses.count(409) == 49
    assert {r.json()["error"]["code"] for r in replies if r.status_code == 409} == {"VERSION_CONFLICT"}
    winner = next(r.json() for r in replies if r.status_code == 200)
    row = await stored_skill(template, database, "stall_response")
    assert row["version"] == 2
    assert row["thresholds"]["stallMinutes"] == winner["thresholds"]["stallMinutes"]
    async with registry_db(template, database) as conn:
        assert await audit_count(conn, "stall_response") == 1


async def test_unversioned_concurrent_patches_all_apply_with_one_audit_row_each(api, template, database):
    async def attempt(n: int):
        return await api.patch(
            "/admin/ai/skills/stall_response", json={"thresholds": {"stallMinutes": 11 + n}}, headers=WRITER
        )

    replies = await asyncio.gather(*(attempt(n) for n in range(20)))
    assert {r.status_code for r in replies} == {200}
    assert sorted(r.json()["version"] for r in replies) == list(range(2, 22))
    async with registry_db(template, database) as conn:
        assert await audit_count(conn, "stall_response") == 20


async def test_new_skill_on_a_console_agent_from_existing_tools(api, template, database):
    reply = await api.post(
        "/admin/ai/skills",
        json={
            "id": "late_rider_digest",
            "agent_id": "CONSOLE_OPS_AGENT",
            "title": "Late rider digest",
            "tool_names": ["scan_bookings", "notify_riders"],
            "thresholds_schema": {"lateMinutes": {"type": "integer", "min": 5, "max": 60, "step": 5, "default": 15}},
            "thresholds": {"lateMinutes": 20},
        },
        headers=WRITER,
    )
    assert reply.status_code == 201, reply.text
    body = reply.json()
    assert body["source"] == "custom" and body["version"] == 1 and body["enabled"] is True
    assert body["tool_names"] == ["scan_bookings", "notify_riders"]
    assert body["thresholds"] == {"lateMinutes": 20}
    assert body["thresholds_schema"]["lateMinutes"]["step"] == 5
    listed = await api.get("/admin/ai/skills", params={"agent": "CONSOLE_OPS_AGENT"}, headers=bearer(role=3))
    assert "late_rider_digest" in {s["id"] for s in listed.json()["items"]}
    async with registry_db(template, database) as conn:
        audit = await conn.fetch("select field, new, changed_by from audit where entity_id = 'late_rider_digest'")
    assert [(r["field"], r["changed_by"]) for r in audit] == [("created", "u-42")]
    again = await api.post(
        "/admin/ai/skills",
        json={
            "id": "late_rider_digest",
            "agent_id": "CONSOLE_OPS_AGENT",
            "title": "x",
            "tool_names": ["scan_bookings"],
        },
        headers=WRITER,
    )
    assert again.status_code == 409
    assert again.json()["error"]["code"] == "SKILL_EXISTS"


@pytest.mark.parametrize(
    ("draft", "named", "code"),
    [
        # The registry's rules: which agents take new skills, which tools exist.
        (
            {"id": "x_skill", "agent_id": "EXCEPTION_AGENT", "title": "t", "tool_names": ["nearby_milers"]},
            {"agent_id"},
            "INVALID_SKILL",
        ),
        (
            {"id": "x_skill", "agent_id": "CONSOLE_OPS_AGENT", "title": "t", "tool_names": ["invented_tool"]},
            {"tool_names"},
            "INVALID_SKILL",
        ),
        (
            {
                "id": "x_skill",
                "agent_id": "CONSOLE_OPS_AGENT",
                "title": "t",
                "tool_names": ["scan_bookings"],
                "thresholds_schema": {"k": {"type": "integer", "min": 5, "max": 1, "step": 1, "default": 2}},
            },
            {"thresholds_schema.k"},
            "INVALID_SKILL",
        ),
        # The contract: shapes the document states.
        ({"agent_id": "CONSOLE_OPS_AGENT", "tool_names": []}, {"id", "title", "tool_names"}, "INVALID_ARGUMENT"),
        (
            {
                "id": "Bad-Id",
                "agent_id": "CONSOLE_OPS_AGENT",
                "title": "t",
                "tool_names": ["scan_bookings"],
                "source": "engine",
                "thresholds_schema": {"k": {"type": "integer", "min": 1, "max": 5}},
            },
            {"id", "source", "thresholds_schema.k.step", "thresholds_schema.k.default"},
            "INVALID_ARGUMENT",
        ),
    ],
)
async def test_bad_new_skills_are_refused_naming_every_field(api, template, database, draft, named, code):
    reply = await api.post("/admin/ai/skills", json=draft, headers=WRITER)
    assert reply.status_code == 422, reply.text
    error = reply.json()["error"]
    assert error["code"] == code
    assert set(error["details"]["fields"]) == named
    async with registry_db(template, database) as conn:
        assert await conn.fetchval("select count(*) from skills") == 15
        assert await audit_count(conn) == 0


# ─── Agents ────────────────────────────────────────────────────────────────


async def test_autonomy_on_needs_the_typed_agent_id(api, template, database):
    missing = await api.patch("/admin/ai/agents/EXCEPTION_AGENT", json={"autonomous": True}, headers=WRITER)
    wrong = await api.patch(
        "/admin/ai/agents/EXCEPTION_AGENT", json={"autonomous": True, "confirm": "exception_agent"}, headers=WRITER
    )
    right = await api.patch(
        "/admin/ai/agents/EXCEPTION_AGENT", json={"autonomous": True, "confirm": "EXCEPTION_AGENT"}, headers=WRITER
    )
    off = await api.patch("/admin/ai/agents/EXCEPTION_AGENT", json={"autonomous": False}, headers=WRITER)
    assert (missing.status_code, missing.json()["error"]["code"]) == (422, "CONFIRMATION_REQUIRED")
    assert (wrong.status_code, wrong.json()["error"]["code"]) == (422, "CONFIRMATION_MISMATCH")
    assert right.status_code == 200 and right.json()["autonomous"] is True
    assert off.status_code == 200 and off.json()["autonomous"] is False
    async with registry_db(template, database) as conn:
        audit = await conn.fetch("select field, old, new from audit where entity = 'agent' order by id")
    assert [(r["field"], r["old"], r["new"]) for r in audit] == [
        ("autonomous", False, True),
        ("autonomous", True, False),
    ]


@pytest.mark.parametrize(
    ("agent_id", "body", "code", "field"),
    [
        ("JARVIS", {"autonomous": True, "confirm": "JARVIS"}, "NO_AUTONOMY_GATE", "autonomous"),
        ("EXCEPTION_AGENT", {"model": "gpt-4o"}, "MODEL_NOT_ALLOWED", "model"),
        ("CONSOLE_OPS_AGENT", {"model": "claude-sonnet-5-5"}, "MODEL_NOT_SETTABLE", "model"),
        ("EXCEPTION_AGENT", {"status": "live"}, "INVALID_ARGUMENT", "status"),
        ("EXCEPTION_AGENT", {"autonomous": "on"}, "INVALID_ARGUMENT", "autonomous"),
        ("EXCEPTION_AGENT", {"model": 5}, "INVALID_ARGUMENT", "model"),
        ("EXCEPTION_AGENT", {"autonomy_guard": "yes"}, "INVALID_ARGUMENT", "autonomy_guard"),
    ],
)
async def test_agent_patches_the_rules_refuse(api, template, database, agent_id, body, code, field):
    reply = await api.patch(f"/admin/ai/agents/{agent_id}", json=body, headers=WRITER)
    assert reply.status_code == 422, reply.text
    error = reply.json()["error"]
    assert error["code"] == code
    assert field in error["details"]["fields"]
    async with registry_db(template, database) as conn:
        assert await audit_count(conn) == 0


async def test_a_model_pin_is_set_and_cleared_on_an_engine_agent(api):
    pinned = await api.patch("/admin/ai/agents/DISPATCH_AGENT", json={"model": "claude-opus-4-8"}, headers=WRITER)
    cleared = await api.patch("/admin/ai/agents/DISPATCH_AGENT", json={"model": None}, headers=WRITER)
    assert pinned.json()["model"] == "claude-opus-4-8"
    assert cleared.status_code == 200 and cleared.json()["model"] is None


async def test_patching_a_missing_agent_is_404(api):
    reply = await api.patch("/admin/ai/agents/NOBODY", json={"autonomous": False}, headers=WRITER)
    assert reply.status_code == 404
    assert reply.json()["error"]["code"] == "AGENT_NOT_FOUND"


async def test_the_service_itself_refuses_a_write_nobody_signed(api, settings):
    async with (
        service_channel(settings, "registry") as unsigned,
        service_channel(settings, "registry", person(sub="svc-7")) as signed,
    ):
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await registry_pb2_grpc.RegistryStub(unsigned).UpdateSkill(
                registry_pb2.UpdateSkillRequest(id="stall_response", enabled=False)
            )
        reply = await registry_pb2_grpc.RegistryStub(signed).UpdateSkill(
            registry_pb2.UpdateSkillRequest(id="stall_response", enabled=False)
        )
    assert caught.value.code() == grpc.StatusCode.PERMISSION_DENIED
    assert reply.version == 2 and reply.updated_by == "svc-7"


async def test_the_autonomy_guard_is_opted_into_audited_and_shown(api, template, database):
    before = await api.get("/admin/ai/agents/EXCEPTION_AGENT", headers=WRITER)
    on = await api.patch("/admin/ai/agents/EXCEPTION_AGENT", json={"autonomy_guard": True}, headers=WRITER)
    again = await api.patch("/admin/ai/agents/EXCEPTION_AGENT", json={"autonomy_guard": True}, headers=WRITER)
    listed = await api.get("/admin/ai/agents", headers=WRITER)
    assert before.json()["autonomy_guard"] is False
    assert on.status_code == 200 and on.json()["autonomy_guard"] is True
    assert again.status_code == 200
    shown = {agent["id"]: agent["autonomy_guard"] for agent in listed.json()["items"]}
    assert shown["EXCEPTION_AGENT"] is True and shown["DISPATCH_AGENT"] is False
    async with registry_db(template, database) as conn:
        audit = await conn.fetch("select field, old, new, changed_by from audit where entity = 'agent' order by id")
        stored = await conn.fetchval("select autonomy_guard from agents where id = 'EXCEPTION_AGENT'")
    # The repeat changed nothing, so it wrote no second row.
    assert [(r["field"], r["old"], r["new"], r["changed_by"]) for r in audit] == [
        ("autonomy_guard", False, True, "u-42")
    ]
    assert stored is True


async def test_a_reader_may_not_set_the_autonomy_guard(api, template, database):
    reply = await api.patch(
        "/admin/ai/agents/EXCEPTION_AGENT", json={"autonomy_guard": True}, headers=bearer(role=3, sub="u-9")
    )
    assert reply.status_code == 403, reply.text
    async with registry_db(template, database) as conn:
        assert await audit_count(conn) == 0


async def make_autonomous(api, agent_id: str, *, guarded: bool) -> None:
    reply = await api.patch(
        f"/admin/ai/agents/{agent_id}",
        json={"autonomous": True, "confirm": agent_id, "autonomy_guard": guarded},
        headers=WRITER,
    )
    assert reply.status_code == 200, reply.text


async def test_the_platform_turns_a_guarded_agents_autonomy_off_audited_as_the_guard(api, settings, template, database):
    await make_autonomous(api, "EXCEPTION_AGENT", guarded=True)
    async with service_channel(settings, "registry") as platform:
        stub = registry_pb2_grpc.RegistryStub(platform)
        demoted = await stub.UpdateAgent(registry_pb2.UpdateAgentRequest(id="EXCEPTION_AGENT", autonomous=False))
        repeated = await stub.UpdateAgent(registry_pb2.UpdateAgentRequest(id="EXCEPTION_AGENT", autonomous=False))
    assert demoted.autonomous is False and demoted.autonomy_guard is True
    assert repeated.autonomous is False
    async with registry_db(template, database) as conn:
        rows = await conn.fetch(
            "select field, old, new, changed_by, changed_by_email from audit where entity = 'agent' order by id"
        )
    assert [(r["field"], r["old"], r["new"], r["changed_by"], r["changed_by_email"]) for r in rows][-1] == (
        "autonomous",
        True,
        False,
        "autonomy-guard",
        "",
    )
    assert [r["changed_by"] for r in rows].count("autonomy-guard") == 1


@pytest.mark.parametrize(
    ("guarded", "request_fields", "code"),
    [
        (False, {"autonomous": False}, "GUARD_NOT_OPTED_IN"),
        (True, {"autonomous": True, "confirm": "EXCEPTION_AGENT"}, "GUARD_DEMOTES_ONLY"),
        (True, {"model": "claude-opus-4-8"}, "GUARD_DEMOTES_ONLY"),
        (True, {"autonomy_guard": False}, "GUARD_DEMOTES_ONLY"),
        (True, {"autonomous": False, "autonomy_guard": False}, "GUARD_DEMOTES_ONLY"),
    ],
)
async def test_the_platform_may_make_no_other_agent_change(
    api, settings, template, database, guarded, request_fields, code
):
    await make_autonomous(api, "EXCEPTION_AGENT", guarded=guarded)
    async with registry_db(template, database) as conn:
        before = await audit_count(conn)
    async with service_channel(settings, "registry") as platform:
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await registry_pb2_grpc.RegistryStub(platform).UpdateAgent(
                registry_pb2.UpdateAgentRequest(id="EXCEPTION_AGENT", **request_fields)
            )
    assert caught.value.code() == grpc.StatusCode.PERMISSION_DENIED
    assert dict(caught.value.trailing_metadata())[ERROR_CODE_KEY] == code
    async with registry_db(template, database) as conn:
        assert await audit_count(conn) == before
        assert await conn.fetchval("select autonomous from agents where id = 'EXCEPTION_AGENT'") is True


async def test_a_person_below_role_1_still_may_not_turn_autonomy_off(api, settings, template, database):
    await make_autonomous(api, "EXCEPTION_AGENT", guarded=True)
    async with service_channel(settings, "registry", person(role=3, sub="u-9")) as reader:
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await registry_pb2_grpc.RegistryStub(reader).UpdateAgent(
                registry_pb2.UpdateAgentRequest(id="EXCEPTION_AGENT", autonomous=False)
            )
    assert caught.value.code() == grpc.StatusCode.PERMISSION_DENIED
    async with registry_db(template, database) as conn:
        assert await conn.fetchval("select autonomous from agents where id = 'EXCEPTION_AGENT'") is True
