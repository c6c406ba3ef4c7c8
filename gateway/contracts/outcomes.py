"""Outcome-judge request and response bodies (DESIGN.md §4, Outcomes)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import ConfigDict, Field, StrictBool

from gateway.contracts.common import (
    FILLED,
    Contract,
    Instant,
    Page,
    Reply,
    integer_or_text,
    text,
)
from gateway.contracts.decisions import RolloutArmIn
from services.outcomes.rules import MAX_SUBJECT_ID

FACT_NAMES = ("status", "assigned_at", "delivered_at", "sla_due_at", "cancelled")
Filled = text(min_length=1, max_length=256, pattern=FILLED)
TurnText = text(max_length=20_000)
Label = text(max_length=256)


class FactsIn(Contract):
    """A `facts.booking` event. Null and absent both mean "no news" about a field;
    fields this version does not know are ignored, so a producer may add some."""

    model_config = ConfigDict(
        extra="allow",
        json_schema_extra={
            "anyOf": [{"required": [name], "properties": {name: {"not": {"type": "null"}}}} for name in FACT_NAMES]
        },
    )

    subject_id: integer_or_text(max_length=MAX_SUBJECT_ID, text_pattern=FILLED)
    at: Instant = Field(description="when these facts were observed")
    status: Filled | None = None
    assigned_at: Instant | None = None
    delivered_at: Instant | None = None
    sla_due_at: Instant | None = None
    cancelled: StrictBool | None = None


class Observation(Reply):
    value: Any = Field(description="the newest value seen (text, a date-time or a boolean)")
    at: str = Field(json_schema_extra={"format": "date-time"})


class FactsReply(Reply):
    subject_id: str
    facts: dict[str, Observation] = Field(description="the subject's merged facts, newest observation per field")
    changed: bool = Field(description="false when the event taught nothing new")


class SweepReply(Reply):
    judged: int
    by_outcome: dict[str, int]
    scanned: int


class TurnIn(Contract):
    role: Literal["user", "assistant"]
    text: TurnText
    ref: Filled = Field(description="unique within the conversation; keys the credit ledger")
    model: Label | None = None
    trace_id: Label | None = None
    rollout: RolloutArmIn | None = Field(
        None,
        description="the rollout arm an assistant turn answered under: its credit counts for that arm (DESIGN §9)",
    )


class ConversationIn(Contract):
    conversation_id: Filled
    turns: list[TurnIn] = Field(max_length=1000)
    skill: text(max_length=128) | None = None
    decision_type: text(max_length=64) | None = None


class Credit(Reply):
    turn_ref: str
    model: str | None
    trace_id: str | None
    credit: Literal["success", "failure"]
    confidence: float
    episode_id: int
    resolution: Literal["resolved", "abandoned", "ambiguous", "ongoing"]


class CreditsReply(Reply):
    credits: list[Credit]
    deferred: int = Field(description="assistant turns whose episode is still open")


class ConversationMetrics(Reply):
    model: str | None
    episodes: int
    resolved: int
    abandoned: int
    ambiguous: int
    ongoing: int
    first_turn_resolutions: int
    first_turn_resolution_rate: float
    avg_turns_to_resolution: float
    churn_rate: float
    pending: int


class Tally(Reply):
    successes: float
    failures: float


class ModelArm(Reply):
    model: str
    successes: float
    failures: float
    alpha: float
    beta: float
    posterior_mean: float
    pick_probability: float
    credit: Tally = Field(description="fractional episode credits")
    decisions: Tally = Field(description="whole judged decisions")


class Routing(Reply):
    key: str
    pick: str | None = Field(description="the Thompson pick; null when no model has evidence")
    seed: int
    arms: list[ModelArm]


class Estimate(Reply):
    mean: float
    low: float = Field(description="95 % interval, lower end")
    high: float = Field(description="95 % interval, upper end")


class LoggedPolicy(Reply):
    decisions: int = Field(description="decisions of the type, judged or not")
    judged: int = Field(description="judged success or failure")
    with_propensity: int = Field(description="judged decisions that carry the router's propensity")
    mean: float | None = Field(description="the logged policy's own judged success rate; null when none is judged")
    unknown: int
    pending: int


class Evaluation(Reply):
    decision_type: str
    model: str
    method: Literal["snips"] = Field(description="self-normalised inverse-propensity scoring")
    estimate: Estimate | None = Field(
        description="the success rate had every judged decision of the type gone to `model`; "
        "null with fewer than 30 matched decisions"
    )
    logged: LoggedPolicy
    matched: int = Field(description="judged decisions with a propensity that went to `model`")
    effective_sample_size: float = Field(description="(Σw)² / Σw² over the matched decisions")
    interval_method: str
    reason: str


class ExecutionEvidence(Reply):
    judged: int
    successes: int
    failures: int
    unknown: int
    pending: int
    mean: float | None = Field(description="judged success rate; null when none is judged")
    low: float | None = Field(description="95 % Wilson interval, lower end")
    high: float | None = Field(description="95 % Wilson interval, upper end")


Execution = Literal["autonomous", "confirmed", "overridden", "proposed"]


class AutonomyEvidence(Reply):
    agent_id: str
    decision_type: str | None = Field(description="null: every decision type of the agent together")
    by_execution: dict[Execution, ExecutionEvidence]
    agreement_rate: float | None = Field(
        description="confirmed ÷ (confirmed + overridden), judged or not; null with neither"
    )
    recommendation: Literal["ready", "keep_off", "demote", "not_enough_evidence"]
    reason: str


# ─── Alerts (DESIGN §10) ─────────────────────────────────────────────────────


class Alert(Reply):
    id: str
    rule: Literal["judged_success_drop", "agent_silent", "ingest_lag", "stream_full", "rollout_halted"]
    agent_id: str | None = Field(description="the agent the alert is about; null for a platform alert")
    decision_type: str | None = Field(description="the decision type of a judged_success_drop")
    rollout_id: str | None = Field(description="the rollout of a rollout_halted alert")
    state: Literal["firing", "resolved"]
    summary: str
    value: float = Field(description="what the rule measured: the drop, seconds silent or behind, a fullness")
    threshold: float = Field(description="the value at which the rule fires")
    started_at: str = Field(json_schema_extra={"format": "date-time"})
    resolved_at: str | None = Field(json_schema_extra={"format": "date-time"})


class AlertPage(Page[Alert]):
    pass
