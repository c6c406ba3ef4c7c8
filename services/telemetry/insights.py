"""Insights and run series: the reads behind the fleet page.

Insights read four sources: runs and model calls (own schema), the registry
and decision memory (over gRPC) and the heartbeat bucket. Only the own schema
is required; any other source that fails is named in `degraded` and its part
left out, because an operator is better served by most of the page and a
note than by a 500.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TypeVar

from nats.js import JetStreamContext
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from services.common import windows
from services.common.clients import ContextCallError
from services.common.errors import Unavailable
from services.telemetry import heartbeats, rules, store
from services.telemetry.clients import UPSTREAM_TIMEOUT_S, DecisionsClient, RegistryClient

_log = logging.getLogger(__name__)

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Insights:
    span: windows.Span
    receiving: bool
    agents: list[rules.AgentInsight]
    # None when decision memory could not be read.
    decisions: list[rules.OutcomeCount] | None
    # Source -> the kind of failure that left it out.
    degraded: Mapping[str, str]
    last_received_at: datetime | None
    usage: rules.UsageReport
    prices_configured: bool


def _unavailable() -> Unavailable:
    # The runs are the one source insights cannot do without; without them
    # the honest answer is "try again", not a page of zeros.
    return Unavailable("the telemetry database is not answering", code="DATABASE_UNAVAILABLE")


async def _optional(source: str, call: Awaitable[T], degraded: dict[str, str]) -> T | None:
    """The source's answer, or None with the reason recorded.

    The reason an operator sees is the failure's kind only; its text (peer
    addresses, server messages) goes to the log.
    """
    try:
        async with asyncio.timeout(UPSTREAM_TIMEOUT_S + 0.5):
            return await call
    except ContextCallError as error:
        reason, detail = error.status.name, error.error.details() or ""
    except Exception as error:  # noqa: BLE001 - any failure of an optional source degrades, never fails
        reason, detail = type(error).__name__, str(error)
    degraded[source] = reason
    _log.warning("insights source unavailable", extra={"source": source, "reason": reason, "detail": detail[:300]})
    return None


async def _own_stats(conn: AsyncConnection, span: windows.Span) -> tuple[list[rules.RunStats], list[rules.ModelStats]]:
    runs = await store.run_stats(conn, start=span.start, end=span.read_until)
    return runs, await store.model_stats(conn, start=span.start, end=span.read_until)


async def insights(
    *,
    asked: rules.AskedWindow,
    engine: AsyncEngine,
    js: JetStreamContext,
    registry: RegistryClient,
    decisions: DecisionsClient,
    prices: Mapping[str, rules.Price],
) -> Insights:
    """The fleet over the asked span, from every source that answers."""
    degraded: dict[str, str] = {}
    try:
        async with engine.connect() as conn:
            # The database's now opens the window the other sources are asked about; once it is
            # known, the aggregates over the own schema run while those sources answer.
            last_run, now = await store.last_received(conn)
            span = asked.span(now)
            (stats, model_stats), registry_agents, outcome_counts, live = await asyncio.gather(
                _own_stats(conn, span),
                _optional("registry", registry.agents(), degraded),
                _optional("decisions", decisions.outcome_counts(span.start, span.read_until), degraded),
                _optional("heartbeats", heartbeats.read_live(js), degraded),
            )
    except (SQLAlchemyError, OSError) as error:
        raise _unavailable() from error

    usage = rules.model_usage(model_stats, prices)
    return Insights(
        span=span,
        receiving=rules.receiving(last_run, now, live or {}),
        agents=rules.assemble(stats, registry_agents, live, usage.rows),
        decisions=rules.fold_outcomes(outcome_counts) if outcome_counts is not None else None,
        degraded=degraded,
        last_received_at=last_run,
        usage=usage,
        prices_configured=bool(prices),
    )


async def run_series(
    engine: AsyncEngine, *, asked: rules.AskedWindow, prices: Mapping[str, rules.Price]
) -> rules.SeriesReport:
    """Runs, failures and latency per agent, and model calls per agent and
    per model, in equal buckets over the asked span.

    Ended buckets are read from what was kept of them, computing and keeping
    the ones not kept yet; only the bucket holding now is read from the runs
    every time.
    """
    try:
        async with engine.begin() as conn:
            now = await store.database_now(conn)
            window = rules.series_window(asked.span(now))
            origin, width = window.start, window.bucket_seconds
            ended = rules.ended_buckets(window, now)
            if set(ended) - await store.kept_buckets(conn, bucket_seconds=width, starts=ended):
                await _keep_ended(conn, window, ended)
            filling, end = origin + len(ended) * timedelta(seconds=width), window.end
            runs = await store.kept_run_counts(conn, origin=origin, start=origin, end=filling, bucket_seconds=width)
            runs += await store.run_counts(conn, origin=origin, start=filling, end=end, bucket_seconds=width)
            calls = await store.kept_call_counts(conn, origin=origin, start=origin, end=filling, bucket_seconds=width)
            calls += await store.call_counts(conn, origin=origin, start=filling, end=end, bucket_seconds=width)
    except (SQLAlchemyError, OSError) as error:
        raise _unavailable() from error
    return rules.SeriesReport(window, rules.dense_series(window, runs), rules.usage_series(window, calls, prices))


async def _keep_ended(conn: AsyncConnection, window: rules.SeriesWindow, ended: list[datetime]) -> None:
    """Compute and keep the ended buckets not kept yet, under the lock that
    holds off late writes into them; asked again under it, as another read
    may have kept them meanwhile."""
    origin, width = window.start, window.bucket_seconds
    await store.lock_series(conn)
    missing = sorted(set(ended) - await store.kept_buckets(conn, bucket_seconds=width, starts=ended))
    if not missing:
        return
    runs: list[rules.BucketRuns] = []
    calls: list[rules.BucketCalls] = []
    for start, end in rules.contiguous_spans(missing, width):
        runs += await store.run_counts(conn, origin=origin, start=start, end=end, bucket_seconds=width)
        calls += await store.call_counts(conn, origin=origin, start=start, end=end, bucket_seconds=width)
    await store.keep_buckets(conn, origin=origin, bucket_seconds=width, starts=missing, runs=runs, calls=calls)
