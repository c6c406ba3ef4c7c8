"""Registry rules: what an operator may change through the API, and how.

Agents and tools are code-defined: the seed creates them and the API only tunes
the few operator-controlled fields. A tool that exists only because someone
typed it into a form is a lie on screen, since no code stands behind it.

Every function here is pure. It takes records and a requested change, and it
returns the planned field changes or raises a domain error naming the field.
The store applies a plan in one transaction together with its audit rows.
"""

from __future__ import annotations

import math
import re
import uuid
from collections.abc import Collection, Mapping
from dataclasses import dataclass, fields
from datetime import datetime
from enum import StrEnum
from fnmatch import fnmatchcase
from typing import Any, Final

from services.common.errors import Conflict, DomainError, InvalidArgument, NotFound, PermissionDenied

Number = int | float


# ─── Errors ────────────────────────────────────────────────────────────────


class RegistryRuleError(DomainError):
    """Any refusal by a registry rule; the concrete class fixes the status."""


class InvalidRegistryChange(RegistryRuleError, InvalidArgument):
    """The requested change is malformed or not allowed (422)."""

    default_code = "INVALID_REGISTRY_CHANGE"


class RegistryConflict(RegistryRuleError, Conflict):
    """The change collides with the current state: a stale version, a taken id (409)."""

    default_code = "REGISTRY_CONFLICT"


class RegistryNotFound(RegistryRuleError, NotFound):
    """The agent, skill or tool named does not exist (404)."""

    default_code = "REGISTRY_NOT_FOUND"


def agent_not_found(agent_id: str, field: str) -> RegistryNotFound:
    """No agent by that id; `field` is the request field that named it."""
    return RegistryNotFound(f"no agent {agent_id!r}", code="AGENT_NOT_FOUND", details={field: f"no agent {agent_id!r}"})


def skill_not_found(skill_id: str) -> RegistryNotFound:
    return RegistryNotFound(f"no skill {skill_id!r}", code="SKILL_NOT_FOUND", details={"id": f"no skill {skill_id!r}"})


def skill_taken(skill_id: str) -> RegistryConflict:
    """A new skill's id is already some skill's."""
    return RegistryConflict(
        f"a skill with id {skill_id!r} already exists",
        code="SKILL_EXISTS",
        details={"id": "already taken; choose another id"},
    )


# ─── Vocabulary ────────────────────────────────────────────────────────────


class Runtime(StrEnum):
    ENGINE = "engine"
    CONSOLE = "console"


class AgentStatus(StrEnum):
    LIVE = "live"
    PARTIAL = "partial"
    SIMULATION = "simulation"
    BROKEN = "broken"
    UNMERGED = "unmerged"
    RETIRED = "retired"


class ToolKind(StrEnum):
    READ = "read"
    WRITE = "write"
    NOTIFY = "notify"
    EVENT = "event"


class Executor(StrEnum):
    """Who can actually run a tool, which decides what a playground may do with it."""

    OUTRIDER = "outrider"  # served by Outrider itself
    HTTP = "http"  # a GET on an external backend named by the tool's base_url_key
    ENGINE = "engine"  # runs only inside the agent engine
    LLM = "llm"  # a model call made inside the engine
    CONSOLE = "console"  # runs in the operator console after the operator confirms


# A playground may run a tool only where it can reach the implementation and
# the tool only reads. Anything else it answers with "unavailable" or a proposal.
PLAYGROUND_EXECUTORS: Final = frozenset({Executor.OUTRIDER, Executor.HTTP})


class SkillSource(StrEnum):
    ENGINE = "engine"
    CONSOLE = "console"
    CUSTOM = "custom"


class ThresholdType(StrEnum):
    INTEGER = "integer"
    NUMBER = "number"


# ─── Records ───────────────────────────────────────────────────────────────


@dataclass(frozen=True, slots=True)
class Agent:
    id: str
    name: str
    class_ref: str
    runtime: Runtime
    purpose: str
    wake_on: str
    writes_to: str
    status: AgentStatus
    # The badge alone cannot say why: "broken" needs the crash, "partial" the
    # part that works. An unexplained badge gets ignored.
    status_note: str
    has_autonomy_gate: bool
    autonomous: bool
    model: str | None
    # Opt-in: the platform may switch autonomy off by itself on evidence that says demote.
    autonomy_guard: bool = False


@dataclass(frozen=True, slots=True)
class Tool:
    name: str
    description: str
    kind: ToolKind
    target: str
    input_schema: Mapping[str, Any]
    implemented_at: str
    owner_agents: tuple[str, ...]
    executor: Executor
    # Only for Executor.HTTP: the configured backend to call and the GET path,
    # with {placeholders} filled from the tool's input.
    base_url_key: str | None = None
    http_path: str | None = None


@dataclass(frozen=True, slots=True)
class Skill:
    id: str
    agent_id: str
    title: str
    category: str
    description: str
    sample_prompt: str
    source: SkillSource
    enabled: bool
    disabled_reason: str | None
    thresholds: Mapping[str, Number]
    thresholds_schema: Mapping[str, Mapping[str, Any]]
    version: int
    tool_names: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class FieldChange:
    """One planned change; the store writes it and one audit row for it."""

    field: str
    old: Any
    new: Any


# ─── Creation ──────────────────────────────────────────────────────────────

API_CREATABLE: Final = frozenset({"skill"})


def check_api_creation(entity: str) -> None:
    """Refuse to create anything but a skill through the API."""
    if entity in API_CREATABLE:
        return
    if entity in ("agent", "tool"):
        raise InvalidRegistryChange(
            f"{entity}s are code-defined and come only from the seed",
            code="CODE_DEFINED",
            fields={"entity": f"a {entity} needs code behind it; add it to the seed instead"},
        )
    raise InvalidRegistryChange(
        f"unknown registry entity {entity!r}",
        code="UNKNOWN_ENTITY",
        fields={"entity": "must be one of agent, tool, skill"},
    )


SKILL_ID_PATTERN: Final = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)*")
MAX_SKILL_ID_LENGTH: Final = 64
MAX_TITLE_LENGTH: Final = 120
MAX_CATEGORY_LENGTH: Final = 64
# A sample prompt is meant to be run in the playground, which refuses prompts
# over 2000 characters; a longer sample could never be tried as written.
MAX_PROMPT_LENGTH: Final = 2000
MAX_DESCRIPTION_LENGTH: Final = 2000

NEW_SKILL_FIELDS: Final = frozenset(
    {
        "id",
        "agent_id",
        "title",
        "category",
        "description",
        "sample_prompt",
        "tool_names",
        "thresholds_schema",
        "thresholds",
        "enabled",
    }
)
_NEW_SKILL_REFUSED: Final = {
    "source": "always custom for a skill made through the API",
    "version": "a new skill starts at version 1",
    "disabled_reason": "set only by the seed, for skills that cannot work yet",
}


def skill_id_problem(value: object) -> str | None:
    """Why a skill id is unacceptable, or None when it is fine."""
    if not isinstance(value, str) or not value:
        return "required: a lowercase snake_case id"
    if len(value) > MAX_SKILL_ID_LENGTH:
        return f"at most {MAX_SKILL_ID_LENGTH} characters, got {len(value)}"
    if not SKILL_ID_PATTERN.fullmatch(value):
        return "must be lowercase snake_case: letters, digits and single underscores, starting with a letter"
    return None


def plan_new_skill(
    draft: Mapping[str, Any],
    *,
    agents: Mapping[str, Agent],
    known_tools: Collection[str],
    existing_skill_ids: Collection[str],
) -> Skill:
    """Check a skill drafted through the API and build it; nothing partial is accepted."""
    if not isinstance(draft, Mapping):
        raise InvalidRegistryChange(
            "a new skill must be an object", code="INVALID_SKILL", fields={"skill": "must be an object"}
        )
    problems: dict[str, str] = {}
    for key in draft:
        if key not in NEW_SKILL_FIELDS:
            problems[str(key)] = _NEW_SKILL_REFUSED.get(str(key), "unknown field")

    skill_id = draft.get("id")
    if (reason := skill_id_problem(skill_id)) is not None:
        problems["id"] = reason

    agent_id = draft.get("agent_id")
    agent = agents.get(agent_id) if isinstance(agent_id, str) else None
    if agent is None:
        problems["agent_id"] = "required" if agent_id is None else f"no agent {agent_id!r}"
    elif agent.runtime is not Runtime.CONSOLE:
        # An engine agent only runs the skills its code implements, so a skill
        # added from a form would show as switched on while nothing reads it.
        problems["agent_id"] = f"{agent.id} runs in the engine; new skills go on console agents only"

    title = _text(draft, "title", MAX_TITLE_LENGTH, problems, required=True)
    category = _text(draft, "category", MAX_CATEGORY_LENGTH, problems) or "custom"
    description = _text(draft, "description", MAX_DESCRIPTION_LENGTH, problems)
    sample_prompt = _text(draft, "sample_prompt", MAX_PROMPT_LENGTH, problems)
    tool_names = _draft_tool_names(draft.get("tool_names"), known_tools, problems)

    enabled = draft.get("enabled", True)
    if not isinstance(enabled, bool):
        problems["enabled"] = "must be true or false"

    schema: dict[str, dict[str, Any]] = {}
    thresholds: dict[str, Number] = {}
    try:
        schema = validate_thresholds_schema(draft.get("thresholds_schema", {}))
    except InvalidRegistryChange as error:
        problems.update(_prefixed("thresholds_schema", error.fields))
    else:
        try:
            thresholds = validate_thresholds(schema, {}, draft.get("thresholds", {}))
        except InvalidRegistryChange as error:
            problems.update(error.fields)

    # The last two conditions only restate what problems already holds; they
    # let the type checker see that id and agent are set below.
    if problems or agent is None or not isinstance(skill_id, str):
        raise InvalidRegistryChange(
            f"skill refused, nothing was created: {', '.join(problems)}", code="INVALID_SKILL", fields=problems
        )
    if skill_id in existing_skill_ids:
        raise skill_taken(skill_id)
    return Skill(
        id=skill_id,
        agent_id=agent.id,
        title=title,
        category=category,
        description=description,
        sample_prompt=sample_prompt,
        source=SkillSource.CUSTOM,
        enabled=enabled,
        disabled_reason=None,
        thresholds=thresholds,
        thresholds_schema=schema,
        version=1,
        tool_names=tool_names,
    )


def creation_change(skill: Skill) -> FieldChange:
    """The audit trail's one row for a skill made through the API: what it was made with."""
    return FieldChange(
        "created",
        None,
        {
            "agent_id": skill.agent_id,
            "title": skill.title,
            "enabled": skill.enabled,
            "thresholds": dict(skill.thresholds),
            "tool_names": list(skill.tool_names),
        },
    )


def _text(draft: Mapping[str, Any], field: str, limit: int, problems: dict[str, str], *, required: bool = False) -> str:
    raw: object = draft.get(field, "")
    if not isinstance(raw, str):
        problems[field] = "must be text"
        return ""
    text = raw.strip()
    if required and not text:
        problems[field] = "required"
    elif len(text) > limit:
        problems[field] = f"at most {limit} characters, got {len(text)}"
    return text


def _draft_tool_names(value: object, known_tools: Collection[str], problems: dict[str, str]) -> tuple[str, ...]:
    if not isinstance(value, list) or not value or not all(isinstance(name, str) for name in value):
        problems["tool_names"] = "required: a non-empty list of existing tool names"
        return ()
    # Order is kept for display; a repeated name adds nothing and would
    # collide on the (skill, tool) link.
    names = tuple(dict.fromkeys(value))
    unknown = [name for name in names if name not in known_tools]
    if unknown:
        problems["tool_names"] = f"unknown tools: {', '.join(unknown)}; a skill can only use tools that exist"
    return names


def _prefixed(prefix: str, details: Mapping[str, Any]) -> dict[str, str]:
    return {(prefix if key == prefix else f"{prefix}.{key}"): str(reason) for key, reason in details.items()}


# ─── Thresholds ────────────────────────────────────────────────────────────

SPEC_FIELDS: Final = ("type", "min", "max", "step", "default")
_OPTIONAL_SPEC_FIELDS: Final = frozenset({"description"})
# Threshold keys are read by agent code as identifiers (stallMinutes), so they
# keep to identifier characters.
THRESHOLD_KEY_PATTERN: Final = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,63}")
# 0.5 + 4 × 0.05 is 0.7000000000000001 in binary floating point. An exact step
# check would refuse the very values the schema advertises.
_STEP_TOLERANCE: Final = 1e-9


@dataclass(frozen=True, slots=True)
class _Spec:
    type: ThresholdType
    min: Number
    max: Number
    step: Number
    default: Number


def validate_thresholds_schema(schema: object) -> dict[str, dict[str, Any]]:
    """Check a thresholds schema and return it normalised; every bad key is reported at once."""
    return {key: _spec_as_json(spec, raw) for key, (spec, raw) in _parse_schema(schema).items()}


def validate_thresholds(
    schema: Mapping[str, Mapping[str, Any]],
    current: Mapping[str, Any],
    patch: object,
) -> dict[str, Number]:
    """Apply a partial thresholds patch to the current values, all or nothing.

    Every refused key is collected and reported in one error, so an operator
    fixes the form once instead of discovering problems one save at a time.
    """
    specs = {key: spec for key, (spec, _) in _parse_schema(schema).items()}
    if not isinstance(patch, Mapping):
        raise InvalidRegistryChange(
            "thresholds must be an object of key: number",
            code="INVALID_THRESHOLDS",
            fields={"thresholds": "must be an object of key: number"},
        )
    merged: dict[str, Number] = {key: spec.default for key, spec in specs.items()}
    merged.update({key: value for key, value in current.items() if key in specs})
    problems: dict[str, str] = {}
    for key, value in patch.items():
        spec = specs.get(key)
        # Named by their path in the request, like every other refused field.
        if spec is None:
            known = ", ".join(sorted(specs)) or "none"
            problems[f"thresholds.{key}"] = f"unknown threshold; this skill has: {known}"
            continue
        normalised, reason = _check_value(value, spec)
        if reason is not None:
            problems[f"thresholds.{key}"] = reason
        else:
            merged[key] = normalised
    if problems:
        raise InvalidRegistryChange(
            "thresholds refused, nothing was changed: "
            + ", ".join(key.removeprefix("thresholds.") for key in problems),
            code="INVALID_THRESHOLDS",
            fields=problems,
        )
    return merged


def reconcile_thresholds(schema: Mapping[str, Mapping[str, Any]], stored: Mapping[str, Any]) -> dict[str, Number]:
    """Fit stored operator values to a schema that a reseed may have changed.

    A value the schema still accepts is kept; a new key gets its default; a
    removed key is dropped; a value the schema now refuses falls back to the
    default. Refusing the reseed instead would leave the whole registry on the
    old code's shape because of one threshold.
    """
    reconciled: dict[str, Number] = {}
    for key, (spec, _) in _parse_schema(schema).items():
        if key in stored:
            normalised, reason = _check_value(stored[key], spec)
            reconciled[key] = normalised if reason is None else spec.default
        else:
            reconciled[key] = spec.default
    return reconciled


def _parse_schema(schema: object) -> dict[str, tuple[_Spec, Mapping[str, Any]]]:
    if not isinstance(schema, Mapping):
        raise InvalidRegistryChange(
            "thresholds_schema must be an object of key: {type, min, max, step, default}",
            code="INVALID_THRESHOLDS_SCHEMA",
            fields={"thresholds_schema": "must be an object of key: {type, min, max, step, default}"},
        )
    parsed: dict[str, tuple[_Spec, Mapping[str, Any]]] = {}
    problems: dict[str, str] = {}
    for key, raw in schema.items():
        if not isinstance(key, str) or not THRESHOLD_KEY_PATTERN.fullmatch(key):
            problems[str(key)] = "key must start with a letter and hold only letters, digits and underscores (max 64)"
            continue
        spec, reasons = _parse_spec(raw)
        if spec is None:
            problems[key] = "; ".join(reasons)
        else:
            parsed[key] = (spec, raw)
    if problems:
        raise InvalidRegistryChange(
            f"thresholds_schema refused: {', '.join(problems)}",
            code="INVALID_THRESHOLDS_SCHEMA",
            fields=problems,
        )
    return parsed


def _parse_spec(raw: object) -> tuple[_Spec | None, list[str]]:
    if not isinstance(raw, Mapping):
        return None, ["must be an object with type, min, max, step and default"]
    reasons: list[str] = []
    unknown = sorted(str(name) for name in raw if name not in SPEC_FIELDS and name not in _OPTIONAL_SPEC_FIELDS)
    if unknown:
        reasons.append(f"unknown fields: {', '.join(unknown)}")
    missing = [name for name in SPEC_FIELDS if name not in raw]
    if missing:
        reasons.append(f"missing fields: {', '.join(missing)}")
    kind = next((member for member in ThresholdType if member == raw.get("type")), None)
    if "type" in raw and kind is None:
        reasons.append("type must be integer or number")
    if not isinstance(raw.get("description", ""), str):
        reasons.append("description must be text")
    bounds: dict[str, Number] = {}
    for name in SPEC_FIELDS[1:]:
        if name not in raw:
            continue
        number = _finite_number(raw[name])
        if number is None:
            reasons.append(f"{name} must be a finite number")
        elif kind is ThresholdType.INTEGER and not float(number).is_integer():
            reasons.append(f"{name} must be a whole number for an integer threshold")
        else:
            bounds[name] = int(number) if kind is ThresholdType.INTEGER else number
    if reasons or kind is None:
        return None, reasons
    spec = _Spec(type=kind, **bounds)
    if spec.step <= 0:
        reasons.append("step must be greater than 0")
    if spec.min > spec.max:
        reasons.append("min must not exceed max")
    elif not spec.min <= spec.default <= spec.max:
        reasons.append(f"default {spec.default} must lie between min {spec.min} and max {spec.max}")
    elif spec.step > 0 and not _on_step(spec.default, spec):
        reasons.append(f"default {spec.default} must be min plus a whole number of steps of {spec.step}")
    return (None, reasons) if reasons else (spec, [])


def _spec_as_json(spec: _Spec, raw: Mapping[str, Any]) -> dict[str, Any]:
    as_json: dict[str, Any] = {
        "type": spec.type.value,
        "min": spec.min,
        "max": spec.max,
        "step": spec.step,
        "default": spec.default,
    }
    if "description" in raw:
        as_json["description"] = raw["description"]
    return as_json


def _check_value(value: object, spec: _Spec) -> tuple[Number, str | None]:
    if isinstance(value, bool):
        # bool is an int subclass in Python; true would otherwise pass as 1.
        return spec.default, "must be a number, not true or false"
    number = _finite_number(value)
    if number is None:
        return spec.default, "must be a finite number"
    if spec.type is ThresholdType.INTEGER:
        if not float(number).is_integer():
            return spec.default, f"must be a whole number, got {number}"
        number = int(number)
    if not spec.min <= number <= spec.max:
        return spec.default, f"must be between {spec.min} and {spec.max}, got {number}"
    if not _on_step(number, spec):
        return spec.default, f"must be {spec.min} plus a multiple of {spec.step}, got {number}"
    return number, None


def _finite_number(value: object) -> Number | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _on_step(value: Number, spec: _Spec) -> bool:
    try:
        steps = (value - spec.min) / spec.step
    except OverflowError:
        return False
    # More steps than a double can count (a step of 1e-300 across 1e300) is
    # no step an operator could click through; it is refused, not crashed on.
    if not math.isfinite(steps):
        return False
    return abs(steps - round(steps)) <= _STEP_TOLERANCE * max(1.0, abs(steps))


# ─── Patches ───────────────────────────────────────────────────────────────

SKILL_PATCH_FIELDS: Final = frozenset({"enabled", "thresholds", "version"})
AGENT_PATCH_FIELDS: Final = frozenset({"autonomous", "model", "autonomy_guard"})


def plan_skill_patch(skill: Skill, patch: Mapping[str, Any]) -> list[FieldChange]:
    """Plan a skill patch: `enabled`, `thresholds` and an optional expected `version`.

    An empty plan means nothing changed, so the store bumps no version and
    writes no audit row: an audit trail full of no-op saves hides the real ones.
    """
    _refuse_unknown_fields(
        patch,
        SKILL_PATCH_FIELDS,
        entity="skill",
        record_fields=_field_names(Skill),
        fixed_reason="fixed by the seed, or when a custom skill was created",
    )
    check_expected_version(current=skill.version, expected=patch.get("version"))
    changes: list[FieldChange] = []
    if "enabled" in patch:
        enabled = patch["enabled"]
        if not isinstance(enabled, bool):
            raise InvalidRegistryChange(
                "enabled must be true or false", code="INVALID_FIELD", fields={"enabled": "must be true or false"}
            )
        if enabled and not skill.enabled and skill.disabled_reason:
            # The seed switches a skill off when it cannot work yet (no data, no
            # endpoint). Switching it on would show an all-clear that nothing
            # computed. The code change that removes the reason reopens it.
            raise RegistryConflict(
                f"skill {skill.id} cannot be enabled: {skill.disabled_reason}",
                code="SKILL_BLOCKED",
                details={"enabled": skill.disabled_reason},
            )
        if enabled != skill.enabled:
            changes.append(FieldChange("enabled", skill.enabled, enabled))
    if "thresholds" in patch:
        thresholds = validate_thresholds(skill.thresholds_schema, skill.thresholds, patch["thresholds"])
        if thresholds != dict(skill.thresholds):
            changes.append(FieldChange("thresholds", dict(skill.thresholds), thresholds))
    return changes


def check_expected_version(*, current: int, expected: object) -> None:
    """Optimistic concurrency: a caller that names a version must be editing that version."""
    if expected is None:
        return
    if isinstance(expected, bool) or not isinstance(expected, int) or expected < 1:
        raise InvalidRegistryChange(
            "version must be a positive integer",
            code="INVALID_FIELD",
            fields={"version": "must be a positive integer"},
        )
    if expected != current:
        raise RegistryConflict(
            f"version {expected} is stale; the current version is {current}",
            code="VERSION_CONFLICT",
            details={"version": f"expected {expected}, current {current}; reload and apply the change again"},
        )


def plan_agent_patch(
    agent: Agent,
    patch: Mapping[str, Any],
    *,
    confirm: str | None = None,
    allowed_models: str | None = None,
) -> list[FieldChange]:
    """Plan an agent patch: `autonomous`, `model` and `autonomy_guard`; `confirm` travels beside the patch.

    A field set to its current value is no change, so a form that sends every
    field on every save never trips a rule for the fields it did not touch.
    """
    _refuse_unknown_fields(
        patch,
        AGENT_PATCH_FIELDS,
        entity="agent",
        record_fields=_field_names(Agent),
        fixed_reason="code-defined: only a reseed changes it",
    )
    changes: list[FieldChange] = []
    if "autonomous" in patch:
        autonomous = patch["autonomous"]
        if not isinstance(autonomous, bool):
            raise InvalidRegistryChange(
                "autonomous must be true or false",
                code="INVALID_FIELD",
                fields={"autonomous": "must be true or false"},
            )
        if autonomous != agent.autonomous:
            check_autonomy_change(agent, autonomous=autonomous, confirm=confirm)
            changes.append(FieldChange("autonomous", agent.autonomous, autonomous))
    if "model" in patch:
        model = normalise_model(patch["model"])
        if model != agent.model:
            check_model(agent, model, allowed_models=allowed_models)
            changes.append(FieldChange("model", agent.model, model))
    if "autonomy_guard" in patch:
        guard = patch["autonomy_guard"]
        if not isinstance(guard, bool):
            raise InvalidRegistryChange(
                "autonomy_guard must be true or false",
                code="INVALID_FIELD",
                fields={"autonomy_guard": "must be true or false"},
            )
        if guard != agent.autonomy_guard:
            changes.append(FieldChange("autonomy_guard", agent.autonomy_guard, guard))
    return changes


# The audit actor of a demotion the platform made: the autonomy guard, not a person.
AUTONOMY_GUARD_ACTOR: Final = "autonomy-guard"


def plan_guard_demotion(agent: Agent, patch: Mapping[str, Any], *, confirm: str | None = None) -> list[FieldChange]:
    """The platform's own agent change: autonomy off, on an agent whose operator opted into the guard.

    Anything more would let a credential no person holds hand actions to an
    agent or change what a person chose, so everything else is refused.
    """
    if set(patch) != {"autonomous"} or patch["autonomous"] is not False or confirm is not None:
        raise PermissionDenied(
            "the platform may only switch an agent's autonomy off; every other change is a person's",
            code="GUARD_DEMOTES_ONLY",
        )
    if not agent.autonomy_guard:
        raise PermissionDenied(
            f"{agent.id} has not opted into the autonomy guard; only a person switches its autonomy",
            code="GUARD_NOT_OPTED_IN",
        )
    return [FieldChange("autonomous", True, False)] if agent.autonomous else []


def check_autonomy_change(agent: Agent, *, autonomous: bool, confirm: str | None) -> None:
    """Autonomy exists only behind a gate, and switching it on takes a typed confirmation."""
    if not agent.has_autonomy_gate:
        raise InvalidRegistryChange(
            f"{agent.id} has no autonomy gate",
            code="NO_AUTONOMY_GATE",
            fields={"autonomous": f"{agent.id} has no autonomy gate; its code always asks a human"},
        )
    if not autonomous:
        # Switching off only hands actions back to a human, which is always safe.
        return
    if confirm is None or confirm == "":
        raise InvalidRegistryChange(
            f"switching autonomy on for {agent.id} needs confirm set to the agent id",
            code="CONFIRMATION_REQUIRED",
            fields={"confirm": f"type {agent.id} to let this agent act without a human"},
        )
    if confirm != agent.id:
        # An exact, typed match: a checkbox or a case-folded match is too easy
        # to give without reading which agent is about to act alone.
        raise InvalidRegistryChange(
            f"confirm does not match the agent id {agent.id}",
            code="CONFIRMATION_MISMATCH",
            fields={"confirm": f"must be exactly {agent.id}"},
        )


DEFAULT_ALLOWED_MODELS: Final = "claude-*"
MODEL_ID_PATTERN: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}")


def parse_allowed_models(setting: str | None) -> tuple[str, ...]:
    """Split the comma-separated allowed-models setting into fnmatch patterns."""
    patterns = tuple(part.strip() for part in (setting or "").split(",") if part.strip())
    return patterns or (DEFAULT_ALLOWED_MODELS,)


def normalise_model(value: object) -> str | None:
    """A model pin as stored: None (or an empty string) means the engine's default."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidRegistryChange(
            "model must be a model id, or null for the engine default",
            code="INVALID_FIELD",
            fields={"model": "must be a model id, or null for the engine default"},
        )
    return value.strip() or None


def check_model(agent: Agent, model: str | None, *, allowed_models: str | None = None) -> None:
    """A pinned model only on an engine agent, and only one the deployment allows."""
    if model is None:
        return
    if agent.runtime is not Runtime.ENGINE:
        raise InvalidRegistryChange(
            f"{agent.id} runs in the console and reads no model",
            code="MODEL_NOT_SETTABLE",
            fields={"model": "only engine agents read a model; a pin here would change nothing"},
        )
    patterns = parse_allowed_models(allowed_models)
    # Wildcards in the id itself would match a pattern without naming a model.
    if not MODEL_ID_PATTERN.fullmatch(model) or not any(fnmatchcase(model, pattern) for pattern in patterns):
        raise InvalidRegistryChange(
            f"model {model!r} is not allowed",
            code="MODEL_NOT_ALLOWED",
            fields={"model": f"must match one of: {', '.join(patterns)}"},
        )


def _refuse_unknown_fields(
    patch: object,
    allowed: frozenset[str],
    *,
    entity: str,
    record_fields: frozenset[str],
    fixed_reason: str,
) -> None:
    if not isinstance(patch, Mapping):
        raise InvalidRegistryChange(
            f"the {entity} patch must be an object", code="INVALID_PATCH", fields={"patch": "must be an object"}
        )
    refused: dict[str, str] = {}
    listed = ", ".join(sorted(allowed))
    for key in patch:
        if key in allowed:
            continue
        if key in record_fields:
            refused[str(key)] = f"{fixed_reason} (patchable: {listed})"
        else:
            refused[str(key)] = f"unknown field (patchable: {listed})"
    if refused:
        raise InvalidRegistryChange(
            f"{entity} patch refused, nothing was changed: {', '.join(refused)}",
            code="UNKNOWN_FIELDS",
            fields=refused,
        )


def _field_names(record: type) -> frozenset[str]:
    return frozenset(item.name for item in fields(record))


# ─── Listing filters ───────────────────────────────────────────────────────

# Entities whose changes another context makes and the registry only
# records (AppendAudit): a subject's erasure and a person's verdict on a
# decision (the decisions context), a playground run (the playground).
# Agents, skills and rollouts change here, each with its audit rows in the
# same transaction, so no other context may write rows for them.
APPENDED_AUDIT_ENTITIES: Final = ("subject", "decision", "run")
AUDIT_ENTITIES: Final = ("agent", "skill", "rollout", *APPENDED_AUDIT_ENTITIES)
# An id or field name is a key, not a document.
MAX_AUDIT_KEY_CHARS: Final = 256


def check_tool_kind(kind: str | None) -> None:
    """A tool listing filters on a kind that exists, or on none."""
    if kind is not None and kind not in tuple(ToolKind):
        raise InvalidRegistryChange(
            f"unknown tool kind {kind!r}",
            code="INVALID_FIELD",
            details={"kind": f"must be one of {', '.join(ToolKind)}"},
        )


def check_audit_entity(entity: str | None) -> None:
    """An audit listing filters on an entity that has audit rows, or on none."""
    if entity is not None and entity not in AUDIT_ENTITIES:
        raise InvalidRegistryChange(
            f"unknown audit entity {entity!r}",
            code="INVALID_FIELD",
            details={"entity": f"must be one of {', '.join(AUDIT_ENTITIES)}"},
        )


def check_audit_span(changed_from: datetime | None, changed_to: datetime | None) -> None:
    """An audit listing's time filter: from inclusive, to exclusive; an empty span is a mistake."""
    if changed_from is not None and changed_to is not None and changed_to <= changed_from:
        raise InvalidRegistryChange(
            "changed_to must be later than changed_from",
            code="INVALID_FIELD",
            fields={"changed_to": "must be later than changed_from"},
        )


@dataclass(frozen=True, slots=True)
class AppendedChange:
    """One change another context made, to be kept as one audit row."""

    # The caller's id of the change: the same id again is the same row.
    request_id: uuid.UUID
    entity: str
    entity_id: str
    change: FieldChange


def appended_change(*, request_id: str, entity: str, entity_id: str, field: str, old: Any, new: Any) -> AppendedChange:
    """Check a change another context asks to have audited, naming the field at fault."""
    if entity not in APPENDED_AUDIT_ENTITIES:
        raise InvalidRegistryChange(
            f"audit rows for {entity!r} are not appended from outside the registry",
            code="INVALID_FIELD",
            fields={"entity": f"must be one of {', '.join(APPENDED_AUDIT_ENTITIES)}"},
        )
    try:
        change_id = uuid.UUID(request_id)
    except ValueError:
        raise InvalidRegistryChange(
            "request_id must be a UUID", code="INVALID_FIELD", fields={"request_id": "must be a UUID"}
        ) from None
    for name, value in (("entity_id", entity_id), ("field", field)):
        if not value.strip() or value != value.strip() or len(value) > MAX_AUDIT_KEY_CHARS or "\x00" in value:
            raise InvalidRegistryChange(
                f"{name} must be 1 to {MAX_AUDIT_KEY_CHARS} characters without NUL or surrounding blanks",
                code="INVALID_FIELD",
                fields={name: f"required, at most {MAX_AUDIT_KEY_CHARS} characters, trimmed, without NUL"},
            )
    return AppendedChange(
        request_id=change_id, entity=entity, entity_id=entity_id, change=FieldChange(field=field, old=old, new=new)
    )


# ─── Confirmation ──────────────────────────────────────────────────────────


def requires_confirmation(tool_kind: ToolKind | str, agent_autonomous: bool) -> bool:
    """A write, notify or event tool waits for a human unless its agent is autonomous; a read never does."""
    return ToolKind(tool_kind) is not ToolKind.READ and not agent_autonomous
