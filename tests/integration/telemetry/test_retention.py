"""Retention prunes runs past 30 days in batches and keeps the rest."""

from __future__ import annotations

from services.common.db import context_engine
from services.telemetry import retention
from tests.integration.telemetry.support import execute, run_keys


async def test_runs_older_than_thirty_days_are_pruned_in_batches(settings, template, database):
    await execute(
        template,
        database,
        "insert into runs (agent_id, task_id, task_type, status, started_at, finished_at, duration_ms, received_at)"
        " select 'A', 'old-' || n, 'sweep', 'succeeded', '2026-08-01T10:00:00', '2026-08-01T10:00:01', 1000,"
        "        now() - interval '30 days 1 minute' - n * interval '1 hour'"
        "   from generate_series(1, 7) as n"
        " union all"
        " select 'A', 'kept-' || n, 'sweep', 'succeeded', '2026-09-01T10:00:00', '2026-09-01T10:00:01', 1000,"
        "        now() - interval '29 days 23 hours' + n * interval '1 hour'"
        "   from generate_series(1, 3) as n",
    )
    engine = context_engine(settings.database_url, "telemetry")
    try:
        assert await retention.prune(engine, batch=3) == 7
        assert await retention.prune(engine, batch=3) == 0
    finally:
        await engine.dispose()
    assert await run_keys(template, database) == [("A", "kept-1"), ("A", "kept-2"), ("A", "kept-3")]
