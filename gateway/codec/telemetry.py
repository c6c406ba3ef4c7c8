"""Telemetry messages to the gateway's JSON and text: insights, run series, and the counters as Prometheus text."""

from __future__ import annotations

from typing import Any

from gateway.codec.common import timestamp_text
from outrider.v1 import decisions_pb2, telemetry_pb2

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
                    {"start": timestamp_text(p.start), "runs": p.runs, "failures": p.failures} for p in series.points
                ],
            }
            for series in reply.agents
        ],
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


# ─── In ────────────────────────────────────────────────────────────────────


def insights_request(days: int | None) -> telemetry_pb2.GetInsightsRequest:
    # Left out, the field stays unset and the context picks its default window.
    return telemetry_pb2.GetInsightsRequest() if days is None else telemetry_pb2.GetInsightsRequest(days=days)


def run_series_request(days: int | None) -> telemetry_pb2.GetRunSeriesRequest:
    return telemetry_pb2.GetRunSeriesRequest() if days is None else telemetry_pb2.GetRunSeriesRequest(days=days)


def counters_request() -> telemetry_pb2.GetCountersRequest:
    return telemetry_pb2.GetCountersRequest()


def agent_refusals_request() -> decisions_pb2.CountAgentRefusalsRequest:
    return decisions_pb2.CountAgentRefusalsRequest()
