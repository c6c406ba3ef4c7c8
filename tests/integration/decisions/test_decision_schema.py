"""The embedding size is fixed when the schema is first migrated."""

from __future__ import annotations

import asyncpg
import pytest

from services.common.db import context_engine, migrate
from services.common.settings import SettingsError
from tests.harness import gateway_client, internal_headers, make_settings, running
from tests.integration.decisions.memory_support import unit_vector


async def _blank_database(template, name: str) -> None:
    admin = await asyncpg.connect(template.raw_dsn("postgres"))
    try:
        await admin.execute(f"drop database if exists {name} with (force)")
        await admin.execute(f"create database {name}")
    finally:
        await admin.close()


async def _drop(template, name: str) -> None:
    admin = await asyncpg.connect(template.raw_dsn("postgres"))
    try:
        await admin.execute(f"drop database if exists {name} with (force)")
    finally:
        await admin.close()


async def test_the_first_migration_fixes_the_dimension_and_later_settings_cannot_change_it(template):
    name = "decisions_dim_eight"
    await _blank_database(template, name)
    try:
        small = make_settings(template, name, OUTRIDER_EMBEDDING_DIM="8")
        async with running(small, ["decisions"]), gateway_client(small) as client:
            fits = await client.post(
                "/internal/agent-decisions",
                json={
                    "decision_type": "stall_response",
                    "agent_id": "A",
                    "subject_id": "s",
                    "decision": {"action": "x", "confidence": 0.5},
                    "embedding": unit_vector(1, 8),
                },
                headers=internal_headers(),
            )
            embedded = await client.post(
                "/internal/agent-decisions",
                json={
                    "decision_type": "stall_response",
                    "agent_id": "A",
                    "subject_id": "s",
                    "decision": {"action": "x", "confidence": 0.5},
                    "context": {"zone": "north"},
                },
                headers=internal_headers(),
            )
            too_big = await client.post(
                "/internal/agent-decisions",
                json={
                    "decision_type": "stall_response",
                    "agent_id": "A",
                    "subject_id": "s",
                    "decision": {"action": "x", "confidence": 0.5},
                    "embedding": unit_vector(1, 384),
                },
                headers=internal_headers(),
            )
        assert fits.status_code == 201 and embedded.status_code == 201
        assert too_big.status_code == 422
        assert "exactly 8 dimensions, got 384" in too_big.json()["error"]["message"]

        # Migrating again with another setting changes nothing, and the
        # context refuses to serve a size its table cannot hold.
        engine = context_engine(small.database_url, "decisions")
        try:
            assert await migrate(engine, "decisions", extra={"outrider.embedding_dim": "1536"}) == []
        finally:
            await engine.dispose()
        wide = make_settings(template, name, OUTRIDER_EMBEDDING_DIM="1536")
        with pytest.raises(SettingsError) as refused:
            async with running(wide, ["decisions"]):
                pass
        assert "OUTRIDER_EMBEDDING_DIM is 1536" in str(refused.value)
        assert "8-dimension" in str(refused.value)
        conn = await asyncpg.connect(template.raw_dsn(name))
        try:
            column = await conn.fetchval(
                "select format_type(atttypid, atttypmod) from pg_attribute"
                " where attrelid = 'decisions.decisions'::regclass and attname = 'embedding'"
            )
        finally:
            await conn.close()
        assert column == "vector(8)"
    finally:
        await _drop(template, name)
