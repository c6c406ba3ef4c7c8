"""A playground run is audited in the registry under the person who ran it,
once; a run whose audit row was not kept is appended by that person's next
run, through REST against real Postgres."""

from __future__ import annotations

from typing import Any

import asyncpg

from tests.harness import bearer
from tests.integration.playground.scripted import Say
from tests.integration.playground.support import Playground, playground


async def run_audit(pg: Playground, **params: Any) -> list[dict[str, Any]]:
    reply = await pg.client.get("/admin/ai/audit", params={"entity": "run", **params}, headers=bearer(role=4))
    assert reply.status_code == 200, reply.text
    items: list[dict[str, Any]] = reply.json()["items"]
    return items


async def test_each_run_is_audited_once_under_the_person_who_ran_it(settings):
    async with playground(settings) as pg:
        pg.model.script(Say("Hello."))
        first = await pg.run("CUSTOMER_AGENT", "Where is booking 1001?", sub="u-lead")
        assert first.status_code == 200, first.text
        pg.model.script(Say("Hello again."))
        second = await pg.run("CUSTOMER_AGENT", "And booking 1002?", sub="u-other")
        assert second.status_code == 200, second.text
        rows = await run_audit(pg)
        by_lead = await run_audit(pg, actor="u-lead")

    run = first.json()
    assert [row["entity_id"] for row in rows] == [second.json()["id"], run["id"]]
    [row] = by_lead
    assert (row["entity_id"], row["field"], row["old"]) == (run["id"], "run", None)
    assert row["new"] == {"agent_id": "CUSTOMER_AGENT", "skill_id": run["skill_id"], "model": run["model"]}
    # The prompt may quote a customer: it stays in the run, out of the audit.
    assert "1001" not in str(row)


async def test_a_run_the_registry_did_not_keep_is_appended_by_the_persons_next_run(settings, template, database):
    async with playground(settings) as pg:
        pg.model.script(Say("Hello."))
        missed = (await pg.run("CUSTOMER_AGENT", "First question", sub="u-lead")).json()
        # As if the registry had not answered the append: no row there, the run still owed one.
        conn = await asyncpg.connect(template.raw_dsn(database))
        try:
            await conn.execute("delete from registry.audit where entity = 'run'")
            await conn.execute("update playground.runs set audited_at = null where id = $1::uuid", missed["id"])
        finally:
            await conn.close()
        assert await run_audit(pg) == []

        pg.model.script(Say("Someone else."))
        others = (await pg.run("CUSTOMER_AGENT", "Another person", sub="u-other")).json()
        assert [row["entity_id"] for row in await run_audit(pg)] == [others["id"]]

        pg.model.script(Say("Hello again."))
        later = (await pg.run("CUSTOMER_AGENT", "Second question", sub="u-lead")).json()
        by_lead = await run_audit(pg, actor="u-lead")

    assert sorted(row["entity_id"] for row in by_lead) == sorted([missed["id"], later["id"]])
