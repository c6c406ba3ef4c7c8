"""The telemetry gRPC servicer: decode, read insights, a run series, the run
list or one run, encode; this replica's ingest counters; and the streams' ingest state."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any, TypeAlias

import grpc
from nats.js import JetStreamContext
from sqlalchemy.ext.asyncio import AsyncEngine

from outrider.v1 import telemetry_pb2, telemetry_pb2_grpc
from services.telemetry import codec, ingest_state, insights, rules, runs
from services.telemetry.clients import DecisionsClient, RegistryClient
from services.telemetry.counters import Counters

# What every method is handed; none of them reads it.
Context: TypeAlias = grpc.aio.ServicerContext[Any, Any]


class TelemetryService(telemetry_pb2_grpc.TelemetryServicer):
    def __init__(
        self,
        engine: AsyncEngine,
        js: JetStreamContext,
        *,
        registry: RegistryClient,
        decisions: DecisionsClient,
        counters: Counters,
        prices: Mapping[str, rules.Price] | None = None,
        price_source: str = rules.PRICES_NONE,
        pending_limit: int,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self._engine = engine
        self._js = js
        self._registry = registry
        self._decisions = decisions
        self._counters = counters
        self._prices = prices or {}
        self._price_source = price_source if self._prices else rules.PRICES_NONE
        self._pending_limit = pending_limit
        self._clock = clock

    async def GetInsights(self, request: telemetry_pb2.GetInsightsRequest, context: Context) -> telemetry_pb2.Insights:
        report = await insights.insights(
            asked=codec.asked_window(request),
            engine=self._engine,
            js=self._js,
            registry=self._registry,
            decisions=self._decisions,
            prices=self._prices,
        )
        return codec.insights_to_proto(
            span=report.span,
            receiving=report.receiving,
            agents=report.agents,
            decisions=report.decisions,
            degraded=report.degraded,
            last_received_at=report.last_received_at,
            usage=report.usage,
            prices_configured=report.prices_configured,
        )

    async def GetRunSeries(
        self, request: telemetry_pb2.GetRunSeriesRequest, context: Context
    ) -> telemetry_pb2.RunSeries:
        series = await insights.run_series(self._engine, asked=codec.asked_window(request), prices=self._prices)
        return codec.series_to_proto(series, price_source=self._price_source)

    async def ListRuns(
        self, request: telemetry_pb2.ListTaskRunsRequest, context: Context
    ) -> telemetry_pb2.ListTaskRunsResponse:
        page, next_cursor = await runs.list_runs(self._engine, codec.run_listing_from_proto(request))
        return codec.runs_to_proto(page, next_cursor)

    async def ListRunFacets(
        self, request: telemetry_pb2.ListRunFacetsRequest, context: Context
    ) -> telemetry_pb2.RunFacets:
        days = codec.facet_days_from_proto(request)
        return codec.run_facets_to_proto(days, await runs.run_facets(self._engine, days))

    async def GetRun(self, request: telemetry_pb2.GetTaskRunRequest, context: Context) -> telemetry_pb2.TaskRunDetail:
        agent_id, task_id = codec.run_identity_from_proto(request)
        return codec.run_detail_to_proto(await runs.run_detail(self._engine, agent_id=agent_id, task_id=task_id))

    async def GetCounters(self, request: telemetry_pb2.GetCountersRequest, context: Context) -> telemetry_pb2.Counters:
        return codec.counters_to_proto(self._counters.snapshot())

    async def GetIngestState(
        self, request: telemetry_pb2.GetIngestStateRequest, context: Context
    ) -> telemetry_pb2.IngestState:
        readings = await ingest_state.read(self._js, clock=self._clock)
        return codec.ingest_state_to_proto(readings, pending_limit=self._pending_limit)
