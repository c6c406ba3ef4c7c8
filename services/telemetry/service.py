"""The telemetry gRPC servicer: insights and this replica's ingest counters.

Insights read four sources: runs and model calls (own schema), the registry
and decision memory (over gRPC) and the heartbeat bucket. Only the own schema
is required; any
other source that fails is named in `degraded` and its part left out, because
an operator is better served by most of the page and a note than by a 500.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Mapping
from datetime import timedelta
from typing import TypeVar

import grpc
from nats.js import JetStreamContext
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncEngine

from outrider.v1 import decisions_pb2_grpc, registry_pb2, registry_pb2_grpc, telemetry_pb2, telemetry_pb2_grpc
from services.common.clients import ContextCallError, ContextClients
from services.common.errors import Unavailable
from services.telemetry import codec, heartbeats, rules, store
from services.telemetry.counters import Counters

_log = logging.getLogger(__name__)

UPSTREAM_TIMEOUT_S = 2.0

T = TypeVar("T")


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


class TelemetryService(telemetry_pb2_grpc.TelemetryServicer):
    def __init__(
        self,
        engine: AsyncEngine,
        js: JetStreamContext,
        clients: ContextClients,
        counters: Counters,
        prices: Mapping[str, rules.Price] | None = None,
    ) -> None:
        self._engine = engine
        self._js = js
        self._clients = clients
        self._counters = counters
        self._prices = prices or {}

    async def GetInsights(
        self, request: telemetry_pb2.GetInsightsRequest, context: grpc.aio.ServicerContext
    ) -> telemetry_pb2.Insights:
        days = rules.window_days(codec.requested_days(request))

        try:
            async with self._engine.connect() as conn:
                stats = await store.run_stats(conn, days=days)
                model_stats = await store.model_stats(conn, days=days)
                last_run, now = await store.last_received(conn)
        except (SQLAlchemyError, OSError) as error:
            # The runs are the one source insights cannot do without; without
            # them the honest answer is "try again", not a page of zeros.
            raise Unavailable("the telemetry database is not answering", code="DATABASE_UNAVAILABLE") from error

        degraded: dict[str, str] = {}
        registry = self._clients.stub("registry", registry_pb2_grpc.RegistryStub)
        decisions = self._clients.stub("decisions", decisions_pb2_grpc.DecisionsStub)
        agents_reply, outcomes_reply, live = await asyncio.gather(
            _optional(
                "registry", registry.ListAgents(registry_pb2.ListAgentsRequest(), timeout=UPSTREAM_TIMEOUT_S), degraded
            ),
            _optional(
                "decisions",
                decisions.CountOutcomes(codec.decided_since(now - timedelta(days=days)), timeout=UPSTREAM_TIMEOUT_S),
                degraded,
            ),
            _optional("heartbeats", heartbeats.read_live(self._js), degraded),
        )
        registry_agents = codec.registry_agents(agents_reply) if agents_reply is not None else None
        outcomes = rules.fold_outcomes(codec.outcome_counts(outcomes_reply)) if outcomes_reply is not None else None
        usage = rules.model_usage(model_stats, self._prices)
        return codec.insights_to_proto(
            days=days,
            receiving=rules.receiving(last_run, now, live or {}),
            agents=rules.assemble(stats, registry_agents, live, usage.rows),
            decisions=outcomes,
            degraded=degraded,
            last_received_at=last_run,
            usage=usage,
            prices_configured=bool(self._prices),
        )

    async def GetRunSeries(
        self, request: telemetry_pb2.GetRunSeriesRequest, context: grpc.aio.ServicerContext
    ) -> telemetry_pb2.RunSeries:
        days = rules.window_days(codec.requested_days(request))
        try:
            async with self._engine.connect() as conn:
                window = rules.series_window(await store.database_now(conn), days)
                counts = await store.run_counts(
                    conn, start=window.start, end=window.end, bucket_seconds=window.bucket_seconds
                )
        except (SQLAlchemyError, OSError) as error:
            raise Unavailable("the telemetry database is not answering", code="DATABASE_UNAVAILABLE") from error
        return codec.series_to_proto(days, window, rules.dense_series(window, counts))

    async def GetCounters(
        self, request: telemetry_pb2.GetCountersRequest, context: grpc.aio.ServicerContext
    ) -> telemetry_pb2.Counters:
        return codec.counters_to_proto(self._counters.snapshot())
