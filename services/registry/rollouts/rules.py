"""Rollout rules: what a guarded rollout may change, its steps, its guard,
and which state follows which (DESIGN §9).

Pure, like services.registry.rules: records and requests in, a rollout or a
transition out, or a domain error naming the field. A change is validated by
the very planning functions the direct PATCH runs, so a rollout can never
carry what a PATCH would refuse, and a later rule for the PATCH applies here
without anyone remembering to copy it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from enum import StrEnum
from typing import Any, Final

from services.common.errors import PermissionDenied
from services.registry.rules import (
    Agent,
    FieldChange,
    InvalidRegistryChange,
    RegistryConflict,
    RegistryNotFound,
    Skill,
    plan_agent_patch,
    plan_skill_patch,
    validate_thresholds,
)

# ─── Vocabulary ────────────────────────────────────────────────────────────


class RolloutState(StrEnum):
    RUNNING = "running"
    PAUSED = "paused"
    HALTED = "halted"
    ABORTED = "aborted"
    COMPLETED = "completed"


# The states in which a rollout still holds its (agent, decision type): the
# snapshot carries it and a second one is refused.
ACTIVE_STATES: Final = frozenset({RolloutState.RUNNING, RolloutState.PAUSED})


class Verdict(StrEnum):
    """What the guard may say about a rollout at the step it judged."""

    OBSERVE = "observe"
    ADVANCE = "advance"
    HALT = "halt"
    COMPLETE = "complete"


class ChangeKind(StrEnum):
    MODEL = "model"
    AUTONOMY = "autonomy"
    SKILL = "skill"


# The audit actor of every verdict: the guard is the platform, not a person.
GUARD_ACTOR: Final = "rollout-guard"

DEFAULT_STEPS: Final = (5, 25, 50, 100)
MAX_STEPS: Final = 20
# The decisions context's shape of a decision type: a rollout named otherwise
# would gate no decision at all.
DECISION_TYPE_PATTERN: Final = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)*")
DECISION_TYPE_LENGTH: Final = (2, 64)
MAX_REASON_CHARS: Final = 1000


# ─── Errors ────────────────────────────────────────────────────────────────


class InvalidRollout(InvalidRegistryChange):
    default_code = "INVALID_ROLLOUT"


class RolloutConflict(RegistryConflict):
    default_code = "ROLLOUT_STATE"


def rollout_not_found(rollout_id: str) -> RegistryNotFound:
    return RegistryNotFound(
        f"no rollout {rollout_id!r}", code="ROLLOUT_NOT_FOUND", details={"id": f"no rollout {rollout_id!r}"}
    )


def rollout_exists(agent_id: str, decision_type: str, existing_id: str | None) -> RegistryConflict:
    """A second running or paused rollout of one agent's decision type."""
    return RegistryConflict(
        f"{agent_id} already has a running or paused rollout for {decision_type}",
        code="ROLLOUT_EXISTS",
        details={"agent_id": agent_id, "decision_type": decision_type, "rollout_id": existing_id},
    )


# ─── Guard settings ────────────────────────────────────────────────────────


@dataclass(frozen=True, slots=True)
class GuardSettings:
    max_drop: float = 0.05
    confidence: float = 0.95
    min_judged: int = 50


# Open bounds for the two fractions: a max_drop of 0 halts on noise and one
# of 1 never halts; a confidence of 0.5 is a coin toss and 1 is never reached.
MAX_DROP_BOUNDS: Final = (0.0, 1.0)
CONFIDENCE_BOUNDS: Final = (0.5, 1.0)
# At least one judged decision per arm; past a million an operator waits for
# evidence no rollout collects.
MIN_JUDGED_BOUNDS: Final = (1, 1_000_000)
GUARD_FIELDS: Final = frozenset({"max_drop", "confidence", "min_judged"})


def guard_settings(raw: object) -> GuardSettings:
    """The guard's settings from `{max_drop?, confidence?, min_judged?}`; None for every default."""
    if raw is None:
        return GuardSettings()
    if not isinstance(raw, Mapping):
        raise InvalidRollout("guard must be an object", fields={"guard": "must be an object"})
    problems = {f"guard.{key}": "unknown field" for key in raw if key not in GUARD_FIELDS}
    defaults = GuardSettings()
    max_drop = _fraction(raw, "max_drop", defaults.max_drop, MAX_DROP_BOUNDS, problems)
    confidence = _fraction(raw, "confidence", defaults.confidence, CONFIDENCE_BOUNDS, problems)
    min_judged = defaults.min_judged
    if "min_judged" in raw:
        value = raw["min_judged"]
        low, high = MIN_JUDGED_BOUNDS
        whole = isinstance(value, int) or (isinstance(value, float) and math.isfinite(value) and value.is_integer())
        if isinstance(value, bool) or not whole or not low <= value <= high:
            problems["guard.min_judged"] = f"must be a whole number from {low} to {high:,}"
        else:
            min_judged = int(value)
    if problems:
        raise InvalidRollout(f"guard refused: {', '.join(problems)}", fields=problems)
    return GuardSettings(max_drop=max_drop, confidence=confidence, min_judged=min_judged)


def _fraction(
    raw: Mapping[str, Any], name: str, default: float, bounds: tuple[float, float], problems: dict[str, str]
) -> float:
    if name not in raw:
        return default
    value = raw[name]
    low, high = bounds
    if isinstance(value, bool) or not isinstance(value, int | float) or not low < value < high:
        problems[f"guard.{name}"] = f"must be a number greater than {low} and less than {high}"
        return default
    return float(value)


# ─── Steps ─────────────────────────────────────────────────────────────────


def rollout_steps(raw: Sequence[object]) -> tuple[int, ...]:
    """The shares a rollout passes through: strictly increasing, each 1–100, ending at 100.

    An empty list means the safe default. Ending anywhere but 100 would leave
    a rollout that can never complete; a repeated share is a step that
    changes nothing while asking the guard for a full sample again.
    """
    if not raw:
        return DEFAULT_STEPS
    if len(raw) > MAX_STEPS:
        raise InvalidRollout(f"at most {MAX_STEPS} steps", fields={"steps": f"at most {MAX_STEPS} steps"})
    steps: list[int] = []
    for index, value in enumerate(raw):
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 100:
            raise InvalidRollout(
                "each step is a whole percentage from 1 to 100",
                fields={f"steps[{index}]": "must be a whole percentage from 1 to 100"},
            )
        if steps and value <= steps[-1]:
            raise InvalidRollout(
                "steps must be strictly increasing",
                fields={f"steps[{index}]": f"must be greater than the step before it ({steps[-1]})"},
            )
        steps.append(value)
    if steps[-1] != 100:
        raise InvalidRollout(
            "the last step must be 100", fields={"steps": "must end at 100, so the rollout can complete"}
        )
    return tuple(steps)


# ─── The change ────────────────────────────────────────────────────────────


@dataclass(frozen=True, slots=True)
class RolloutChange:
    """One change, already validated against the agent as the direct PATCH validates it.

    `candidate` is what subjects in the candidate arm get, in the shape of
    the request (for a skill, only the thresholds it sets); `baseline` is
    what control keeps, in the same shape.
    """

    kind: ChangeKind
    candidate: Mapping[str, Any]
    baseline: Mapping[str, Any]


_CHANGE_SHAPES: Final = (
    ("{model}", frozenset({"model"})),
    ("{autonomous, confirm}", frozenset({"autonomous", "confirm"})),
    ("{skill_id, thresholds?, enabled?}", frozenset({"skill_id", "thresholds", "enabled"})),
)


def change_kind(change: Mapping[str, Any]) -> ChangeKind:
    """Which of the three shapes a change has; anything else is refused naming the shapes."""
    keys = frozenset(change)
    if "skill_id" in keys:
        kind = ChangeKind.SKILL
        allowed = _CHANGE_SHAPES[2][1]
        if not keys & {"thresholds", "enabled"}:
            raise InvalidRollout(
                "a skill change needs thresholds or enabled",
                fields={"change": "a skill change sets thresholds, enabled, or both"},
            )
    elif "model" in keys:
        kind, allowed = ChangeKind.MODEL, _CHANGE_SHAPES[0][1]
    elif "autonomous" in keys:
        kind, allowed = ChangeKind.AUTONOMY, _CHANGE_SHAPES[1][1]
    else:
        shapes = ", ".join(shape for shape, _ in _CHANGE_SHAPES)
        raise InvalidRollout("the change has no known shape", fields={"change": f"must be one of {shapes}"})
    extra = {f"change.{key}": f"not part of a {kind.value} change" for key in sorted(keys - allowed)}
    if extra:
        raise InvalidRollout(f"one change at a time: {', '.join(extra)}", fields=extra)
    return kind


def plan_change(
    change: object,
    *,
    agent: Agent,
    skill: Skill | None,
    allowed_models: str | None,
) -> RolloutChange:
    """Check a requested change with the PATCH's own rules and say what each arm gets.

    `skill` is the skill a skill change names (None when it names none that
    exists). A change that changes nothing is refused: a rollout of it would
    compare the baseline with itself.
    """
    if not isinstance(change, Mapping):
        raise InvalidRollout("change must be an object", fields={"change": "must be an object"})
    kind = change_kind(change)
    try:
        if kind is ChangeKind.SKILL:
            planned = _plan_skill_change(change, agent=agent, skill=skill)
        else:
            planned = _plan_agent_change(kind, change, agent=agent, allowed_models=allowed_models)
    except InvalidRegistryChange as error:
        if isinstance(error, InvalidRollout):
            raise
        # The PATCH's reasons, named by their path in the rollout's request.
        raise InvalidRollout(error.message, code=error.code, fields=_under_change(error.fields)) from None
    return planned


def _plan_agent_change(
    kind: ChangeKind, change: Mapping[str, Any], *, agent: Agent, allowed_models: str | None
) -> RolloutChange:
    field_name = "model" if kind is ChangeKind.MODEL else "autonomous"
    patch = {field_name: change[field_name]}
    confirm = change.get("confirm")
    if confirm is not None and not isinstance(confirm, str):
        raise InvalidRollout("confirm must be text", fields={"change.confirm": "must be the agent id, typed"})
    planned = plan_agent_patch(agent, patch, confirm=confirm, allowed_models=allowed_models)
    if not planned:
        raise _no_change(field_name)
    (only,) = planned
    return RolloutChange(kind=kind, candidate={field_name: only.new}, baseline={field_name: only.old})


def _plan_skill_change(change: Mapping[str, Any], *, agent: Agent, skill: Skill | None) -> RolloutChange:
    skill_id = change["skill_id"]
    if not isinstance(skill_id, str) or skill is None or skill.id != skill_id:
        raise InvalidRollout("no such skill", fields={"change.skill_id": f"no skill {skill_id!r}"})
    if skill.agent_id != agent.id:
        raise InvalidRollout(
            "the skill belongs to another agent",
            fields={"change.skill_id": f"{skill_id} is a skill of {skill.agent_id}, not of {agent.id}"},
        )
    patch = {key: change[key] for key in ("thresholds", "enabled") if key in change}
    planned = {planned.field: planned for planned in plan_skill_patch(skill, patch)}
    if not planned:
        raise _no_change("skill_id")
    candidate: dict[str, Any] = {"skill_id": skill_id}
    baseline: dict[str, Any] = {"skill_id": skill_id}
    if "enabled" in planned:
        candidate["enabled"], baseline["enabled"] = planned["enabled"].new, planned["enabled"].old
    if "thresholds" in planned:
        # Only the keys the operator set: a direct edit of another key while
        # the rollout runs stays in force for both arms, and completing the
        # rollout writes what it tested and nothing else.
        now = validate_thresholds(skill.thresholds_schema, skill.thresholds, {})
        sent = patch["thresholds"]
        candidate["thresholds"] = {key: planned["thresholds"].new[key] for key in sent}
        baseline["thresholds"] = {key: now[key] for key in sent}
    return RolloutChange(kind=ChangeKind.SKILL, candidate=candidate, baseline=baseline)


def _no_change(name: str) -> InvalidRollout:
    return InvalidRollout(
        "the change is what the agent already has",
        code="ROLLOUT_NO_CHANGE",
        fields={f"change.{name}": "already in force; a rollout of it would compare the baseline with itself"},
    )


def _under_change(fields: Mapping[str, Any]) -> dict[str, str]:
    return {f"change.{key}": str(reason) for key, reason in fields.items()}


def completion_patch(change: Mapping[str, Any]) -> tuple[ChangeKind, dict[str, Any], str | None]:
    """What completing a rollout of `change` writes, as the direct PATCH, and the skill it writes to.

    Autonomy is written with the typed confirmation given when the rollout
    was created: the operator confirmed that agent then, and the guard that
    completes the rollout types nothing.
    """
    kind = change_kind(change)
    if kind is ChangeKind.SKILL:
        return kind, {key: change[key] for key in ("thresholds", "enabled") if key in change}, str(change["skill_id"])
    name = "model" if kind is ChangeKind.MODEL else "autonomous"
    return kind, {name: change[name]}, None


# ─── Rollouts and their transitions ────────────────────────────────────────


@dataclass(frozen=True, slots=True)
class ArmEvidence:
    """What the guard last counted for one arm (successes and failures may be fractional credit)."""

    judged: float = 0.0
    successes: float = 0.0
    failures: float = 0.0
    unknown: int = 0
    pending: int = 0
    mean: float = 0.0
    low: float = 0.0
    high: float = 0.0


@dataclass(frozen=True, slots=True)
class Rollout:
    id: str
    agent_id: str
    decision_type: str
    change: Mapping[str, Any]
    baseline: Mapping[str, Any]
    steps: tuple[int, ...]
    step: int
    percent: int
    state: RolloutState
    guard: GuardSettings
    control: ArmEvidence = field(default_factory=ArmEvidence)
    candidate: ArmEvidence = field(default_factory=ArmEvidence)
    p_harm: float | None = None
    reason: str = ""

    @property
    def at_last_step(self) -> bool:
        return self.step == len(self.steps) - 1


@dataclass(frozen=True, slots=True)
class Transition:
    """What one action does to a rollout: the rollout after it, the history
    point it leaves (None for none), and the audit rows of its state change."""

    rollout: Rollout
    event: str | None
    audit: tuple[FieldChange, ...]


def check_decision_type(value: object) -> str:
    low, high = DECISION_TYPE_LENGTH
    if not isinstance(value, str) or not value:
        raise InvalidRollout("decision_type is required", fields={"decision_type": "is required"})
    if not low <= len(value) <= high or not DECISION_TYPE_PATTERN.fullmatch(value):
        raise InvalidRollout(
            "decision_type is not a decision type",
            fields={"decision_type": f"must be lowercase snake_case, {low} to {high} characters"},
        )
    return value


def check_reason(value: object) -> str:
    if not isinstance(value, str) or len(value) > MAX_REASON_CHARS or "\x00" in value:
        raise InvalidRollout(
            "reason is too long", fields={"reason": f"text of at most {MAX_REASON_CHARS} characters, without NUL"}
        )
    return value.strip()


def new_rollout(
    *,
    rollout_id: str,
    agent_id: str,
    decision_type: str,
    planned: RolloutChange,
    steps: Sequence[int],
    guard: GuardSettings,
) -> Transition:
    """A rollout at its first step, running, and the audit row that records what it was started with."""
    rollout = Rollout(
        id=rollout_id,
        agent_id=agent_id,
        decision_type=decision_type,
        change=dict(planned.candidate),
        baseline=dict(planned.baseline),
        steps=tuple(steps),
        step=0,
        percent=steps[0],
        state=RolloutState.RUNNING,
        guard=guard,
    )
    created = FieldChange(
        "created",
        None,
        {
            "agent_id": agent_id,
            "decision_type": decision_type,
            "change": dict(planned.candidate),
            "baseline": dict(planned.baseline),
            "steps": list(steps),
            "guard": {"max_drop": guard.max_drop, "confidence": guard.confidence, "min_judged": guard.min_judged},
        },
    )
    return Transition(rollout=rollout, event="started", audit=(created,))


def pause(rollout: Rollout, reason: str = "") -> Transition:
    """A paused rollout keeps its share (its subjects keep what they have) but the guard does not advance it."""
    _require(rollout, "pause", RolloutState.RUNNING)
    return _moved(rollout, "paused", state=RolloutState.PAUSED, reason=reason)


def resume(rollout: Rollout, reason: str = "") -> Transition:
    _require(rollout, "resume", RolloutState.PAUSED)
    return _moved(rollout, "resumed", state=RolloutState.RUNNING, reason=reason)


def abort(rollout: Rollout, reason: str = "") -> Transition:
    """Every subject back on the baseline at once; an aborted rollout never runs again."""
    _require(rollout, "abort", RolloutState.RUNNING, RolloutState.PAUSED)
    return _moved(rollout, "aborted", state=RolloutState.ABORTED, percent=0, reason=reason)


@dataclass(frozen=True, slots=True)
class Judgement:
    """One verdict of the guard, on the step it judged, with the evidence it judged on."""

    verdict: Verdict
    step: int
    control: ArmEvidence
    candidate: ArmEvidence
    p_harm: float
    reason: str


def check_guard_caller(*, person: bool, engine: str | None) -> None:
    """A verdict comes from the platform itself (the service key acting for
    nobody), as the sweeper's do: a person or an engine signing as the guard
    could advance a rollout past evidence it never had."""
    if person or engine is not None:
        raise PermissionDenied(
            "rollout verdicts are the rollout guard's alone; a person pauses, resumes or aborts instead",
            code="GUARD_VERDICTS_ONLY",
        )


def parse_verdict(value: str) -> Verdict:
    try:
        return Verdict(value)
    except ValueError:
        raise InvalidRollout("unknown verdict", fields={"verdict": f"must be one of {', '.join(Verdict)}"}) from None


def check_evidence(name: str, evidence: ArmEvidence) -> ArmEvidence:
    """Counts are finite and not negative, the posterior's figures are fractions."""
    problems: dict[str, str] = {}
    for key in ("judged", "successes", "failures", "unknown", "pending"):
        value = getattr(evidence, key)
        if not math.isfinite(value) or value < 0:
            problems[f"{name}.{key}"] = "must be a finite count, not negative"
    for key in ("mean", "low", "high"):
        value = getattr(evidence, key)
        if not math.isfinite(value) or not 0 <= value <= 1:
            problems[f"{name}.{key}"] = "must be a fraction from 0 to 1"
    if problems:
        raise InvalidRollout(f"{name} refused: {', '.join(problems)}", fields=problems)
    return evidence


def judge(rollout: Rollout, judgement: Judgement) -> Transition:
    """Apply one verdict of the guard.

    A verdict on a step the rollout has left (a person paused and resumed it,
    another replica advanced it) is refused as a conflict, so one verdict is
    never applied twice. The guard may halt a paused rollout: its share still
    sees the candidate, and harm found there is stopped at once. It never
    advances or completes one: a pause is a person saying "not further".
    """
    if not math.isfinite(judgement.p_harm) or not 0 <= judgement.p_harm <= 1:
        raise InvalidRollout("p_harm must be a probability", fields={"p_harm": "must be a fraction from 0 to 1"})
    check_evidence("control", judgement.control)
    check_evidence("candidate", judgement.candidate)
    if judgement.step != rollout.step:
        raise RolloutConflict(
            f"the verdict judged step {judgement.step}; the rollout is at step {rollout.step}",
            code="ROLLOUT_MOVED",
            details={"step": f"judged {judgement.step}, current {rollout.step}; count again and judge that step"},
        )
    reason = check_reason(judgement.reason)
    observed = replace(rollout, control=judgement.control, candidate=judgement.candidate, p_harm=judgement.p_harm)
    verdict = judgement.verdict
    if verdict is Verdict.OBSERVE:
        _require(rollout, "observe", RolloutState.RUNNING, RolloutState.PAUSED)
        # The observation's reason replaces the last move's, so the reason
        # read beside the arms is about those arms, not the ones of the move.
        observed = replace(observed, reason=reason or rollout.reason)
        changed = (rollout.control, rollout.candidate, rollout.p_harm, rollout.reason) != (
            observed.control,
            observed.candidate,
            observed.p_harm,
            observed.reason,
        )
        # No audit row: the audit is the record of what the rollout did
        # (state, share, step), and the guard observes after every sweep; a
        # row per pass would bury each move under thousands of readings.
        # The history point keeps the readings.
        return Transition(rollout=observed, event="observed" if changed else None, audit=())
    if verdict is Verdict.HALT:
        _require(rollout, "halt", RolloutState.RUNNING, RolloutState.PAUSED)
        return _moved(observed, "halted", state=RolloutState.HALTED, percent=0, reason=reason, audit_from=rollout)
    if verdict is Verdict.ADVANCE:
        _require(rollout, "advance", RolloutState.RUNNING)
        if rollout.at_last_step:
            raise RolloutConflict(
                "the rollout is at its last step; it completes rather than advances",
                details={"verdict": "at the last step the verdict is complete"},
            )
        step = rollout.step + 1
        moved = replace(observed, step=step)
        return _moved(moved, "advanced", percent=rollout.steps[step], reason=reason, audit_from=rollout)
    _require(rollout, "complete", RolloutState.RUNNING)
    if not rollout.at_last_step:
        raise RolloutConflict(
            f"the rollout is at {rollout.percent} %, not at its last step",
            details={"verdict": "only a rollout at its last step completes; advance it first"},
        )
    return _moved(observed, "completed", state=RolloutState.COMPLETED, reason=reason, audit_from=rollout)


def _require(rollout: Rollout, action: str, *states: RolloutState) -> None:
    if rollout.state not in states:
        allowed = " or ".join(state.value for state in states)
        raise RolloutConflict(
            f"cannot {action} a rollout that is {rollout.state.value}",
            details={"state": f"{rollout.state.value}; {action} needs a rollout that is {allowed}"},
        )


def _moved(
    rollout: Rollout,
    event: str,
    *,
    state: RolloutState | None = None,
    percent: int | None = None,
    reason: str,
    audit_from: Rollout | None = None,
) -> Transition:
    before = audit_from or rollout
    after = replace(
        rollout,
        state=state if state is not None else rollout.state,
        percent=percent if percent is not None else rollout.percent,
        reason=reason,
    )
    audit: list[FieldChange] = []
    if after.state is not before.state:
        audit.append(FieldChange("state", before.state.value, after.state.value))
    if after.percent != before.percent:
        audit.append(FieldChange("percent", before.percent, after.percent))
    if after.step != before.step:
        audit.append(FieldChange("step", before.step, after.step))
    if reason and reason != before.reason:
        audit.append(FieldChange("reason", before.reason or None, reason))
    return Transition(rollout=after, event=event, audit=tuple(audit))


@dataclass(frozen=True, slots=True)
class RolloutEvent:
    """One point of a rollout's history as stored."""

    event: str
    percent: int
    at: datetime
    by: str
    p_harm: float | None
    reason: str
