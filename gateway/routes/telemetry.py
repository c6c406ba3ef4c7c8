"""Telemetry routes: GET /admin/ai/insights, the run list under /admin/ai/runs,
and GET /metrics.

/metrics adds what the JetStream streams hold and what their consumers owe,
read through the gateway's own NATS connection; a scrape while NATS is away
still answers, with the counters and `outrider_streams_readable 0`. It says
too what /readyz would answer (`outrider_ready`, `outrider_context_serving`)
and how many answers this gateway gave by status class.

/metrics answers only with an engine key, sent as `X-Internal-Key` or as
`Authorization: Bearer <key>` (what a stock Prometheus scrape config can send).
Counters are not secrets, but an open endpoint tells anyone how busy the fleet
is and invites scraping the gateway to death.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Annotated, Any, Literal

import grpc
from fastapi import APIRouter, Depends, Path, Query, Request
from fastapi.responses import PlainTextResponse, StreamingResponse

from gateway import export, intake, readiness
from gateway.auth import Principal, scraper, staff
from gateway.codec import outcomes as outcomes_codec
from gateway.codec import retention
from gateway.codec import telemetry as codec
from gateway.contracts.common import (
    CARRIABLE,
    FILLED,
    PAGE_LIMIT_MAX,
    STAFF_ERRORS,
    Instant,
    WindowDays,
    WindowFrom,
    WindowTo,
    errors,
)
from gateway.contracts.paging import PageQuery, PageRequest
from gateway.contracts.telemetry import Insights, RunFacets, RunFilters, RunSeries, TaskRunDetail, TaskRunPage
from gateway.routing import JsonBodyRoute
from gateway.upstream import stub
from outrider.v1 import common_pb2_grpc, decisions_pb2_grpc, outcomes_pb2_grpc, telemetry_pb2_grpc
from services.common.clients import ContextCallError
from services.telemetry.rules import (
    DEFAULT_FACET_DAYS,
    MAX_ID_LENGTH,
    MAX_TASK_ID_LENGTH,
    MAX_WINDOW_DAYS,
    MIN_WINDOW_DAYS,
)

_log = logging.getLogger(__name__)

router = APIRouter(tags=["telemetry"], route_class=JsonBodyRoute)


def _telemetry(request: Request) -> telemetry_pb2_grpc.TelemetryStub:
    return stub(request, "telemetry", telemetry_pb2_grpc.TelemetryStub)


@router.get(
    "/admin/ai/insights",
    summary="Runs, failures and durations per agent; model calls and tokens; decisions; live state",
    response_model=Insights,
    responses=STAFF_ERRORS,
)
async def insights(
    request: Request,
    days: WindowDays = None,
    window_from: WindowFrom = None,
    window_to: WindowTo = None,
    _: Principal = Depends(staff),
) -> dict[str, Any]:
    ask = codec.insights_request(days, window_from, window_to)
    return codec.insights_json(await _telemetry(request).GetInsights(ask))


@router.get(
    "/admin/ai/insights/series",
    summary="Runs and failures per agent over the window, in equal buckets",
    response_model=RunSeries,
    responses=STAFF_ERRORS,
)
async def run_series(
    request: Request,
    days: WindowDays = None,
    window_from: WindowFrom = None,
    window_to: WindowTo = None,
    _: Principal = Depends(staff),
) -> dict[str, Any]:
    ask = codec.run_series_request(days, window_from, window_to)
    return codec.run_series_json(await _telemetry(request).GetRunSeries(ask))


def _run_filters(
    agent_id: Annotated[
        str, Query(max_length=MAX_ID_LENGTH, pattern=CARRIABLE, description="only this agent's runs")
    ] = "",
    status: Annotated[Literal["succeeded", "failed"] | None, Query(description="only runs that ended so")] = None,
    task_type: Annotated[
        str, Query(max_length=MAX_ID_LENGTH, pattern=CARRIABLE, description="only runs of this task type")
    ] = "",
    started_from: Annotated[
        Instant | None, Query(alias="from", description="started at or after (RFC 3339 with offset)")
    ] = None,
    started_to: Annotated[
        Instant | None, Query(alias="to", description="started before (RFC 3339 with offset)")
    ] = None,
    order: Annotated[
        Literal["newest", "slowest"] | None, Query(description="newest start first (default) or longest first")
    ] = None,
) -> RunFilters:
    return RunFilters(agent_id, status or "", task_type, started_from, started_to, order or "")


RunQuery = Annotated[RunFilters, Depends(_run_filters)]


@router.get(
    "/admin/ai/runs",
    summary="Task runs, newest first by their own start, or the slowest first",
    response_model=TaskRunPage,
    responses=STAFF_ERRORS,
)
async def list_runs(
    request: Request, page: PageQuery, filters: RunQuery, _: Principal = Depends(staff)
) -> dict[str, Any]:
    return codec.run_page_json(await _telemetry(request).ListRuns(codec.runs_request(filters, page)))


@router.get(
    "/admin/ai/runs/facets",
    summary="The agents that reported runs in the last days, registered or not, for filters to offer",
    response_model=RunFacets,
    responses=STAFF_ERRORS,
)
async def run_facets(
    request: Request,
    days: Annotated[
        int | None,
        Query(ge=MIN_WINDOW_DAYS, le=MAX_WINDOW_DAYS, description=f"window in days (default {DEFAULT_FACET_DAYS})"),
    ] = None,
    _: Principal = Depends(staff),
) -> dict[str, Any]:
    return codec.run_facets_json(await _telemetry(request).ListRunFacets(codec.run_facets_request(days)))


@router.get(
    "/admin/ai/runs/export",
    summary="Every task run the filters select, newest first by their own start, as CSV or JSON Lines",
    response_class=StreamingResponse,
    responses=export.RESPONSES,
)
async def export_runs(
    request: Request, filters: RunQuery, format: export.ExportFormat = "csv", _: Principal = Depends(staff)
) -> StreamingResponse:
    telemetry = _telemetry(request)

    return await export.streamed(
        name="runs",
        format=format,
        columns=codec.RUN_EXPORT_COLUMNS,
        page=lambda cursor: telemetry.ListRuns(codec.runs_request(filters, PageRequest(cursor, PAGE_LIMIT_MAX))),
        records=lambda reply: [codec.run_json(run) for run in reply.items],
    )


@router.get(
    "/admin/ai/runs/{agent_id}/{task_id}",
    summary="One task run and the model calls made during it",
    response_model=TaskRunDetail,
    responses={**STAFF_ERRORS, **errors(404)},
)
async def get_run(
    agent_id: Annotated[str, Path(max_length=MAX_ID_LENGTH, pattern=FILLED, description="the run's agent")],
    task_id: Annotated[str, Path(max_length=MAX_TASK_ID_LENGTH, pattern=FILLED, description="the run's task id")],
    request: Request,
    _: Principal = Depends(staff),
) -> dict[str, Any]:
    return codec.run_detail_json(await _telemetry(request).GetRun(codec.run_request(agent_id, task_id)))


async def _decision_refusals(request: Request) -> int | None:
    """Decisions refused for their agent, or None while the decisions context
    does not answer: the scrape still carries what the others counted."""
    decisions = stub(request, "decisions", decisions_pb2_grpc.DecisionsStub)
    try:
        reply = await decisions.CountAgentRefusals(codec.agent_refusals_request())
    except ContextCallError as error:
        if error.status not in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
            raise
        _log.warning("decision refusals left out of the scrape", extra={"status": error.status.name})
        return None
    return reply.decisions


@router.get(
    "/metrics",
    summary="Telemetry ingest and OTLP intake counters, stream fullness and consumer lag, Prometheus text;"
    " needs the internal key",
    responses={
        200: {"content": {"text/plain": {"schema": {"type": "string"}}}, "description": "Prometheus text format 0.0.4"},
        **errors(401, 503),
    },
)
async def metrics(request: Request, _: None = Depends(scraper)) -> PlainTextResponse:
    otlp = getattr(request.app.state, "otlp", None)
    counters, decisions, delivery, ready = await asyncio.gather(
        _telemetry(request).GetCounters(codec.counters_request()),
        _decision_refusals(request),
        _alert_delivery(request),
        readiness.readiness(request.app.state.clients, otlp, lag_max=request.app.state.settings.ingest_lag_max),
    )
    text = (
        codec.exposition(counters)
        + intake.exposition(otlp)
        + codec.stream_exposition(ready.stream_states)
        + readiness.exposition(ready)
        + request.app.state.responses.exposition()
        + retention.exposition(await _retention_reports(request))
        + codec.agent_refusals_exposition(
            counters, decisions=decisions, spans=otlp.foreign_agent_spans if otlp is not None else 0
        )
        + delivery
    )
    return PlainTextResponse(text, media_type="text/plain; version=0.0.4; charset=utf-8")


async def _alert_delivery(request: Request) -> str:
    try:
        reply = await stub(request, "outcomes", outcomes_pb2_grpc.OutcomesStub).GetAlertDelivery(
            outcomes_codec.alert_delivery_request()
        )
    except ContextCallError as error:
        _log.warning("alert delivery left out of the scrape", extra={"status": error.status.name})
        return ""
    return outcomes_codec.alert_delivery_exposition(reply)


async def _retention_reports(request: Request) -> dict[str, retention.Report]:
    """Every retaining context's counts; one that does not answer is left out
    of this scrape, so a playground outage does not blind the ingest metrics."""

    async def report(context: str) -> retention.Report | None:
        try:
            return await stub(request, context, common_pb2_grpc.RetentionStub).GetRetention(
                retention.retention_request()
            )
        except ContextCallError as error:
            _log.warning("retention counts not read", extra={"context": context, "status": error.status.name})
            return None

    answers = await asyncio.gather(*(report(context) for context in retention.RETAINING))
    return {context: answer for context, answer in zip(retention.RETAINING, answers, strict=True) if answer is not None}
