"""Shared helpers for the registry's integration tests: direct reads of the
registry schema, so a test checks what was stored, not only what was said."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import asyncpg

from outrider.v1 import registry_pb2_grpc
from services.common.callers import Principal
from services.common.settings import Settings
from tests.harness import Stack, person, service_channel


@asynccontextmanager
async def registry_db(template: Stack, database: str) -> AsyncIterator[asyncpg.Connection]:
    conn = await asyncpg.connect(template.raw_dsn(database), server_settings={"search_path": "registry"})
    await conn.set_type_codec("jsonb", encoder=json.dumps, decoder=json.loads, schema="pg_catalog")
    try:
        yield conn
    finally:
        await conn.close()


async def table_rows(conn: asyncpg.Connection, table: str, order: str) -> list[dict[str, Any]]:
    return [dict(row) for row in await conn.fetch(f"select * from {table} order by {order}")]


async def all_rows(conn: asyncpg.Connection) -> dict[str, list[dict[str, Any]]]:
    return {
        "agents": await table_rows(conn, "agents", "id"),
        "tools": await table_rows(conn, "tools", "name"),
        "skills": await table_rows(conn, "skills", "id"),
        "skill_tools": await table_rows(conn, "skill_tools", "skill_id, tool_name"),
        "surfaces": await table_rows(conn, "surfaces", "id"),
        "audit": await table_rows(conn, "audit", "id"),
    }


async def audit_count(conn: asyncpg.Connection, entity_id: str | None = None) -> int:
    if entity_id is None:
        return await conn.fetchval("select count(*) from audit")
    return await conn.fetchval("select count(*) from audit where entity_id = $1", entity_id)


@asynccontextmanager
async def registry_stub(
    settings: Settings, *, who: Principal | None = None, address: str | None = None
) -> AsyncIterator[registry_pb2_grpc.RegistryStub]:
    """The registry as the gateway reaches it, acting for a role-1 operator unless `who` says otherwise."""
    async with service_channel(settings, "registry", who or person(), address=address) as ch:
        yield registry_pb2_grpc.RegistryStub(ch)
