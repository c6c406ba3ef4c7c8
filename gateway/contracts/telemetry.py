"""Insights and run list response bodies (DESIGN.md §4, Telemetry)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from pydantic import Field

from gateway.contracts.common import Page, Reply


class AgentInsight(Reply):
    agent_id: str
    runs: int
    failures: int
    avg_ms: float | None = Field(description="null for an agent with no runs in the window")
    p95_ms: float | None
    last_run_at: str | None = Field(json_schema_extra={"format": "date-time"})
    state: str = Field(description="the live state from its heartbeat; silent when none arrived")
    last_heartbeat_at: str | None = Field(json_schema_extra={"format": "date-time"})
    registered: bool = Field(description="false for an agent that reports runs but is not in the registry")
    model_calls: int = Field(description="model calls reported over OTLP in the window")
    input_tokens: int = Field(description="input tokens of those calls that reported usage")
    output_tokens: int = Field(description="output tokens of those calls that reported usage")
    estimated_cost: float | None = Field(
        description="from the configured price table; null without one, or when it does not price every model "
        "this agent called"
    )


class ModelUsage(Reply):
    agent_id: str
    model: str | None = Field(
        description="the model that answered, else the one asked for; null when neither was reported"
    )
    provider: str | None
    calls: int
    failures: int
    input_tokens: int
    output_tokens: int
    avg_ms: float
    p95_ms: float
    estimated_cost: float | None = Field(description="null without a price table or when it does not price this model")


class DecisionCount(Reply):
    decision_type: str
    outcome: Literal["success", "failure", "unknown", "pending"]
    count: int


class Degraded(Reply):
    source: str
    reason: str


@dataclass(frozen=True, slots=True)
class RunFilters:
    """What the run list and its export select by, read from one set of query
    parameters so the two can never drift apart; empty selects everything."""

    agent_id: str = ""
    status: str = ""
    task_type: str = ""
    started_from: datetime | None = None
    started_to: datetime | None = None
    order: str = ""


class Insights(Reply):
    window_days: int = Field(description="the days asked for; 0 when a range was")
    window_start: str | None = Field(json_schema_extra={"format": "date-time"}, description="the span read, from")
    window_end: str | None = Field(json_schema_extra={"format": "date-time"}, description="the span read, before")
    receiving: bool = Field(description="false when no run or heartbeat arrived for 5 minutes")
    last_received_at: str | None = Field(json_schema_extra={"format": "date-time"})
    agents: list[AgentInsight]
    decisions: list[DecisionCount]
    decisions_available: bool
    degraded: list[Degraded] = Field(description="sources that did not answer, so their part is missing")
    models: list[ModelUsage] = Field(description="model calls per agent and model in the window")
    prices_configured: bool = Field(description="whether a price table (OUTRIDER_MODEL_PRICES) is configured")
    unpriced_models: list[str] = Field(description="models called in the window that the price table does not price")


class SeriesPoint(Reply):
    start: str | None = Field(json_schema_extra={"format": "date-time"}, description="the bucket's start")
    runs: int
    failures: int
    p50_ms: float | None = Field(description="median duration of the bucket's runs; null when none started in it")
    p95_ms: float | None = Field(description="95th percentile duration; null when no run started in the bucket")


class UsagePoint(Reply):
    start: str | None = Field(json_schema_extra={"format": "date-time"}, description="the bucket's start")
    calls: int
    reported_calls: int = Field(description="calls that reported usage; the tokens are theirs alone")
    input_tokens: int
    output_tokens: int
    estimated_cost: float | None = Field(
        description="USD from the price table; null when a model called in the bucket has no price"
    )


class UsageSeries(Reply):
    name: str = Field(description="the agent or the model")
    points: list[UsagePoint] = Field(description="every bucket of the window, oldest first, zeros included")


class AgentSeries(Reply):
    agent_id: str
    points: list[SeriesPoint] = Field(description="every bucket of the window, oldest first, zeros included")


class RunSeries(Reply):
    window_days: int = Field(description="the days asked for; 0 when a range was")
    bucket_seconds: int
    start: str | None = Field(json_schema_extra={"format": "date-time"})
    end: str | None = Field(json_schema_extra={"format": "date-time"})
    agents: list[AgentSeries]
    usage_by_agent: list[UsageSeries]
    usage_by_model: list[UsageSeries]
    price_source: Literal["default", "configured", "none"] = Field(
        description="default: built-in list-price estimates; configured: OUTRIDER_MODEL_PRICES; none: nothing priced"
    )


class TaskRun(Reply):
    agent_id: str
    task_id: str
    task_type: str
    status: Literal["succeeded", "failed"]
    started_at: str | None = Field(json_schema_extra={"format": "date-time"}, description="the engine's own clock")
    finished_at: str | None = Field(json_schema_extra={"format": "date-time"})
    duration_ms: float
    error: str | None = Field(description="null when the run succeeded or its failure said nothing")
    trace_id: str | None = Field(description="the OTLP trace the run is a span of; null for a telemetry.task run")


class TaskRunPage(Page[TaskRun]):
    pass


class RunFacets(Reply):
    window_days: int
    agent_ids: list[str] = Field(description="sorted; each started a run in the window, registered or not")


class ModelCall(Reply):
    trace_id: str
    span_id: str
    operation: str = Field(description="gen_ai.operation.name: chat, text_completion, generate_content, embeddings")
    provider: str | None
    model: str | None = Field(
        description="the model that answered, else the one asked for; null when neither was reported"
    )
    input_tokens: int | None = Field(description="null when the span reported no usage")
    output_tokens: int | None
    status: Literal["succeeded", "failed"]
    error_type: str | None
    started_at: str | None = Field(json_schema_extra={"format": "date-time"})
    duration_ms: float


class TaskRunDetail(Reply):
    run: TaskRun
    model_calls: list[ModelCall] = Field(description="oldest first")
    matched_by: Literal["trace", "window"] = Field(
        description="trace: the calls of the run's own OTLP trace; window: the agent's calls that started while "
        "the run did (a run from telemetry.task names no trace)"
    )
    model_calls_truncated: bool = Field(description="more calls matched than a detail carries; the first are shown")
