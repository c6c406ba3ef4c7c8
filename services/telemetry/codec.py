"""Telemetry records to and from protobuf: the only module that sees wire types."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from outrider.v1 import decisions_pb2, registry_pb2, telemetry_pb2
from outrider.wire import timestamp
from services.telemetry import rules
from services.telemetry.ingest_state import StreamReading


def requested_days(request: telemetry_pb2.GetInsightsRequest | telemetry_pb2.GetRunSeriesRequest) -> int | None:
    return request.days if request.HasField("days") else None


def all_agents() -> registry_pb2.ListAgentsRequest:
    return registry_pb2.ListAgentsRequest()


def registry_agents(reply: registry_pb2.ListAgentsResponse) -> list[rules.RegistryAgent]:
    return [rules.RegistryAgent(id=a.id, status=a.status) for a in reply.items]


def outcome_counts(reply: decisions_pb2.CountOutcomesResponse) -> list[tuple[str, str, int]]:
    return [(item.decision_type, item.outcome, item.count) for item in reply.items]


def decided_since(value: datetime) -> decisions_pb2.CountOutcomesRequest:
    return decisions_pb2.CountOutcomesRequest(decided_since=timestamp(value))


def insights_to_proto(
    *,
    days: int,
    receiving: bool,
    agents: Iterable[rules.AgentInsight],
    decisions: Iterable[rules.OutcomeCount] | None,
    degraded: Mapping[str, str],
    last_received_at: datetime | None,
    usage: rules.UsageReport | None = None,
    prices_configured: bool = False,
) -> telemetry_pb2.Insights:
    return telemetry_pb2.Insights(
        window_days=days,
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


def series_to_proto(
    days: int, window: rules.SeriesWindow, series: Mapping[str, list[rules.SeriesPoint]]
) -> telemetry_pb2.RunSeries:
    return telemetry_pb2.RunSeries(
        window_days=days,
        bucket_seconds=window.bucket_seconds,
        start=timestamp(window.start),
        end=timestamp(window.end),
        agents=[
            telemetry_pb2.AgentSeries(
                agent_id=agent_id,
                points=[
                    telemetry_pb2.SeriesPoint(start=timestamp(p.start), runs=p.runs, failures=p.failures)
                    for p in points
                ],
            )
            for agent_id, points in series.items()
        ],
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
