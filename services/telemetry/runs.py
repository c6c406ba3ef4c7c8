"""The run list and a run's detail: the reads behind the runs page.

A run's model calls are found by the trace it belongs to when it has one (an
OTLP run: its task id names its trace), else by time: the agent's calls that
started between the run's start and finish. The second is a guess an engine
running two tasks at once would blur, so the detail says which was used.
"""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncEngine

from services.common import paging
from services.telemetry import rules, store


async def list_runs(engine: AsyncEngine, listing: rules.RunListing) -> tuple[list[rules.TaskRun], str]:
    """One page of runs and the cursor after it ('' on the last page)."""
    async with engine.connect() as conn:
        rows = await store.list_runs(conn, listing)
    return paging.one_page(rows, listing.limit, lambda run: rules.run_page_key(listing.order, run))


async def run_facets(engine: AsyncEngine, days: int) -> list[str]:
    """The agents that started a run in the last `days` days (database clock), sorted."""
    async with engine.connect() as conn:
        return await store.run_agents(conn, days=days)


async def run_detail(engine: AsyncEngine, *, agent_id: str, task_id: str) -> rules.RunDetail:
    fetch = rules.MAX_RUN_MODEL_CALLS + 1
    async with engine.connect() as conn:
        run = await store.get_run(conn, agent_id=agent_id, task_id=task_id)
        if run is None:
            raise rules.run_not_found(agent_id, task_id)
        trace_id = rules.run_trace(run.task_id)
        if trace_id is not None:
            calls = await store.trace_model_calls(conn, trace_id=trace_id, limit=fetch)
            return rules.run_model_calls(run, calls, rules.MATCHED_BY_TRACE)
        start, end = rules.calls_window(run)
        calls = await store.window_model_calls(conn, agent_id=run.agent_id, start=start, end=end, limit=fetch)
    return rules.run_model_calls(run, calls, rules.MATCHED_BY_WINDOW)
