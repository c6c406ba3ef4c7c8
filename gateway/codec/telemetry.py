"""Telemetry messages to the gateway's JSON and text: insights, run series,
and the counters and the streams' state as Prometheus text."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import Any

from gateway.codec.common import page_request, timestamp_text
from gateway.contracts.paging import PageRequest
from gateway.contracts.telemetry import RunFilters
from outrider.v1 import decisions_pb2, telemetry_pb2
from outrider.wire import timestamp
from services.common.stream_state import ConsumerState, StreamState, alarms

# name -> help text, in the order the counters are exposed.
METRICS: dict[str, str] = {
    "received": "telemetry.task deliveries processed (a redelivery counts again).",
    "inserted": "Task runs written for the first time.",
    "duplicates": "Well-formed deliveries whose run was already written.",
    "malformed": "Task messages terminated and heartbeats dropped as malformed.",
    "redelivered": "Deliveries the stream had delivered before.",
    "heartbeats": "Heartbeats written to the agent_heartbeats bucket.",
    "dead_lettered": "Task runs given up on after their last allowed delivery still failed to write.",
    "otlp_received": "telemetry.otlp deliveries processed (a redelivery counts again).",
    "otlp_malformed": "OTLP messages terminated as undecodable.",
    "otlp_spans_rejected": "Spans in delivered OTLP messages skipped by the mapping's checks.",
    "otlp_runs_inserted": "Task runs written from OTLP spans for the first time.",
    "model_calls_inserted": "Model calls written from OTLP spans for the first time.",
    "otlp_duplicates": "OTLP runs and model calls already written (same trace and span id).",
    "otlp_unwritable": "OTLP messages terminated after failing to write on their own.",
    "replies_refused": "Heartbeat-subject requests left unanswered: their reply subject was not the sender's inbox.",
}
# The kinds of record an engine's key may be refused for an agent it does not list.
AGENT_REFUSAL_KINDS = ("decision", "task_run", "heartbeat", "span")

# name -> (help text, the value of one stream), in the order they are exposed.
STREAM_GAUGES: dict[str, tuple[str, Callable[[StreamState], float]]] = {
    "messages": (
        "Messages the stream holds: those no consumer has acknowledged or terminated yet.",
        lambda stream: stream.messages,
    ),
    "bytes": ("Bytes the stream holds.", lambda stream: stream.bytes),
    "max_bytes": (
        "The stream's byte limit; once it is reached, publishes are refused (-1: no limit).",
        lambda stream: stream.max_bytes,
    ),
    "fullness_ratio": (
        "How near the stream is to its nearest limit, 0 to 1: bytes, messages, or its fullest subject's messages.",
        lambda stream: round(stream.fullness, 6),
    ),
}
CONSUMER_GAUGES: dict[str, tuple[str, Callable[[ConsumerState], int]]] = {
    "pending_messages": (
        "Messages stored and not yet delivered to the durable consumer: its lag.",
        lambda consumer: consumer.pending,
    ),
    "ack_pending_messages": (
        "Messages delivered to the consumer and neither acknowledged nor terminated yet.",
        lambda consumer: consumer.ack_pending,
    ),
    "redelivered_messages": (
        "Of the messages awaiting an acknowledgement, those delivered more than once.",
        lambda consumer: consumer.redelivered,
    ),
}

# ─── Out ───────────────────────────────────────────────────────────────────


def agent_json(agent: telemetry_pb2.AgentInsight) -> dict[str, Any]:
    has_runs = agent.runs > 0
    return {
        "agent_id": agent.agent_id,
        "runs": agent.runs,
        "failures": agent.failures,
        # An average of no runs is unknown, not zero milliseconds.
        "avg_ms": round(agent.avg_ms, 3) if has_runs else None,
        "p95_ms": round(agent.p95_ms, 3) if has_runs else None,
        "last_run_at": timestamp_text(agent.last_run_at, agent.HasField("last_run_at")),
        "state": agent.state,
        "last_heartbeat_at": timestamp_text(agent.last_heartbeat_at, agent.HasField("last_heartbeat_at")),
        "registered": agent.registered,
        "model_calls": agent.model_calls,
        "input_tokens": agent.input_tokens,
        "output_tokens": agent.output_tokens,
        "estimated_cost": _cost(agent),
    }


def _cost(message: telemetry_pb2.AgentInsight | telemetry_pb2.ModelUsage) -> float | None:
    return round(message.estimated_cost, 6) if message.HasField("estimated_cost") else None


def model_json(usage: telemetry_pb2.ModelUsage) -> dict[str, Any]:
    return {
        "agent_id": usage.agent_id,
        "model": usage.model or None,
        "provider": usage.provider or None,
        "calls": usage.calls,
        "failures": usage.failures,
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "avg_ms": round(usage.avg_ms, 3),
        "p95_ms": round(usage.p95_ms, 3),
        "estimated_cost": _cost(usage),
    }


def insights_json(reply: telemetry_pb2.Insights) -> dict[str, Any]:
    return {
        "window_days": reply.window_days,
        "window_start": timestamp_text(reply.window_start),
        "window_end": timestamp_text(reply.window_end),
        "receiving": reply.receiving,
        "last_received_at": timestamp_text(reply.last_received_at, reply.HasField("last_received_at")),
        "agents": [agent_json(a) for a in reply.agents],
        "decisions": [
            {"decision_type": d.decision_type, "outcome": d.outcome, "count": d.count} for d in reply.decisions
        ],
        "decisions_available": reply.decisions_available,
        "degraded": [{"source": d.source, "reason": d.reason} for d in reply.degraded],
        "models": [model_json(m) for m in reply.models],
        "prices_configured": reply.prices_configured,
        "unpriced_models": list(reply.unpriced_models),
    }


def _optional_number(message: Any, name: str) -> float | None:
    return getattr(message, name) if message.HasField(name) else None


def _usage_json(series: Iterable[telemetry_pb2.UsageSeries]) -> list[dict[str, Any]]:
    return [
        {
            "name": s.name,
            "points": [
                {
                    "start": timestamp_text(p.start),
                    "calls": p.calls,
                    "reported_calls": p.reported_calls,
                    "input_tokens": p.input_tokens,
                    "output_tokens": p.output_tokens,
                    "estimated_cost": _optional_number(p, "estimated_cost"),
                }
                for p in s.points
            ],
        }
        for s in series
    ]


def run_series_json(reply: telemetry_pb2.RunSeries) -> dict[str, Any]:
    return {
        "window_days": reply.window_days,
        "bucket_seconds": reply.bucket_seconds,
        "start": timestamp_text(reply.start),
        "end": timestamp_text(reply.end),
        "agents": [
            {
                "agent_id": series.agent_id,
                "points": [
                    {
                        "start": timestamp_text(p.start),
                        "runs": p.runs,
                        "failures": p.failures,
                        "p50_ms": _optional_number(p, "p50_ms"),
                        "p95_ms": _optional_number(p, "p95_ms"),
                    }
                    for p in series.points
                ],
            }
            for series in reply.agents
        ],
        "usage_by_agent": _usage_json(reply.usage_by_agent),
        "usage_by_model": _usage_json(reply.usage_by_model),
        "price_source": reply.price_source,
    }


def exposition(counters: telemetry_pb2.Counters) -> str:
    """Prometheus text format 0.0.4."""
    lines = []
    for name, help_text in METRICS.items():
        metric = f"outrider_telemetry_{name}_total"
        lines += [f"# HELP {metric} {help_text}", f"# TYPE {metric} counter", f"{metric} {getattr(counters, name)}"]
    metric = "outrider_telemetry_malformed_by_field_total"
    lines += [f"# HELP {metric} Malformed telemetry messages by the field at fault.", f"# TYPE {metric} counter"]
    # Field names come from the parser's own vocabulary, never from the message.
    lines += [f'{metric}{{field="{field}"}} {count}' for field, count in sorted(counters.malformed_by_field.items())]
    return "\n".join(lines) + "\n"


def _label(value: str) -> str:
    """A label value as the text format quotes it: stream and consumer names
    are an operator's to choose, so they are escaped rather than trusted."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def stream_exposition(streams: Sequence[StreamState] | None) -> str:
    """Each stream's fullness and each durable consumer's backlog, Prometheus
    text format 0.0.4; `None` when NATS could not be read, which the first
    gauge says instead of the figures going missing unexplained."""
    readable = "outrider_streams_readable"
    lines = [
        f"# HELP {readable} Whether this gateway read the streams' state from NATS for this scrape (1) or not (0).",
        f"# TYPE {readable} gauge",
        f"{readable} {0 if streams is None else 1}",
    ]
    for name, (help_text, stream_value) in STREAM_GAUGES.items():
        metric = f"outrider_stream_{name}"
        lines += [f"# HELP {metric} {help_text}", f"# TYPE {metric} gauge"]
        lines += [f'{metric}{{stream="{_label(s.name)}"}} {stream_value(s)}' for s in streams or ()]
    for name, (help_text, consumer_value) in CONSUMER_GAUGES.items():
        metric = f"outrider_consumer_{name}"
        lines += [f"# HELP {metric} {help_text}", f"# TYPE {metric} gauge"]
        lines += [
            f'{metric}{{stream="{_label(s.name)}",consumer="{_label(c.name)}"}} {consumer_value(c)}'
            for s in streams or ()
            for c in s.consumers
        ]
    return "\n".join(lines) + "\n"


def streams_readiness_json(streams: Sequence[StreamState], *, lag_max: int) -> dict[str, Any]:
    """The streams' entry of /readyz: ready unless a stream is near full or a
    consumer too far behind, each reason said."""
    reasons = alarms(streams, lag_max=lag_max)
    return {
        "ready": not reasons,
        "reasons": reasons,
        "fullness": {stream.name: round(stream.fullness, 4) for stream in streams},
        "lag": {
            f"{stream.name}/{consumer.name}": consumer.pending for stream in streams for consumer in stream.consumers
        },
    }


def streams_unreadable_json(why: str) -> dict[str, Any]:
    return {"ready": False, "reasons": [f"NATS did not answer for the streams: {why}"], "fullness": {}, "lag": {}}


def agent_refusals_exposition(counters: telemetry_pb2.Counters, *, decisions: int | None, spans: int) -> str:
    """Records refused because the engine's key does not list their agent,
    one series per kind, gathered from the parts that refuse them: the
    decisions context (its series left out when it did not answer), the
    telemetry context and this gateway (spans)."""
    counts: dict[str, int] = {**counters.agent_refusals, "span": spans}
    if decisions is not None:
        counts["decision"] = decisions
    metric = "outrider_engine_agent_refusals_total"
    lines = [
        f"# HELP {metric} Records refused because the engine's key does not list their agent, by kind.",
        f"# TYPE {metric} counter",
        *(
            f'{metric}{{kind="{kind}"}} {counts.get(kind, 0)}'
            for kind in AGENT_REFUSAL_KINDS
            if kind != "decision" or decisions is not None
        ),
    ]
    return "\n".join(lines) + "\n"


def run_json(run: telemetry_pb2.TaskRun) -> dict[str, Any]:
    return {
        "agent_id": run.agent_id,
        "task_id": run.task_id,
        "task_type": run.task_type,
        "status": run.status,
        "started_at": timestamp_text(run.started_at, run.HasField("started_at")),
        "finished_at": timestamp_text(run.finished_at, run.HasField("finished_at")),
        "duration_ms": round(run.duration_ms, 3),
        "error": run.error or None,
        "trace_id": run.trace_id or None,
    }


# A run as the export's columns hold it: the listing's fields, in its order.
RUN_EXPORT_COLUMNS = (
    "agent_id",
    "task_id",
    "task_type",
    "status",
    "started_at",
    "finished_at",
    "duration_ms",
    "error",
    "trace_id",
)


def run_facets_request(days: int | None) -> telemetry_pb2.ListRunFacetsRequest:
    return telemetry_pb2.ListRunFacetsRequest(days=days)


def run_facets_json(reply: telemetry_pb2.RunFacets) -> dict[str, Any]:
    return {"window_days": reply.window_days, "agent_ids": list(reply.agent_ids)}


def run_page_json(reply: telemetry_pb2.ListTaskRunsResponse) -> dict[str, Any]:
    return {"items": [run_json(run) for run in reply.items], "next_cursor": reply.next_cursor or None}


def model_call_json(call: telemetry_pb2.ModelCall) -> dict[str, Any]:
    return {
        "trace_id": call.trace_id,
        "span_id": call.span_id,
        "operation": call.operation,
        "provider": call.provider or None,
        "model": call.model or None,
        # Unset is unknown usage, not zero tokens.
        "input_tokens": call.input_tokens if call.HasField("input_tokens") else None,
        "output_tokens": call.output_tokens if call.HasField("output_tokens") else None,
        "status": call.status,
        "error_type": call.error_type or None,
        "started_at": timestamp_text(call.started_at, call.HasField("started_at")),
        "duration_ms": round(call.duration_ms, 3),
    }


def run_detail_json(reply: telemetry_pb2.TaskRunDetail) -> dict[str, Any]:
    return {
        "run": run_json(reply.run),
        "model_calls": [model_call_json(call) for call in reply.model_calls],
        "matched_by": reply.matched_by,
        "model_calls_truncated": reply.model_calls_truncated,
    }


# ─── In ────────────────────────────────────────────────────────────────────


def insights_request(
    days: int | None, start: datetime | None, end: datetime | None
) -> telemetry_pb2.GetInsightsRequest:
    # Left out, a field stays unset and the context picks its default window.
    return telemetry_pb2.GetInsightsRequest(days=days, start=timestamp(start), end=timestamp(end))


def run_series_request(
    days: int | None, start: datetime | None, end: datetime | None
) -> telemetry_pb2.GetRunSeriesRequest:
    return telemetry_pb2.GetRunSeriesRequest(days=days, start=timestamp(start), end=timestamp(end))


def counters_request() -> telemetry_pb2.GetCountersRequest:
    return telemetry_pb2.GetCountersRequest()


def agent_refusals_request() -> decisions_pb2.CountAgentRefusalsRequest:
    return decisions_pb2.CountAgentRefusalsRequest()


def runs_request(filters: RunFilters, page: PageRequest) -> telemetry_pb2.ListTaskRunsRequest:
    # An instant left out stays an unset field: no bound, not the epoch.
    return telemetry_pb2.ListTaskRunsRequest(
        agent_id=filters.agent_id,
        status=filters.status,
        task_type=filters.task_type,
        started_from=timestamp(filters.started_from),
        started_to=timestamp(filters.started_to),
        page=page_request(page),
        order=filters.order,
    )


def run_request(agent_id: str, task_id: str) -> telemetry_pb2.GetTaskRunRequest:
    return telemetry_pb2.GetTaskRunRequest(agent_id=agent_id, task_id=task_id)
