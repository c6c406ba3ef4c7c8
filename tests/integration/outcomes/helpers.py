"""Shared helpers for the outcomes integration tests."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import asyncpg

T = TypeVar("T")


async def outcomes_db(template: Any, database: str) -> asyncpg.Connection:
    return await asyncpg.connect(template.raw_dsn(database), server_settings={"search_path": "outcomes"})


async def stored_facts(conn: asyncpg.Connection, subject_id: str) -> dict[str, Any] | None:
    raw = await conn.fetchval("select facts from subject_facts where subject_id = $1", subject_id)
    return None if raw is None else json.loads(raw)


async def eventually(probe: Callable[[], Awaitable[T]], accept: Callable[[T], bool], *, timeout: float = 15.0) -> T:
    """Poll `probe` until `accept` holds; the last value is returned either way."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    value = await probe()
    while not accept(value) and loop.time() < deadline:
        await asyncio.sleep(0.05)
        value = await probe()
    return value


def event_bytes(payload: dict[str, Any]) -> bytes:
    return json.dumps(payload).encode()
