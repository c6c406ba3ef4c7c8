"""Shared helpers for the outcomes integration tests."""

from __future__ import annotations

import json
from typing import Any, TypeVar

import asyncpg

T = TypeVar("T")


async def outcomes_db(template: Any, database: str) -> asyncpg.Connection:
    return await asyncpg.connect(template.raw_dsn(database), server_settings={"search_path": "outcomes"})


async def stored_facts(conn: asyncpg.Connection, subject_id: str) -> dict[str, Any] | None:
    raw = await conn.fetchval("select facts from subject_facts where subject_id = $1", subject_id)
    return None if raw is None else json.loads(raw)


def event_bytes(payload: dict[str, Any]) -> bytes:
    return json.dumps(payload).encode()
