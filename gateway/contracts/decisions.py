"""Decision-memory request and response bodies (DESIGN.md §4, Decisions)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field

from gateway.contracts.common import (
    FILLED,
    Contract,
    Instant,
    Page,
    Reply,
    integer_or_text,
    json_int,
    json_object,
    text,
)
from services.decisions.rules import (
    DEFAULT_K,
    MAX_CONTEXT_BYTES,
    MAX_CONTEXT_DEPTH,
    MAX_K,
    MAX_REASONING_CHARS,
    MAX_TEXT_CHARS,
    MIN_PROPENSITY,
)

DECISION_TYPE_PATTERN = r"^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$"
UUID_PATTERN = r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"
# The embedding's length is the deployment's setting; the document states it
# (see gateway.app) and the route checks it.
EMBEDDING_SCHEMA_NAME = "Embedding"

DecisionType = text(min_length=2, max_length=64, pattern=DECISION_TYPE_PATTERN, examples=["stall_response"])
Filled = text(min_length=1, max_length=MAX_TEXT_CHARS, pattern=FILLED)
Context = json_object(max_bytes=MAX_CONTEXT_BYTES, max_depth=MAX_CONTEXT_DEPTH)
# The wire carries embeddings as 32-bit floats; a larger magnitude would arrive as infinity.
FLOAT32_MAX = 3.4028234663852886e38
Embedding = Annotated[
    list[Annotated[float, Field(strict=True, allow_inf_nan=False, ge=-FLOAT32_MAX, le=FLOAT32_MAX)]],
    Field(
        min_length=1,
        description="a vector of the deployment's dimension, not all zeros; instead of `context` for the search",
        json_schema_extra={"title": EMBEDDING_SCHEMA_NAME, "contains": {"not": {"const": 0}}},
    ),
]
Outcome = Literal["success", "failure", "unknown"]
# Who judged, as the verified caller: the sweeper, a signed-in person, an
# engine by its key's name, or `api` (an engine, before verdicts named it).
JudgedBy = Annotated[
    str,
    Field(
        pattern=r"^(sweeper|human|api|engine:[A-Za-z0-9._-]{1,64})$",
        description="`sweeper`, `human`, `engine:<engine name>`, or `api` for an engine's verdict of before",
        examples=["sweeper", "engine:dispatch"],
    ),
]


Arm = Literal["control", "candidate"]
# How a decision's action was carried out (DESIGN §10).
Execution = Literal["autonomous", "confirmed", "overridden", "proposed"]


@dataclass(frozen=True, slots=True)
class DecisionFilters:
    """What the listing and the export select by, read from one set of query
    parameters so the two can never drift apart; empty selects everything."""

    decision_type: str = ""
    outcome: str = ""
    agent_id: str = ""
    model: str = ""
    decided_from: datetime | None = None
    decided_to: datetime | None = None
    subject_id: str = ""
    rollout_id: str = ""
    model_contains: str = ""


class RolloutArmIn(Contract):
    id: text(pattern=UUID_PATTERN) = Field(description="the rollout's UUID, from the registry snapshot")
    arm: Arm


class RolloutArm(Reply):
    id: str
    arm: Arm


class DecisionCore(Contract):
    action: Filled
    confidence: Annotated[float, Field(strict=True, ge=0, le=1, allow_inf_nan=False)]


class DecisionIn(Contract):
    """One agent decision. `id` makes a retry idempotent: the same id again answers 200 `created: false`."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={"anyOf": [{"required": ["subject_id"]}, {"required": ["booking_id"]}]},
    )

    id: text(pattern=UUID_PATTERN) = Field(None, description="a UUID chosen by the engine")
    decision_type: DecisionType
    agent_id: Filled
    subject_id: Filled = Field(None, description="what the decision is about, e.g. a booking id")
    booking_id: integer_or_text(max_length=256, text_pattern=FILLED) = Field(
        None, description="older engines' name for subject_id; used only when subject_id is absent"
    )
    context: Context = None
    decision: DecisionCore
    reasoning: text(max_length=MAX_REASONING_CHARS) = None
    model: text(max_length=MAX_TEXT_CHARS) = Field(
        None, description="the model that decided; older engines send it as context.model"
    )
    embedding: Embedding = None
    decided_at: Instant = Field(None, description="when the agent decided; now when absent, never in the future")
    rollout: RolloutArmIn = Field(
        None, description="the arm of a running rollout the subject was assigned to (DESIGN §9)"
    )
    model_propensity: Annotated[float, Field(strict=True, ge=MIN_PROPENSITY, le=1, allow_inf_nan=False)] = Field(
        None, description="the probability the routing policy gave `model` (RecommendModel's propensity)"
    )
    execution: Execution | None = Field(
        None,
        description="how the action was carried out: by the agent alone, by a person confirming it, "
        "by a person doing something else, or not at all",
    )


class RecordReply(Reply):
    id: str
    created: bool = Field(description="false when this id was recorded before: a retry, not a second decision")


class SimilarIn(Contract):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={"anyOf": [{"required": ["context"]}, {"required": ["embedding"]}]},
    )

    decision_type: DecisionType
    context: Context = None
    embedding: Embedding = None
    k: json_int(ge=1, le=MAX_K) = Field(DEFAULT_K, description="how many precedents")


class OutcomeIn(Contract):
    outcome: Outcome
    reason: text(max_length=2000) = None


class DecisionFields(Reply):
    """A decision as every answer shows it."""

    id: str
    decision_type: str
    agent_id: str
    subject_id: str
    action: str
    confidence: float
    reasoning: str | None
    model: str | None
    decided_at: str | None = Field(json_schema_extra={"format": "date-time"})
    outcome: Outcome | None = Field(description="null while pending")
    outcome_reason: str | None
    judged_at: str | None = Field(json_schema_extra={"format": "date-time"})
    judged_by: JudgedBy | None


class Decision(DecisionFields):
    rollout: RolloutArm | None = Field(description="the rollout arm it was made under; null outside a rollout")
    model_propensity: float | None = Field(description="the routing policy's probability for `model`; null if unsaid")
    execution: Execution | None = Field(description="how the action was carried out; null when not said")


class Precedent(DecisionFields):
    context: dict[str, Any]
    similarity: float


class SimilarSummary(Reply):
    successes: int
    failures: int
    success_rate: float | None = Field(description="null when no precedent succeeded or failed")


class SimilarReply(Reply):
    items: list[Precedent]
    summary: SimilarSummary


class DecisionPage(Page[Decision]):
    pass


class OutcomeChange(Reply):
    old_outcome: Outcome | None = Field(description="null when the decision was pending before")
    new_outcome: Outcome
    reason: str | None
    judged_by: JudgedBy
    changed_by: str | None = Field(description="the person behind a human verdict")
    changed_by_email: str | None
    judged_at: str | None = Field(json_schema_extra={"format": "date-time"})


class NearDecision(DecisionFields):
    similarity: float


class DecisionDetail(Decision):
    history: list[OutcomeChange] = Field(description="every change of the outcome, oldest first")
    precedents: list[NearDecision] = Field(description="judged decisions of the same type nearest to this one")
    precedent_summary: SimilarSummary


class DecisionContext(Reply):
    decision_id: str
    context: dict[str, Any] = Field(
        description="the decision's context with every personal value replaced by a placeholder such as <phone#1>; "
        "{} once the subject's data was erased"
    )
    redacted: dict[str, int] = Field(
        description="how many values of each kind were replaced or rounded; never the values"
    )
    erased_at: str | None = Field(
        description="when the subject's personal data was erased: the context is gone",
        json_schema_extra={"format": "date-time"},
    )


class OutcomeBucket(Reply):
    start: str | None = Field(json_schema_extra={"format": "date-time"}, description="the bucket's start")
    successes: int
    failures: int
    unknown: int = Field(description="judged neither way: the window closed without enough evidence")
    pending: int = Field(description="not judged yet")


class DecisionTypeSeries(Reply):
    decision_type: str
    buckets: list[OutcomeBucket] = Field(description="every bucket of the window, oldest first, zeros included")


class DecisionFacets(Reply):
    window_days: int
    decision_types: list[str] = Field(description="sorted; each decided in the window")
    agent_ids: list[str] = Field(description="sorted; each decided in the window")
    models: list[str] = Field(description="sorted; each named by a decision made in the window")


class OutcomeSeries(Reply):
    window_days: int = Field(description="the days asked for; 0 when a range was")
    bucket_seconds: int
    start: str | None = Field(json_schema_extra={"format": "date-time"})
    end: str | None = Field(json_schema_extra={"format": "date-time"})
    types: list[DecisionTypeSeries] = Field(description="one series per decision type decided in the window")
