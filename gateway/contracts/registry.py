"""Registry request and response bodies (DESIGN.md §4, Registry)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from pydantic import ConfigDict, Field, StrictBool, StrictFloat

from gateway.contracts.common import (
    INT32_MAX,
    Contract,
    Number,
    Page,
    Reply,
    json_int,
    json_object,
    keyed,
    text,
)
from services.registry.rollouts.rules import (
    CONFIDENCE_BOUNDS,
    DECISION_TYPE_LENGTH,
    DECISION_TYPE_PATTERN,
    DEFAULT_STEPS,
    MAX_DROP_BOUNDS,
    MAX_REASON_CHARS,
    MAX_STEPS,
    MIN_JUDGED_BOUNDS,
    RolloutState,
)
from services.registry.rules import (
    MAX_CATEGORY_LENGTH,
    MAX_DESCRIPTION_LENGTH,
    MAX_PROMPT_LENGTH,
    MAX_SKILL_ID_LENGTH,
    MAX_TITLE_LENGTH,
    MODEL_ID_PATTERN,
    SKILL_ID_PATTERN,
    THRESHOLD_KEY_PATTERN,
    AgentStatus,
    Executor,
    Runtime,
    SkillSource,
    ThresholdType,
    ToolKind,
)

THRESHOLD_KEY = f"^{THRESHOLD_KEY_PATTERN.pattern}$"
SkillId = text(
    min_length=1,
    max_length=MAX_SKILL_ID_LENGTH,
    pattern=f"^{SKILL_ID_PATTERN.pattern}$",
    examples=["nudge_stale_rider"],
)
ModelId = text(pattern=f"^{MODEL_ID_PATTERN.pattern}$", examples=["claude-opus-5-5"])


# ─── Responses ─────────────────────────────────────────────────────────────


class Agent(Reply):
    id: str
    name: str
    class_ref: str
    runtime: Runtime
    purpose: str
    wake_on: str
    writes_to: str
    status: AgentStatus = Field(description="the badge; a simulation must never look live")
    status_note: str
    has_autonomy_gate: bool
    autonomous: bool
    model: str | None = Field(description="the pinned model; null means the engine's default")
    autonomy_guard: bool = Field(description="the platform switches autonomy off when the evidence says demote")
    skill_count: int
    tool_count: int


class ThresholdSpec(Reply):
    type: ThresholdType
    min: float
    max: float
    step: float
    default: float
    description: str | None = None


class Skill(Reply):
    id: str
    agent_id: str
    title: str
    category: str
    description: str
    sample_prompt: str
    source: SkillSource
    enabled: bool
    disabled_reason: str | None = Field(description="why the skill cannot be switched on; null when it can")
    thresholds: dict[str, float]
    thresholds_schema: dict[str, ThresholdSpec]
    version: int = Field(description="send back as `version` in a PATCH to refuse a concurrent change")
    tool_names: list[str]
    updated_by: str | None
    updated_at: str | None = Field(json_schema_extra={"format": "date-time"})


class Tool(Reply):
    name: str
    description: str
    kind: ToolKind
    target: str
    input_schema: dict[str, Any]
    requires_confirmation: bool
    requires_confirmation_by_agent: dict[str, bool]
    owner_agents: list[str]
    implemented_at: str
    executor: Executor
    base_url_key: str | None
    http_path: str | None


class Surface(Reply):
    id: str
    name: str
    path: str | None
    description: str
    agent_ids: list[str]


class AgentDetail(Agent):
    skills: list[Skill]
    tools: list[Tool]
    surfaces: list[Surface]


ModelEvidence = Literal["pin", "decisions", "routing", "telemetry"]


class ModelChoice(Reply):
    model: str
    seen_in: list[ModelEvidence] = Field(description="where the platform has seen this agent use the model")


class AgentModels(Reply):
    """The models a picker can offer for one agent: those with evidence, and the patterns any other id must match."""

    agent_id: str
    pin: str | None = Field(description="the pinned model; null means the engine's default")
    models: list[ModelChoice] = Field(description="the pin first, then by how much evidence, then by name")
    allowed_patterns: list[str] = Field(description="shell-style patterns a pin must match (OUTRIDER_ALLOWED_MODELS)")


class AuditRow(Reply):
    id: int
    entity: str
    entity_id: str
    field: str
    old: Any = Field(description="the value before the change (any JSON value); null when there was none")
    new: Any = Field(description="the value after the change (any JSON value)")
    changed_by: str
    changed_by_email: str
    changed_at: str | None = Field(json_schema_extra={"format": "date-time"})


class RolloutGuard(Reply):
    max_drop: float = Field(description="the candidate may be at most this much worse than control")
    confidence: float = Field(description="the posterior probability at which the guard halts or advances")
    min_judged: int = Field(description="judged decisions each arm needs before the guard advances a step")


class ArmEvidence(Reply):
    """What the guard last counted for one arm; mean, low and high describe its Beta(1, 1) posterior (95 %)."""

    judged: float = Field(description="successes plus failures (episode credit may be fractional)")
    successes: float
    failures: float
    unknown: int = Field(description="judged unknown: counted apart, never as a success or a failure")
    pending: int = Field(description="not judged yet")
    mean: float
    low: float
    high: float


class RolloutArms(Reply):
    control: ArmEvidence
    candidate: ArmEvidence


class RolloutEvent(Reply):
    event: Literal["started", "advanced", "paused", "resumed", "halted", "aborted", "completed", "observed"]
    percent: int
    at: str | None = Field(json_schema_extra={"format": "date-time"})
    by: str = Field(description="the person's email, or rollout-guard")
    p_harm: float | None
    reason: str


class Rollout(Reply):
    id: str
    agent_id: str
    decision_type: str
    change: dict[str, Any] = Field(description="{model}, {autonomous} or {skill_id, thresholds?, enabled?}")
    baseline: dict[str, Any] = Field(description="what control keeps, in the shape of the change")
    steps: list[int]
    step: int = Field(description="index into steps of the share in force")
    percent: int = Field(description="the candidate arm's share of subjects; 0 once halted or aborted")
    state: RolloutState
    guard: RolloutGuard
    arms: RolloutArms
    p_harm: float | None = Field(description="P(candidate < control − max_drop) at the guard's last look")
    reason: str = Field(description="why the rollout is where it is: the guard's verdict or the person's words")
    created_by: str
    created_at: str | None = Field(json_schema_extra={"format": "date-time"})
    updated_at: str | None = Field(json_schema_extra={"format": "date-time"})
    history: list[RolloutEvent] = Field(
        description="state changes and the guard's observations, oldest first; read one rollout for them,"
        " a listing leaves them empty"
    )


class AgentPage(Page[Agent]):
    pass


class RolloutPage(Page[Rollout]):
    pass


class SkillPage(Page[Skill]):
    pass


class ToolPage(Page[Tool]):
    pass


class AuditPage(Page[AuditRow]):
    pass


@dataclass(frozen=True, slots=True)
class AuditFilters:
    """What the audit list and its export select by, read from one set of
    query parameters so the two can never drift apart; empty selects everything."""

    entity: str = ""
    entity_id: str = ""
    actor: str = ""
    changed_from: datetime | None = None
    changed_to: datetime | None = None


# ─── The snapshot engines obey (GET /internal/ai/registry) ─────────────────
# The document services/registry/snapshot.py builds, field for field: the
# one document every engine parses, so its shape is published, not implied.


class SnapshotAgent(Reply):
    runtime: Runtime
    status: AgentStatus
    has_autonomy_gate: bool
    autonomous: bool = Field(description="the agent may act without a human")
    model: str | None = Field(description="the pinned model; null means the engine's default")


class SnapshotSkill(Reply):
    agent_id: str
    source: SkillSource
    enabled: bool
    thresholds: dict[str, float] = Field(description="each threshold's current value, by key")
    tool_names: list[str]
    version: int


class SnapshotTool(Reply):
    kind: ToolKind
    executor: Executor
    owner_agents: list[str]
    requires_confirmation: bool = Field(description="a human confirms each call for at least one agent using it")
    requires_confirmation_by_agent: dict[str, bool] = Field(description="the same, for each agent whose skills use it")


class SnapshotRollout(Reply):
    """A running or paused rollout (DESIGN §9); halted, aborted and completed ones are absent."""

    id: str
    agent_id: str
    decision_type: str
    percent: float = Field(ge=0, le=100, description="the candidate arm's share of subjects")
    change: dict[str, Any] = Field(
        description="the candidate arm's change: {model}, {autonomous} or {skill_id, thresholds?, enabled?}"
    )


class RegistrySnapshot(Reply):
    format: int = Field(description="bumped when the shape changes in a way older engines cannot read")
    agents: dict[str, SnapshotAgent] = Field(description="by agent id")
    skills: dict[str, SnapshotSkill] = Field(description="by skill id")
    tools: dict[str, SnapshotTool] = Field(description="by tool name")
    rollouts: list[SnapshotRollout] = Field(
        default_factory=list, description="rollouts in progress; absent from documents made before rollouts existed"
    )


# ─── Requests ──────────────────────────────────────────────────────────────


class AgentPatch(Contract):
    """Only the fields sent are changed."""

    autonomous: StrictBool = Field(
        None, description="true lets the agent act without a human; needs `confirm` equal to the agent id"
    )
    model: ModelId | None = Field(None, description="pin a model; null returns the agent to the engine default")
    confirm: text(max_length=128) | None = Field(None, description="the agent id, typed to confirm autonomy ON")
    autonomy_guard: StrictBool = Field(
        None, description="true lets the platform switch autonomy off by itself when the evidence says demote"
    )


class SkillPatch(Contract):
    """Only the fields sent are changed; thresholds are checked all together against the skill's schema."""

    enabled: StrictBool = None
    thresholds: keyed(THRESHOLD_KEY, Number) = Field(
        None, description="keys of the skill's thresholds_schema, each within its min, max and step"
    )
    version: json_int(ge=1, le=INT32_MAX) = Field(
        None, description="the version read; a different current version answers 409"
    )


class RolloutGuardIn(Contract):
    """Each omitted setting takes its default."""

    # Both lie strictly between two bounds no integer lies between, so a
    # strict float refuses nothing a rule would take, and never reads "0.1".
    max_drop: StrictFloat = Field(None, gt=MAX_DROP_BOUNDS[0], lt=MAX_DROP_BOUNDS[1], examples=[0.05])
    confidence: StrictFloat = Field(None, gt=CONFIDENCE_BOUNDS[0], lt=CONFIDENCE_BOUNDS[1], examples=[0.95])
    min_judged: json_int(ge=MIN_JUDGED_BOUNDS[0], le=MIN_JUDGED_BOUNDS[1]) = Field(None, examples=[50])


class RolloutDraft(Contract):
    """A change rolled out to a share of subjects; the change is checked as the direct PATCH checks it."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "agent_id": "EXCEPTION_AGENT",
                    "decision_type": "stall_response",
                    "change": {"model": "claude-opus-5-5"},
                }
            ]
        },
    )

    agent_id: text(min_length=1, max_length=128)
    decision_type: text(
        min_length=DECISION_TYPE_LENGTH[0],
        max_length=DECISION_TYPE_LENGTH[1],
        pattern=f"^{DECISION_TYPE_PATTERN.pattern}$",
    )
    change: json_object(max_bytes=16 * 1024) = Field(
        description="exactly one of {model}, {autonomous, confirm}, {skill_id, thresholds?, enabled?}"
    )
    steps: list[json_int(ge=1, le=100)] = Field(
        default_factory=list,
        max_length=MAX_STEPS,
        description=f"shares in percent, strictly increasing, ending at 100; none means {list(DEFAULT_STEPS)}",
    )
    guard: RolloutGuardIn = None


class RolloutAction(Contract):
    reason: text(max_length=MAX_REASON_CHARS) = Field(None, description="kept on the rollout and in its history")


class ThresholdSpecIn(Contract):
    type: ThresholdType
    min: Number
    max: Number
    step: Number = Field(description="allowed values are min + n × step")
    default: Number
    description: text(max_length=MAX_DESCRIPTION_LENGTH) = None


class SkillDraft(Contract):
    """A new skill on a console agent, built only from tools that exist."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "id": "late_rider_digest",
                    "agent_id": "CONSOLE_OPS_AGENT",
                    "title": "Late rider digest",
                    "tool_names": ["scan_bookings", "notify_riders"],
                    "thresholds_schema": {
                        "lateMinutes": {"type": "integer", "min": 5, "max": 60, "step": 5, "default": 15}
                    },
                    "thresholds": {"lateMinutes": 20},
                }
            ]
        },
    )

    id: SkillId
    agent_id: text(min_length=1, max_length=128)
    title: text(min_length=1, max_length=MAX_TITLE_LENGTH, pattern=r"^[^\x00]*\S[^\x00]*$")
    category: text(max_length=MAX_CATEGORY_LENGTH) = None
    description: text(max_length=MAX_DESCRIPTION_LENGTH) = None
    sample_prompt: text(max_length=MAX_PROMPT_LENGTH) = None
    tool_names: list[text(min_length=1, max_length=128)] = Field(min_length=1)
    thresholds_schema: keyed(THRESHOLD_KEY, ThresholdSpecIn) = None
    thresholds: keyed(THRESHOLD_KEY, Number) = None
    enabled: StrictBool = None
