"""Retention of malformed-facts counters (OUTRIDER_FACT_REJECTION_RETENTION_DAYS):
a counter no rejection has moved within its lifetime goes with its sample;
a recent one stays, and a rejection after its deletion starts it afresh."""

from __future__ import annotations

import dataclasses

import asyncpg

from services.common.db import context_engine
from services.common.retention import RetentionJob
from services.outcomes import store
from services.outcomes.retention import lifetimes
from tests.harness import with_env
from tests.integration.retention_support import noting_batches


async def test_counters_not_moved_within_their_lifetime_go_in_bounded_batches(settings, template, database):
    conn = await asyncpg.connect(template.raw_dsn(database), server_settings={"search_path": "outcomes"})
    try:
        await conn.execute(
            "insert into fact_rejections (field, count, last_problem, last_payload, last_at)"
            " select field, 3, 'bad', '{\"subject_id\": \"b-1\"}', at from ("
            "   values ('at', now() - interval '31 days'), ('status', now() - interval '40 days'),"
            "          ('cancelled', now() - interval '30 days 1 minute'), ('payload', now() - interval '29 days'),"
            "          ('subject_id', now())"
            " ) as r(field, at)"
        )
        batches: list[int] = []
        [lifetime] = lifetimes(with_env(settings, fact_rejection_retention_days=30))
        engine = context_engine(settings.database_url, "outcomes")
        try:
            job = RetentionJob(
                engine,
                [dataclasses.replace(lifetime, prune=noting_batches(lifetime.prune, batches))],
                batch=2,
                pause_s=0,
            )
            assert await job.prune() == {"fact_rejections": 3}
            async with engine.begin() as db:
                await store.count_rejection(db, field="at", problem="again", payload="{}")
        finally:
            await engine.dispose()
        left = {row["field"]: row["count"] for row in await conn.fetch("select field, count from fact_rejections")}
    finally:
        await conn.close()
    assert batches == [2, 1]
    assert left == {"payload": 3, "subject_id": 3, "at": 1}
