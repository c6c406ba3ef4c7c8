"""The run series keeps ended buckets: what it answers from them is what it
would compute from the runs themselves, after late runs and model calls
land in kept buckets, after retention prunes under them, and when a late
write commits while a read is keeping."""

from __future__ import annotations

import asyncio
import dataclasses
import random
from collections.abc import AsyncIterator
from datetime import datetime, timedelta

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from services.common.db import context_engine
from services.telemetry import insights, rules, store

AGENTS = ("DISPATCH_AGENT", "EXCEPTION_AGENT", "CUSTOMER_AGENT")
MODELS = ("claude-sonnet-4-5", "claude-haiku-4-5", None)
PRICES = {"claude-*": rules.Price(input=3.0, output=15.0)}
WINDOWS = (1, 7, 30)


@pytest.fixture
async def engine(template, database) -> AsyncIterator[AsyncEngine]:
    engine = context_engine(template.database_url(database), "telemetry")
    try:
        yield engine
    finally:
        await engine.dispose()


async def now_of(engine: AsyncEngine) -> datetime:
    async with engine.connect() as conn:
        return await store.database_now(conn)


def generated_runs(rng: random.Random, now: datetime, n: int, *, tag: str) -> list[rules.TaskRun]:
    """Runs at random instants over the last 31 days, a few in the bucket now fills."""
    runs = []
    for i in range(n):
        started = now - timedelta(seconds=rng.uniform(0, 31 * 86400))
        duration = rng.choice([5.0, 40.0, 40.0, rng.uniform(1, 9000)])
        runs.append(
            rules.TaskRun(
                agent_id=rng.choice(AGENTS),
                task_id=f"{tag}-{i}",
                task_type="stall_response",
                status=rng.choice(["succeeded", "succeeded", "failed"]),
                started_at=started,
                finished_at=started + timedelta(milliseconds=duration),
                duration_ms=duration,
            )
        )
    return runs


def generated_calls(rng: random.Random, runs: list[rules.TaskRun]) -> list[rules.ModelCall]:
    calls = []
    for run in runs[::2]:
        reported = rng.random() < 0.8
        calls.append(
            rules.ModelCall(
                trace_id=run.task_id,
                span_id="0" * 15 + "1",
                agent_id=run.agent_id,
                operation="chat",
                provider="anthropic",
                request_model=rng.choice(MODELS),
                response_model=None,
                input_tokens=rng.randrange(1, 5000) if reported else None,
                output_tokens=rng.randrange(1, 500) if reported else None,
                status="succeeded",
                error_type=None,
                started_at=run.started_at + timedelta(milliseconds=1),
                duration_ms=run.duration_ms / 2,
            )
        )
    return calls


async def write(engine: AsyncEngine, runs: list[rules.TaskRun], calls: list[rules.ModelCall]) -> None:
    async with engine.begin() as conn:
        await store.insert_runs(conn, runs=runs)
        await store.insert_model_calls(conn, calls=calls)


async def computed(engine: AsyncEngine, window: rules.SeriesWindow) -> rules.SeriesReport:
    """The series of `window` computed from the runs and calls alone, as the
    read did before it kept anything."""
    bounds = {"origin": window.start, "start": window.start, "end": window.end, "bucket_seconds": window.bucket_seconds}
    async with engine.connect() as conn:
        runs = await store.run_counts(conn, **bounds)
        calls = await store.call_counts(conn, **bounds)
    return rules.SeriesReport(window, rules.dense_series(window, runs), rules.usage_series(window, calls, PRICES))


async def assert_kept_series_is_computed_series(engine: AsyncEngine) -> None:
    for days in WINDOWS:
        served = await insights.run_series(engine, asked=rules.AskedWindow(days=days), prices=PRICES)
        assert served == await computed(engine, served.window), f"{days}-day series"


async def kept_marks(engine: AsyncEngine) -> int:
    async with engine.connect() as conn:
        return int(await conn.scalar(text("select count(*) from series_buckets")))


async def test_kept_buckets_answer_as_the_runs_do_through_late_writes_and_pruning(engine):
    rng = random.Random(20261203)
    now = await now_of(engine)
    runs = generated_runs(rng, now, 1500, tag="first")
    await write(engine, runs, generated_calls(rng, runs))

    await assert_kept_series_is_computed_series(engine)
    # Every ended bucket of the three windows is kept now: 24 + 28 + 30.
    assert await kept_marks(engine) == 82
    await assert_kept_series_is_computed_series(engine)

    for round_ in range(3):
        # Late reports: runs and calls into buckets already kept.
        late = generated_runs(rng, now, 40, tag=f"late-{round_}")
        await write(engine, late, generated_calls(rng, late))
        await assert_kept_series_is_computed_series(engine)

    async with engine.begin() as conn:
        assert await store.prune_runs(conn, before=now - timedelta(days=6, hours=5), limit=100_000) > 0
        assert await store.prune_model_calls(conn, before=now - timedelta(days=6, hours=5), limit=100_000) > 0
    await assert_kept_series_is_computed_series(engine)


async def test_a_duplicate_report_leaves_kept_buckets_kept(engine):
    rng = random.Random(7)
    runs = generated_runs(rng, await now_of(engine), 200, tag="once")
    calls = generated_calls(rng, runs)
    await write(engine, runs, calls)
    await insights.run_series(engine, asked=rules.AskedWindow(days=30), prices=PRICES)
    kept = await kept_marks(engine)
    # Redelivered after a crash: nothing new is written, so nothing goes stale.
    await write(engine, runs, calls)
    assert await kept_marks(engine) == kept


async def test_a_late_run_committed_while_a_read_keeps_its_bucket_is_not_lost(engine):
    now = await now_of(engine)
    window = rules.series_window(rules.AskedWindow(days=1).span(now))
    bucket = rules.ended_buckets(window, now)[3]
    run = dataclasses.replace(generated_runs(random.Random(3), now, 1, tag="late")[0], started_at=bucket)

    async with engine.begin() as keeping:
        await store.lock_series(keeping)
        # The late run is written meanwhile; its transaction waits for the
        # keeping read before it may clear marks, so it cannot commit first.
        writing = asyncio.create_task(write(engine, [run], []))
        await asyncio.sleep(0.5)
        assert not writing.done()
        ended = rules.ended_buckets(window, now)
        origin = {"origin": window.start, "bucket_seconds": window.bucket_seconds}
        counted = await store.run_counts(keeping, start=window.start, end=ended[-1] + timedelta(hours=1), **origin)
        await store.keep_buckets(keeping, starts=ended, runs=counted, calls=[], **origin)
    await asyncio.wait_for(writing, timeout=10)

    served = await insights.run_series(engine, asked=rules.AskedWindow(days=1), prices=PRICES)
    point = next(p for p in served.runs[run.agent_id] if p.start == bucket)
    assert point.runs == 1
