"""Registry reads through the gateway: badges, counts, filters, confirmation flags, paged audit."""

from __future__ import annotations

import pytest

from tests.harness import bearer, gateway_client, running

READER = bearer(role=4)
WRITER = bearer(role=1)


@pytest.fixture
async def api(settings):
    async with running(settings, ["registry"]), gateway_client(settings) as client:
        yield client


async def test_agents_carry_badges_and_counts(api):
    reply = await api.get("/admin/ai/agents", headers=READER)
    assert reply.status_code == 200
    agents = {a["id"]: a for a in reply.json()["items"]}
    assert len(agents) == 11
    assert agents["HUB_AGENT"]["status"] == "simulation"
    assert agents["ORDER_AGENT"]["status"] == "broken" and agents["ORDER_AGENT"]["status_note"]
    assert agents["CONSOLE_OPS_AGENT"]["skill_count"] == 10
    exception = agents["EXCEPTION_AGENT"]
    assert (exception["skill_count"], exception["tool_count"]) == (1, 6)
    assert exception["has_autonomy_gate"] is True and exception["autonomous"] is False
    assert sum(a["has_autonomy_gate"] for a in agents.values()) == 3


async def test_one_agent_with_its_skills_tools_and_surfaces(api):
    reply = await api.get("/admin/ai/agents/EXCEPTION_AGENT", headers=READER)
    assert reply.status_code == 200
    body = reply.json()
    assert body["id"] == "EXCEPTION_AGENT"
    assert [s["id"] for s in body["skills"]] == ["stall_response"]
    skill = body["skills"][0]
    assert skill["thresholds"] == {"reassignConfidence": 0.7, "stallMinutes": 10}
    assert skill["thresholds_schema"]["stallMinutes"] == {
        "type": "integer",
        "min": 3,
        "max": 60,
        "step": 1,
        "default": 10,
        "description": skill["thresholds_schema"]["stallMinutes"]["description"],
    }
    tools = {t["name"]: t for t in body["tools"]}
    assert set(tools) == set(skill["tool_names"])
    assert tools["reassign_booking"]["requires_confirmation"] is True
    assert tools["nearby_milers"]["requires_confirmation"] is False
    assert tools["reassign_booking"]["input_schema"]["type"] == "object"
    assert tools["reassign_booking"]["base_url_key"] is None
    assert body["surfaces"] == []


async def test_an_agent_lists_the_screens_it_shows_up_on(api):
    reply = await api.get("/admin/ai/agents/CONSOLE_OPS_AGENT", headers=READER)
    surfaces = reply.json()["surfaces"]
    assert [s["id"] for s in surfaces] == ["ops_banner"]
    assert surfaces[0]["path"] is None and surfaces[0]["name"]


async def test_http_tools_name_their_backend_setting_and_path(api):
    reply = await api.get("/admin/ai/agents/EXPRESS_DISPATCH_AGENT", headers=READER)
    tools = {t["name"]: t for t in reply.json()["tools"]}
    http = tools["list_express_bookings"]
    assert http["executor"] == "http"
    assert http["base_url_key"] and http["http_path"].startswith("/")


async def test_a_missing_agent_is_404(api):
    reply = await api.get("/admin/ai/agents/NOBODY", headers=READER)
    assert reply.status_code == 404
    assert reply.json()["error"]["code"] == "AGENT_NOT_FOUND"


async def test_skills_filter_by_agent_and_refuse_an_unknown_one(api):
    all_skills = await api.get("/admin/ai/skills", headers=READER)
    ops = await api.get("/admin/ai/skills", params={"agent": "CONSOLE_OPS_AGENT"}, headers=READER)
    unknown = await api.get("/admin/ai/skills", params={"agent": "NOBODY"}, headers=READER)
    assert len(all_skills.json()["items"]) == 15
    assert {s["agent_id"] for s in ops.json()["items"]} == {"CONSOLE_OPS_AGENT"}
    assert len(ops.json()["items"]) == 10
    assert unknown.status_code == 404
    assert "agent" in unknown.json()["error"]["details"]


async def test_tools_filter_by_kind_and_refuse_an_unknown_kind(api):
    writes = await api.get("/admin/ai/tools", params={"kind": "write"}, headers=READER)
    bad = await api.get("/admin/ai/tools", params={"kind": "delete"}, headers=READER)
    items = writes.json()["items"]
    assert items and {t["kind"] for t in items} == {"write"}
    assert all(t["requires_confirmation"] for t in items)
    assert bad.status_code == 422
    assert "kind" in bad.json()["error"]["details"]["fields"]


async def test_autonomy_lifts_confirmation_only_for_that_agent(api):
    await api.patch(
        "/admin/ai/agents/EXCEPTION_AGENT", json={"autonomous": True, "confirm": "EXCEPTION_AGENT"}, headers=WRITER
    )
    tools = {t["name"]: t for t in (await api.get("/admin/ai/tools", headers=READER)).json()["items"]}
    assert tools["reassign_booking"]["requires_confirmation"] is False
    assert tools["publish_miler_stalled"]["requires_confirmation"] is False
    # Shared with CUSTOMER_AGENT, which is not autonomous: still waits for a human there.
    notify = tools["notify_customer"]
    assert notify["requires_confirmation_by_agent"] == {"CUSTOMER_AGENT": True, "EXCEPTION_AGENT": False}
    assert notify["requires_confirmation"] is True
    assert tools["assign_express_batch"]["requires_confirmation"] is True


async def test_audit_pages_newest_first_with_filters(api):
    for minutes in range(11, 16):
        await api.patch(
            "/admin/ai/skills/stall_response", json={"thresholds": {"stallMinutes": minutes}}, headers=WRITER
        )
    await api.patch("/admin/ai/skills/doorstep_stall", json={"enabled": False}, headers=WRITER)
    first = await api.get(
        "/admin/ai/audit", params={"entity": "skill", "entity_id": "stall_response", "limit": 2}, headers=READER
    )
    body = first.json()
    assert [row["new"]["stallMinutes"] for row in body["items"]] == [15, 14]
    pages = [body["items"]]
    while body["next_cursor"]:
        body = (
            await api.get(
                "/admin/ai/audit",
                params={"entity": "skill", "entity_id": "stall_response", "limit": 2, "cursor": body["next_cursor"]},
                headers=READER,
            )
        ).json()
        pages.append(body["items"])
    seen = [row["new"]["stallMinutes"] for page in pages for row in page]
    assert seen == [15, 14, 13, 12, 11]
    assert [len(page) for page in pages] == [2, 2, 1]
    everything = (await api.get("/admin/ai/audit", headers=READER)).json()["items"]
    assert len(everything) == 6 and everything[0]["entity_id"] == "doorstep_stall"
    row = everything[0]
    assert set(row) >= {"entity", "entity_id", "field", "old", "new", "changed_by", "changed_by_email", "changed_at"}
    assert row["changed_at"].endswith("+00:00")


@pytest.mark.parametrize(
    ("params", "field"),
    [({"entity": "tool"}, "entity"), ({"limit": 500}, "limit"), ({"cursor": "not-a-cursor"}, "cursor")],
)
async def test_bad_audit_queries_name_the_field(api, params, field):
    reply = await api.get("/admin/ai/audit", params=params, headers=READER)
    assert reply.status_code == 422
    assert field in reply.json()["error"]["details"]["fields"]


async def test_audit_filters_by_the_person_who_changed_it(api):
    lead = bearer(role=1, sub="u-lead", email="lead@example.com")
    other = bearer(role=1, sub="u-other", email="other@example.com")
    await api.patch("/admin/ai/skills/stall_response", json={"thresholds": {"stallMinutes": 12}}, headers=lead)
    await api.patch("/admin/ai/skills/doorstep_stall", json={"enabled": False}, headers=other)
    await api.patch("/admin/ai/skills/stall_response", json={"thresholds": {"stallMinutes": 13}}, headers=other)
    by_email = (await api.get("/admin/ai/audit", params={"actor": "other@example.com"}, headers=READER)).json()
    by_sub = (await api.get("/admin/ai/audit", params={"actor": "u-lead"}, headers=READER)).json()
    both = (
        await api.get("/admin/ai/audit", params={"actor": "u-other", "entity_id": "stall_response"}, headers=READER)
    ).json()
    nobody = (await api.get("/admin/ai/audit", params={"actor": "nobody@example.com"}, headers=READER)).json()
    assert [(r["entity_id"], r["changed_by"]) for r in by_email["items"]] == [
        ("stall_response", "u-other"),
        ("doorstep_stall", "u-other"),
    ]
    assert [(r["entity_id"], r["new"]["stallMinutes"]) for r in by_sub["items"]] == [("stall_response", 12)]
    assert [r["new"]["stallMinutes"] for r in both["items"]] == [13]
    assert nobody == {"items": [], "next_cursor": None}


async def test_an_unchanged_agent_answers_304_to_its_etag_and_a_change_moves_it(api):
    first = await api.get("/admin/ai/agents/EXCEPTION_AGENT", headers=READER)
    etag = first.headers["etag"]
    same = await api.get("/admin/ai/agents/EXCEPTION_AGENT", headers={**READER, "If-None-Match": etag})
    assert (same.status_code, same.content, same.headers["etag"]) == (304, b"", etag)
    skill = first.json()["skills"][0]
    switch = {"enabled": not skill["enabled"], "version": skill["version"]}
    changed = await api.patch(f"/admin/ai/skills/{skill['id']}", json=switch, headers=WRITER)
    assert changed.status_code == 200, changed.text
    moved = await api.get("/admin/ai/agents/EXCEPTION_AGENT", headers={**READER, "If-None-Match": etag})
    assert moved.status_code == 200 and moved.headers["etag"] != etag
    assert moved.json()["skills"][0]["enabled"] is not skill["enabled"]
