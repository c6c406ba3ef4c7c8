"""Retention prunes exactly the decisions past AGENT_DECISION_RETENTION_DAYS, in batches."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

from services.common.db import context_engine
from services.decisions import retention
from tests.harness import running, with_env
from tests.integration.decisions.memory_support import connect, insert_rows, unit_vector

NOW = datetime.now(UTC)


async def test_prune_removes_exactly_the_old_rows_batch_by_batch(settings, template, database):
    cutoff = retention.cutoff(NOW, 180)
    old = [
        {
            "embedding": unit_vector(i),
            "decided_at": cutoff - timedelta(days=1 + i),
            "outcome": "success" if i % 2 else None,
        }
        for i in range(7)
    ]
    edge = [{"embedding": unit_vector(50), "decided_at": cutoff - timedelta(microseconds=1)}]
    kept = [
        {"embedding": unit_vector(60 + i), "decided_at": cutoff + timedelta(seconds=1 + i * 3600)} for i in range(5)
    ]
    conn = await connect(template, database)
    try:
        old_ids = await insert_rows(conn, old + edge)
        kept_ids = await insert_rows(conn, kept)
        await conn.execute(
            "insert into outcome_history (decision_id, new_outcome, judged_by) select id, 'success', 'sweeper'"
            " from decisions"
        )
    finally:
        await conn.close()
    engine = context_engine(settings.database_url, "decisions")
    try:
        removed = await retention.prune(engine, before=cutoff, batch=3)
        again = await retention.prune(engine, before=cutoff, batch=3)
    finally:
        await engine.dispose()
    assert removed == len(old_ids) and again == 0
    conn = await connect(template, database)
    try:
        left = {r["id"] for r in await conn.fetch("select id from decisions")}
        history = {r["decision_id"] for r in await conn.fetch("select decision_id from outcome_history")}
    finally:
        await conn.close()
    assert left == set(kept_ids)
    assert history == set(kept_ids)


async def test_the_context_prunes_on_start_with_the_configured_retention(settings, template, database):
    old = [{"embedding": unit_vector(i), "decided_at": NOW - timedelta(days=31 + i)} for i in range(3)]
    young = [{"embedding": unit_vector(10), "decided_at": NOW - timedelta(days=29)}]
    conn = await connect(template, database)
    try:
        await insert_rows(conn, old)
        [young_id] = await insert_rows(conn, young)
        async with running(with_env(settings, decision_retention_days=30), ["decisions"]):
            for _ in range(100):
                if await conn.fetchval("select count(*) from decisions") == 1:
                    break
                await asyncio.sleep(0.05)
        left = [r["id"] for r in await conn.fetch("select id from decisions")]
    finally:
        await conn.close()
    assert left == [young_id]
