"""Retention of runs and model calls: what started before the lifetime goes,
in bounded batches, while the ingest keeps writing; the counts reach /metrics."""

from __future__ import annotations

import asyncio
import dataclasses
from datetime import timedelta

import asyncpg

from services.common.db import context_engine
from services.common.retention import RetentionJob
from services.telemetry.retention import lifetimes
from tests.harness import eventually, gateway_client, internal_headers, running, with_env
from tests.integration.retention_support import deleted, noting_batches
from tests.integration.telemetry.support import broker, counters, execute, task


async def keys(stack, database: str, sql: str) -> list[str]:
    conn = await asyncpg.connect(stack.raw_dsn(database), server_settings={"search_path": "telemetry"})
    try:
        return sorted(row[0] for row in await conn.fetch(sql))
    finally:
        await conn.close()


async def test_runs_and_model_calls_that_started_before_the_lifetime_go_in_bounded_batches(
    settings, template, database
):
    # Every row was received just now: age is the run's own time.
    await execute(
        template,
        database,
        "insert into runs (agent_id, task_id, task_type, status, started_at, finished_at, duration_ms)"
        " select 'A', name, 'sweep', 'succeeded', at, at + interval '1 second', 1000 from ("
        "   select 'old-' || n, now() - interval '30 days 1 minute' - n * interval '1 hour'"
        "     from generate_series(1, 7) as n"
        "   union all"
        "   select 'kept-' || n, now() - interval '29 days 23 hours' + n * interval '1 hour'"
        "     from generate_series(1, 3) as n"
        " ) as r(name, at)",
    )
    await execute(
        template,
        database,
        "insert into model_calls (trace_id, span_id, agent_id, operation, status, started_at, duration_ms)"
        " values ('t1', 'old', 'A', 'chat', 'succeeded', now() - interval '31 days', 5),"
        "        ('t1', 'kept', 'A', 'chat', 'succeeded', now() - interval '1 day', 5)",
    )
    batches: dict[str, list[int]] = {"runs": [], "model_calls": []}
    noted = [
        dataclasses.replace(lifetime, prune=noting_batches(lifetime.prune, batches[lifetime.table]))
        for lifetime in lifetimes(with_env(settings, telemetry_retention_days=30))
    ]
    engine = context_engine(settings.database_url, "telemetry")
    try:
        job = RetentionJob(engine, noted, batch=3, pause_s=0)
        assert await job.prune() == {"runs": 7, "model_calls": 1}
        assert await job.prune() == {"runs": 0, "model_calls": 0}
    finally:
        await engine.dispose()
    assert batches == {"runs": [3, 3, 1, 0], "model_calls": [1, 0]}
    assert await keys(template, database, "select task_id from runs") == ["kept-1", "kept-2", "kept-3"]
    assert await keys(template, database, "select span_id from model_calls") == ["kept"]


OLD_RUNS = 200_000


async def test_a_run_published_while_the_deleter_works_lands_within_its_batch_wait(settings, template, database):
    # A month and a half of backlog: the context's job starts on it at once
    # and deletes for several seconds, a batch at a time.
    await execute(
        template,
        database,
        "insert into runs (agent_id, task_id, task_type, status, started_at, finished_at, duration_ms)"
        " select 'OLD', name, 'sweep', 'succeeded', at, at + interval '1 second', 1000 from ("
        "   select 'old-' || n, now() - interval '45 days' + n * interval '1 second'"
        f"    from generate_series(1, {OLD_RUNS}) as n"
        " ) as r(name, at)",
    )
    fast = with_env(settings, telemetry_batch_wait_ms=500, telemetry_ack_wait_s=5)
    wait = timedelta(milliseconds=fast.telemetry_batch_wait_ms)
    async with running(fast, ["telemetry"]), broker(fast) as (_, js):
        await eventually(lambda: deleted(fast, "telemetry"), lambda seen: seen["runs"] > 0, what="the deleter at work")
        published = asyncio.get_running_loop().time()
        await js.publish("telemetry.task", task("EXCEPTION_AGENT", "during-retention"))
        # The batch wait, and a second for the commit on a busy machine.
        await eventually(
            lambda: counters(fast),
            lambda seen: seen["inserted"] == 1,
            timeout=wait.total_seconds() + 1.0,
            step=0.02,
            what="the run landed",
        )
        landed = asyncio.get_running_loop().time() - published
        during = (await deleted(fast, "telemetry"))["runs"]
        await eventually(
            lambda: deleted(fast, "telemetry"), lambda seen: seen["runs"] == OLD_RUNS, timeout=120, what="backlog gone"
        )
    assert during < OLD_RUNS, f"the deleter had finished before the run landed ({landed:.2f} s): a bigger backlog"
    assert await keys(template, database, "select task_id from runs") == ["during-retention"]


async def test_each_context_deletes_on_start_and_the_counts_reach_metrics(settings, template, database):
    await execute(
        template,
        database,
        "insert into runs (agent_id, task_id, task_type, status, started_at, finished_at, duration_ms)"
        " values ('A', 'old', 'sweep', 'succeeded', now() - interval '8 days', now() - interval '8 days', 0),"
        "        ('A', 'young', 'sweep', 'succeeded', now() - interval '6 days', now() - interval '6 days', 0)",
    )
    conn = await asyncpg.connect(template.raw_dsn(database))
    try:
        await conn.execute(
            "insert into playground.runs (id, agent_id, skill_id, model, prompt, turns, input_tokens, output_tokens,"
            " total_ms, created_by, created_at)"
            " select gen_random_uuid(), 'A', 's', 'm', 'p', 0, 0, 0, 0, 'u-1', now() - n * interval '5 days'"
            " from generate_series(1, 3) as n"
        )
        await conn.execute(
            "insert into outcomes.fact_rejections (field, count, last_at)"
            " values ('at', 4, now() - interval '9 days'), ('status', 1, now())"
        )
    finally:
        await conn.close()
    short = with_env(settings, telemetry_retention_days=7, playground_retention_days=7, fact_rejection_retention_days=7)
    expected = {
        ("telemetry", "runs"): 1,
        ("telemetry", "model_calls"): 0,
        ("playground", "runs"): 2,
        ("playground", "run_admissions"): 0,
        ("outcomes", "fact_rejections"): 1,
    }
    async with running(short, ["telemetry", "playground", "outcomes"]), gateway_client(short) as client:

        async def samples() -> dict[tuple[str, str], int]:
            text = (await client.get("/metrics", headers=internal_headers())).text
            found = {}
            for line in text.splitlines():
                if line.startswith("outrider_retention_deleted_total{"):
                    labels, value = line.removeprefix("outrider_retention_deleted_total").split()
                    context, table = (part.split("=")[1].strip('"') for part in labels.strip("{}").split(","))
                    found[(context, table)] = int(value)
            return found

        await eventually(samples, lambda seen: seen == expected, what="every table's deletes on /metrics")
    assert await keys(template, database, "select task_id from runs") == ["young"]
    conn = await asyncpg.connect(template.raw_dsn(database))
    try:
        assert await conn.fetchval("select count(*) from playground.runs") == 1
        assert [r["field"] for r in await conn.fetch("select field from outcomes.fact_rejections")] == ["status"]
    finally:
        await conn.close()
