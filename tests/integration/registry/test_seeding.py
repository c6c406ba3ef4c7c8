"""Seeding: idempotent, code-defined fields follow the seed, operator choices survive."""

from __future__ import annotations

import asyncio
from dataclasses import replace

from services.common.runtime import ContextServer
from services.registry.inventory import load_inventory
from services.registry.seeding import seed_registry
from tests.harness import bearer, gateway_client, running
from tests.integration.registry.helpers import all_rows, audit_count, registry_db


async def test_seeding_twice_leaves_the_same_rows(settings, template, database):
    counts = await seed_registry(settings.database_url)
    async with registry_db(template, database) as conn:
        first = await all_rows(conn)
    again = await seed_registry(settings.database_url)
    async with registry_db(template, database) as conn:
        second = await all_rows(conn)
    assert counts == again == {"agents": 11, "tools": 24, "skills": 15, "surfaces": 4}
    assert len(first["agents"]) == 11 and len(first["tools"]) == 24 and len(first["skills"]) == 15
    assert len(first["surfaces"]) == 4
    assert first == second  # updated_at included: nothing was rewritten
    assert first["audit"] == []


async def test_seed_ships_no_data_skills_disabled_with_their_reason(settings, template, database):
    await seed_registry(settings.database_url)
    async with registry_db(template, database) as conn:
        rows = await conn.fetch("select id, enabled, disabled_reason from skills where not enabled order by id")
        order = await conn.fetch(
            "select tool_name from skill_tools where skill_id = 'stall_response' order by position"
        )
    assert {row["id"] for row in rows} >= {
        "high_value_cod",
        "cash_exposure",
        "rider_battery_safety",
        "dispatch_rebalance",
    }
    assert all(row["disabled_reason"] for row in rows)
    seeded = next(s for s in load_inventory().skills if s.id == "stall_response")
    assert tuple(row["tool_name"] for row in order) == seeded.tool_names


async def test_operator_changes_survive_a_reseed(settings, template, database):
    async with running(settings, ["registry"]), gateway_client(settings) as client:
        agent = await client.patch(
            "/admin/ai/agents/EXCEPTION_AGENT",
            json={"autonomous": True, "confirm": "EXCEPTION_AGENT", "model": "claude-opus-4-8"},
            headers=bearer(role=1),
        )
        skill = await client.patch(
            "/admin/ai/skills/stall_response",
            json={"enabled": False, "thresholds": {"stallMinutes": 15}},
            headers=bearer(role=1),
        )
    assert agent.status_code == 200, agent.text
    assert skill.status_code == 200, skill.text
    async with registry_db(template, database) as conn:
        audits_before = await audit_count(conn)
        await conn.execute("update agents set purpose = 'stale text from old code' where id = 'EXCEPTION_AGENT'")
    await seed_registry(settings.database_url)
    async with registry_db(template, database) as conn:
        stored_agent = await conn.fetchrow("select * from agents where id = 'EXCEPTION_AGENT'")
        stored_skill = await conn.fetchrow("select * from skills where id = 'stall_response'")
        audits_after = await audit_count(conn)
    seeded = next(a for a in load_inventory().agents if a.id == "EXCEPTION_AGENT")
    assert stored_agent["autonomous"] is True
    assert stored_agent["model"] == "claude-opus-4-8"
    assert stored_agent["purpose"] == seeded.purpose  # code-defined: the seed wins
    assert stored_skill["enabled"] is False
    assert stored_skill["thresholds"]["stallMinutes"] == 15
    assert stored_skill["version"] == 2
    assert audits_after == audits_before  # nothing the operator chose was touched


async def test_a_reseed_fits_what_new_code_can_no_longer_honour_and_audits_it(settings, template, database):
    await seed_registry(settings.database_url)
    async with registry_db(template, database) as conn:
        await conn.execute("update agents set autonomous = true where id = 'DISPATCH_AGENT'")
        await conn.execute(
            """update skills set thresholds = jsonb_set(thresholds, '{stallMinutes}', '40'), version = 3
                where id = 'stall_response'"""
        )
    inventory = load_inventory()
    # The next release drops Dispatch's gate and narrows stallMinutes to 3..30.
    agents = tuple(replace(a, has_autonomy_gate=False) if a.id == "DISPATCH_AGENT" else a for a in inventory.agents)
    skills = tuple(
        replace(
            s,
            thresholds_schema={
                **s.thresholds_schema,
                "stallMinutes": {**s.thresholds_schema["stallMinutes"], "max": 30},
            },
        )
        if s.id == "stall_response"
        else s
        for s in inventory.skills
    )
    await seed_registry(settings.database_url, replace(inventory, agents=agents, skills=skills))
    async with registry_db(template, database) as conn:
        dispatch = await conn.fetchrow("select * from agents where id = 'DISPATCH_AGENT'")
        stall = await conn.fetchrow("select * from skills where id = 'stall_response'")
        audit = await conn.fetch("select entity_id, field, old, new, changed_by from audit order by id")
    assert dispatch["has_autonomy_gate"] is False and dispatch["autonomous"] is False
    assert stall["thresholds"]["stallMinutes"] == 10  # back to the default the new schema accepts
    assert stall["version"] == 4
    assert [(r["entity_id"], r["field"], r["changed_by"]) for r in audit] == [
        ("DISPATCH_AGENT", "autonomous", "seed"),
        ("stall_response", "thresholds", "seed"),
    ]
    assert audit[1]["old"]["stallMinutes"] == 40 and audit[1]["new"]["stallMinutes"] == 10


async def test_two_replicas_seeding_at_once_agree(settings, template, database):
    results = await asyncio.gather(seed_registry(settings.database_url), seed_registry(settings.database_url))
    async with registry_db(template, database) as conn:
        rows = await all_rows(conn)
    assert results[0] == results[1]
    assert len(rows["agents"]) == 11 and len(rows["skills"]) == 15
    assert rows["audit"] == []


async def test_two_replicas_starting_at_once_seed_the_registry_once(settings, template, database):
    replicas = [ContextServer("registry", settings) for _ in range(2)]
    try:
        await asyncio.gather(replicas[0].start(), replicas[1].start(address="127.0.0.1:0"))
        async with gateway_client(settings) as client:
            reply = await client.get("/admin/ai/agents", headers=bearer(role=4))
    finally:
        await asyncio.gather(*(replica.stop(grace=0.1) for replica in replicas))
    assert reply.status_code == 200
    assert len(reply.json()["items"]) == 11
    async with registry_db(template, database) as conn:
        assert await conn.fetchval("select count(*) from skills") == 15
        assert await audit_count(conn) == 0


async def test_only_the_first_start_seeds_later_ones_leave_the_rows_alone(settings, template, database):
    await seed_registry(settings.database_url)
    async with registry_db(template, database) as conn:
        await conn.execute("update agents set purpose = 'as the previous release described it' where id = 'JARVIS'")
    async with running(settings, ["registry"]):
        pass
    async with registry_db(template, database) as conn:
        after_start = await conn.fetchval("select purpose from agents where id = 'JARVIS'")
    await seed_registry(settings.database_url)
    async with registry_db(template, database) as conn:
        after_seed = await conn.fetchval("select purpose from agents where id = 'JARVIS'")
    assert after_start == "as the previous release described it"
    assert after_seed == next(a for a in load_inventory().agents if a.id == "JARVIS").purpose
