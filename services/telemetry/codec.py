"""Telemetry records to and from protobuf: the only module that sees wire types."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from google.protobuf.timestamp_pb2 import Timestamp

from outrider.v1 import decisions_pb2, registry_pb2, telemetry_pb2
from outrider.wire import timestamp
from services.common import guards, paging, windows
from services.common.errors import FieldError
from services.telemetry import rules
from services.telemetry.ingest_state import StreamReading


def asked_window(request: telemetry_pb2.GetInsightsRequest | telemetry_pb2.GetRunSeriesRequest) -> rules.AskedWindow:
    return rules.AskedWindow(
        days=request.days if request.HasField("days") else None,
        start=_instant(request.start, request.HasField("start"), "start"),
        end=_instant(request.end, request.HasField("end"), "end"),
    )


def all_agents() -> registry_pb2.ListAgentsRequest:
    return registry_pb2.ListAgentsRequest()


def registry_agents(reply: registry_pb2.ListAgentsResponse) -> list[rules.RegistryAgent]:
    return [rules.RegistryAgent(id=a.id, status=a.status) for a in reply.items]


def outcome_counts(reply: decisions_pb2.CountOutcomesResponse) -> list[tuple[str, str, int]]:
    return [(item.decision_type, item.outcome, item.count) for item in reply.items]


def decided_between(since: datetime, before: datetime | None) -> decisions_pb2.CountOutcomesRequest:
    return decisions_pb2.CountOutcomesRequest(decided_since=timestamp(since), decided_before=timestamp(before))


def insights_to_proto(
    *,
    span: windows.Span,
    receiving: bool,
    agents: Iterable[rules.AgentInsight],
    decisions: Iterable[rules.OutcomeCount] | None,
    degraded: Mapping[str, str],
    last_received_at: datetime | None,
    usage: rules.UsageReport | None = None,
    prices_configured: bool = False,
) -> telemetry_pb2.Insights:
    return telemetry_pb2.Insights(
        window_days=span.days or 0,
        window_start=timestamp(span.start),
        window_end=timestamp(span.end),
        receiving=receiving,
        agents=[
            telemetry_pb2.AgentInsight(
                agent_id=a.agent_id,
                runs=a.runs,
                failures=a.failures,
                avg_ms=a.avg_ms,
                p95_ms=a.p95_ms,
                last_run_at=timestamp(a.last_run_at),
                state=a.state,
                last_heartbeat_at=timestamp(a.last_heartbeat_at),
                registered=a.registered,
                model_calls=a.model_calls,
                input_tokens=a.input_tokens,
                output_tokens=a.output_tokens,
                estimated_cost=a.estimated_cost,
            )
            for a in agents
        ],
        decisions=[
            telemetry_pb2.DecisionCount(decision_type=d.decision_type, outcome=d.outcome, count=d.count)
            for d in decisions or ()
        ],
        decisions_available=decisions is not None,
        degraded=[telemetry_pb2.Degraded(source=s, reason=r) for s, r in sorted(degraded.items())],
        last_received_at=timestamp(last_received_at),
        models=[
            telemetry_pb2.ModelUsage(
                agent_id=row.stats.agent_id,
                model=row.stats.model,
                provider=row.stats.provider,
                calls=row.stats.calls,
                failures=row.stats.failures,
                input_tokens=row.stats.input_tokens,
                output_tokens=row.stats.output_tokens,
                avg_ms=row.stats.avg_ms,
                p95_ms=row.stats.p95_ms,
                estimated_cost=row.estimated_cost,
            )
            for row in (usage.rows if usage else ())
        ],
        prices_configured=prices_configured,
        unpriced_models=usage.unpriced if usage else (),
    )


def counters_to_proto(snapshot: Mapping[str, Any]) -> telemetry_pb2.Counters:
    """Counters.snapshot(): every count by name, and malformed_by_field as a mapping."""
    return telemetry_pb2.Counters(**snapshot)


def _usage_to_proto(series: Mapping[str, list[rules.UsagePoint]]) -> list[telemetry_pb2.UsageSeries]:
    return [
        telemetry_pb2.UsageSeries(
            name=name,
            points=[
                telemetry_pb2.UsagePoint(
                    start=timestamp(p.start),
                    calls=p.calls,
                    reported_calls=p.reported_calls,
                    input_tokens=p.input_tokens,
                    output_tokens=p.output_tokens,
                    estimated_cost=p.estimated_cost,
                )
                for p in points
            ],
        )
        for name, points in series.items()
    ]


def series_to_proto(series: rules.SeriesReport, *, price_source: str) -> telemetry_pb2.RunSeries:
    window = series.window
    return telemetry_pb2.RunSeries(
        window_days=window.days or 0,
        bucket_seconds=window.bucket_seconds,
        start=timestamp(window.start),
        end=timestamp(window.end),
        agents=[
            telemetry_pb2.AgentSeries(
                agent_id=agent_id,
                points=[
                    telemetry_pb2.SeriesPoint(
                        start=timestamp(p.start), runs=p.runs, failures=p.failures, p50_ms=p.p50_ms, p95_ms=p.p95_ms
                    )
                    for p in points
                ],
            )
            for agent_id, points in series.runs.items()
        ],
        usage_by_agent=_usage_to_proto(series.usage.by_agent),
        usage_by_model=_usage_to_proto(series.usage.by_model),
        price_source=price_source,
    )


def ingest_state_to_proto(readings: Iterable[StreamReading], *, pending_limit: int) -> telemetry_pb2.IngestState:
    streams = []
    for reading in readings:
        state = reading.state
        fullness, measure = state.fullest()
        streams.append(
            telemetry_pb2.StreamIngest(
                name=state.name,
                fullness=fullness,
                measure=measure,
                messages=state.messages,
                bytes=state.bytes,
                consumers=[
                    telemetry_pb2.ConsumerIngest(
                        name=consumer.name,
                        pending=consumer.pending,
                        ack_pending=consumer.ack_pending,
                        seconds_behind=reading.behind_s.get(consumer.name, 0.0),
                    )
                    for consumer in state.consumers
                ],
            )
        )
    return telemetry_pb2.IngestState(streams=streams, pending_limit=pending_limit)


# ─── The run list ──────────────────────────────────────────────────────────


def _instant(stamp: Timestamp, present: bool, field: str) -> datetime | None:
    """A Timestamp from outside, held to DESIGN §3's bounds before it becomes a datetime."""
    if not present or (stamp.seconds == 0 and stamp.nanos == 0):
        return None
    return guards.epoch_instant(field, stamp.seconds, stamp.nanos, now=datetime.now(UTC), error=FieldError)


def _filter(field: str, value: str, max_length: int) -> str | None:
    # Compared as stored: the ingest kept ids and types as they arrived.
    if not value:
        return None
    return guards.text(field, value, max_length=max_length, error=FieldError)


def _run_cursor(cursor: str, order: str) -> rules.RunKey | rules.SlowRunKey | None:
    if order == rules.SLOWEST:
        return paging.decode_cursor(cursor, rules.slow_run_key)
    return paging.decode_cursor(cursor, rules.run_key)


def run_listing_from_proto(request: telemetry_pb2.ListTaskRunsRequest) -> rules.RunListing:
    started_from = _instant(request.started_from, request.HasField("started_from"), "started_from")
    started_to = _instant(request.started_to, request.HasField("started_to"), "started_to")
    rules.run_range(started_from, started_to)
    order = rules.run_order(request.order)
    return rules.RunListing(
        agent_id=_filter("agent_id", request.agent_id, rules.MAX_ID_LENGTH),
        status=rules.run_status_filter(request.status),
        task_type=_filter("task_type", request.task_type, rules.MAX_ID_LENGTH),
        started_from=started_from,
        started_to=started_to,
        after=_run_cursor(request.page.cursor, order),
        limit=paging.page_limit(request.page.limit),
        order=order,
    )


def run_identity_from_proto(request: telemetry_pb2.GetTaskRunRequest) -> tuple[str, str]:
    """(agent_id, task_id), each required."""
    agent_id = guards.text("agent_id", request.agent_id, max_length=rules.MAX_ID_LENGTH, min_length=1, error=FieldError)
    task_id = guards.text(
        "task_id", request.task_id, max_length=rules.MAX_TASK_ID_LENGTH, min_length=1, error=FieldError
    )
    return agent_id, task_id


def run_to_proto(run: rules.TaskRun) -> telemetry_pb2.TaskRun:
    return telemetry_pb2.TaskRun(
        agent_id=run.agent_id,
        task_id=run.task_id,
        task_type=run.task_type,
        status=run.status,
        started_at=timestamp(run.started_at),
        finished_at=timestamp(run.finished_at),
        duration_ms=run.duration_ms,
        error=run.error or "",
        trace_id=rules.run_trace(run.task_id) or "",
    )


def facet_days_from_proto(request: telemetry_pb2.ListRunFacetsRequest) -> int:
    return rules.facet_days(request.days if request.HasField("days") else None)


def run_facets_to_proto(days: int, agent_ids: Iterable[str]) -> telemetry_pb2.RunFacets:
    return telemetry_pb2.RunFacets(window_days=days, agent_ids=list(agent_ids))


def runs_to_proto(runs: Iterable[rules.TaskRun], next_cursor: str) -> telemetry_pb2.ListTaskRunsResponse:
    return telemetry_pb2.ListTaskRunsResponse(items=[run_to_proto(run) for run in runs], next_cursor=next_cursor)


def model_call_to_proto(call: rules.ModelCall) -> telemetry_pb2.ModelCall:
    return telemetry_pb2.ModelCall(
        trace_id=call.trace_id,
        span_id=call.span_id,
        operation=call.operation,
        provider=call.provider or "",
        model=call.response_model or call.request_model or "",
        input_tokens=call.input_tokens,
        output_tokens=call.output_tokens,
        status=call.status,
        error_type=call.error_type or "",
        started_at=timestamp(call.started_at),
        duration_ms=call.duration_ms,
    )


def run_detail_to_proto(detail: rules.RunDetail) -> telemetry_pb2.TaskRunDetail:
    return telemetry_pb2.TaskRunDetail(
        run=run_to_proto(detail.run),
        model_calls=[model_call_to_proto(call) for call in detail.model_calls],
        matched_by=detail.matched_by,
        model_calls_truncated=detail.truncated,
    )
