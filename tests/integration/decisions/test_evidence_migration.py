"""Migration decisions_0006 on a table that already holds decisions: they
keep every column and read no propensity and no execution, and from then
on Postgres itself refuses a propensity or an execution out of range."""

from __future__ import annotations

import asyncpg
import pytest

from services.common.db import context_engine, migrate
from tests.harness import create_database

DATABASE = "decisions_evidence_migration"
EVIDENCE = ", model_propensity, execution"
INSERT = """
    insert into decisions (id, decision_type, agent_id, subject_id, action, confidence, embedding, outcome,
                           judged_at, judged_by{extra_columns})
    values (gen_random_uuid(), 'stall_response', 'A1', 'b-1', 'reassign', 0.5, '[1,0]', 'success',
            now(), 'sweeper'{extra_values})
"""


async def test_existing_decisions_read_none_and_new_ones_are_held_to_the_range(template):
    url = await create_database(template, DATABASE)
    engine = context_engine(url, "decisions")
    try:
        await migrate(engine, "decisions", extra={"outrider.embedding_dim": "2"}, target="decisions_0005")
        conn = await asyncpg.connect(template.raw_dsn(DATABASE), server_settings={"search_path": "decisions, public"})
        try:
            await conn.execute(INSERT.format(extra_columns="", extra_values=""))
            assert await migrate(
                engine, "decisions", extra={"outrider.embedding_dim": "2"}, target="decisions_0006"
            ) == ["decisions_0006"]
            kept = await conn.fetchrow("select outcome, agent_id, model_propensity, execution from decisions")
            assert tuple(kept) == ("success", "A1", None, None)
            await conn.execute(INSERT.format(extra_columns=EVIDENCE, extra_values=", 1.0, 'autonomous'"))
            for values in (", 0.0, null", ", 1.5, null", ", null, 'manual'"):
                with pytest.raises(asyncpg.CheckViolationError):
                    await conn.execute(INSERT.format(extra_columns=EVIDENCE, extra_values=values))
            assert await conn.fetchval("select count(*) from decisions") == 2
        finally:
            await conn.close()
    finally:
        await engine.dispose()
