"""Retention of playground runs (OUTRIDER_PLAYGROUND_RETENTION_DAYS) and of
admissions past the rate window: the old rows go in bounded batches, the
rest stay."""

from __future__ import annotations

import dataclasses

import asyncpg

from services.common.db import context_engine
from services.common.retention import RetentionJob
from services.playground.retention import lifetimes
from tests.harness import with_env
from tests.integration.retention_support import noting_batches


async def test_runs_past_their_lifetime_and_spent_admissions_go_in_bounded_batches(settings, template, database):
    conn = await asyncpg.connect(template.raw_dsn(database), server_settings={"search_path": "playground"})
    try:
        await conn.execute(
            "insert into runs (id, agent_id, skill_id, model, prompt, turns, input_tokens, output_tokens, total_ms,"
            " steps, created_by, created_at, status)"
            " select gen_random_uuid(), 'A', 's', 'm', name, 1, 10, 5, 100, '[{\"tool\": \"lookup\"}]', 'u-1', at,"
            "        'finished' from ("
            "   select 'old-' || n, now() - interval '90 days 1 minute' - n * interval '1 day'"
            "     from generate_series(1, 5) as n"
            "   union all"
            "   select 'kept-' || n, now() - interval '89 days' + n * interval '1 day'"
            "     from generate_series(1, 2) as n"
            " ) as r(name, at)"
        )
        # One person who never came back, and one admitted a minute ago.
        await conn.execute(
            "insert into run_admissions (user_sub, admitted_at)"
            " select 'gone', now() - interval '11 minutes' - n * interval '1 minute' from generate_series(1, 4) as n"
            " union all select 'here', now() - interval '1 minute'"
        )
        batches: dict[str, list[int]] = {"runs": [], "run_admissions": []}
        noted = [
            dataclasses.replace(lifetime, prune=noting_batches(lifetime.prune, batches[lifetime.table]))
            for lifetime in lifetimes(with_env(settings, playground_retention_days=90))
        ]
        engine = context_engine(settings.database_url, "playground")
        try:
            job = RetentionJob(engine, noted, batch=2, pause_s=0)
            assert await job.prune() == {"runs": 5, "run_admissions": 4}
            assert await job.prune() == {"runs": 0, "run_admissions": 0}
        finally:
            await engine.dispose()
        prompts = sorted(row["prompt"] for row in await conn.fetch("select prompt from runs"))
        admitted = [row["user_sub"] for row in await conn.fetch("select user_sub from run_admissions")]
    finally:
        await conn.close()
    assert batches == {"runs": [2, 2, 1, 0], "run_admissions": [2, 2, 0, 0]}
    assert prompts == ["kept-1", "kept-2"]
    assert admitted == ["here"]
