"""Registry rules, tested as pure functions over in-memory records."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import grpc
import pytest

from services.common.errors import DomainError, PermissionDenied
from services.common.grpc_server import status_of
from services.registry.rules import (
    Agent,
    AgentStatus,
    FieldChange,
    InvalidRegistryChange,
    RegistryConflict,
    RegistryNotFound,
    RegistryRuleError,
    Runtime,
    Skill,
    SkillSource,
    ToolKind,
    check_api_creation,
    check_expected_version,
    parse_allowed_models,
    plan_agent_patch,
    plan_guard_demotion,
    plan_new_skill,
    plan_skill_patch,
    reconcile_thresholds,
    requires_confirmation,
    validate_thresholds,
    validate_thresholds_schema,
)

SCHEMA: dict[str, dict[str, Any]] = {
    "stallMinutes": {"type": "integer", "min": 3, "max": 60, "step": 1, "default": 10},
    "reassignConfidence": {"type": "number", "min": 0.5, "max": 1, "step": 0.05, "default": 0.7},
    "maxRadiusKm": {"type": "number", "min": 1, "max": 25, "step": 0.5, "default": 6},
}
CURRENT = {"stallMinutes": 12, "reassignConfidence": 0.8, "maxRadiusKm": 6}

GATED = Agent(
    id="EXCEPTION_AGENT",
    name="Exception agent",
    class_ref="ExceptionAgent",
    runtime=Runtime.ENGINE,
    purpose="Stalled riders",
    wake_on="miler.stalled",
    writes_to="reassign",
    status=AgentStatus.LIVE,
    status_note="",
    has_autonomy_gate=True,
    autonomous=False,
    model=None,
)
GATED_ON = replace(GATED, autonomous=True)
GATELESS = replace(GATED, id="JARVIS", has_autonomy_gate=False)
PINNED = replace(GATED, model="claude-opus-5-5")
CONSOLE = replace(GATED, id="CONSOLE_OPS_AGENT", runtime=Runtime.CONSOLE, has_autonomy_gate=False)

SKILL = Skill(
    id="stall_response",
    agent_id="EXCEPTION_AGENT",
    title="Stall response",
    category="exceptions",
    description="",
    sample_prompt="",
    source=SkillSource.ENGINE,
    enabled=True,
    disabled_reason=None,
    thresholds={"stallMinutes": 10, "reassignConfidence": 0.7, "maxRadiusKm": 6},
    thresholds_schema=SCHEMA,
    version=1,
    tool_names=("nearby_milers",),
)
BLOCKED = replace(SKILL, id="high_value_cod", enabled=False, disabled_reason="No data: no payment amount")


def raised(error: pytest.ExceptionInfo[RegistryRuleError]) -> tuple[str, dict[str, Any]]:
    # A refused input names its fields; a conflict says what it collides with.
    return error.value.code, getattr(error.value, "fields", error.value.details)


# ─── Errors and creation ───────────────────────────────────────────────────


@pytest.mark.parametrize(
    ("error_class", "status", "code"),
    [
        (InvalidRegistryChange, grpc.StatusCode.INVALID_ARGUMENT, "INVALID_REGISTRY_CHANGE"),
        (RegistryConflict, grpc.StatusCode.FAILED_PRECONDITION, "REGISTRY_CONFLICT"),
        (RegistryNotFound, grpc.StatusCode.NOT_FOUND, "REGISTRY_NOT_FOUND"),
    ],
)
def test_errors_carry_code_message_details_and_status(error_class: type[RegistryRuleError], status, code) -> None:
    error = error_class("stallMinutes refused", details={"stallMinutes": "too low"})
    assert isinstance(error, RegistryRuleError) and isinstance(error, DomainError)
    assert (error.code, error.message, error.details["stallMinutes"], status_of(error)) == (
        code,
        "stallMinutes refused",
        "too low",
        status,
    )
    assert error_class("x", code="SPECIFIC").code == "SPECIFIC"


@pytest.mark.parametrize(
    ("entity", "code"), [("agent", "CODE_DEFINED"), ("tool", "CODE_DEFINED"), ("widget", "UNKNOWN_ENTITY")]
)
def test_only_skills_can_be_created_through_the_api(entity: str, code: str) -> None:
    check_api_creation("skill")
    with pytest.raises(InvalidRegistryChange) as error:
        check_api_creation(entity)
    assert error.value.code == code
    assert "entity" in error.value.fields


# ─── Threshold values ──────────────────────────────────────────────────────


@pytest.mark.parametrize(
    ("patch", "expected"),
    [
        ({}, CURRENT),
        ({"stallMinutes": 15}, {**CURRENT, "stallMinutes": 15}),
        ({"stallMinutes": 3}, {**CURRENT, "stallMinutes": 3}),
        ({"stallMinutes": 60}, {**CURRENT, "stallMinutes": 60}),
        ({"reassignConfidence": 0.85}, {**CURRENT, "reassignConfidence": 0.85}),
        ({"reassignConfidence": 0.7}, {**CURRENT, "reassignConfidence": 0.7}),
        ({"reassignConfidence": 1}, {**CURRENT, "reassignConfidence": 1}),
        ({"maxRadiusKm": 12.5}, {**CURRENT, "maxRadiusKm": 12.5}),
        ({"stallMinutes": 20, "maxRadiusKm": 1}, {**CURRENT, "stallMinutes": 20, "maxRadiusKm": 1}),
    ],
)
def test_valid_threshold_patches_merge_into_current(patch: dict[str, Any], expected: dict[str, Any]) -> None:
    assert validate_thresholds(SCHEMA, CURRENT, patch) == expected


def test_a_whole_float_for_an_integer_threshold_is_stored_as_an_integer() -> None:
    result = validate_thresholds(SCHEMA, CURRENT, {"stallMinutes": 15.0})
    assert result["stallMinutes"] == 15 and type(result["stallMinutes"]) is int


@pytest.mark.parametrize(
    ("patch", "reason"),
    [
        ({"stallMinutes": True}, "not true or false"),
        ({"reassignConfidence": False}, "not true or false"),
        ({"stallMinutes": 2.5}, "whole number"),
        ({"stallMinutes": "10"}, "finite number"),
        ({"stallMinutes": None}, "finite number"),
        ({"maxRadiusKm": float("nan")}, "finite number"),
        ({"maxRadiusKm": float("inf")}, "finite number"),
        ({"stallMinutes": 2}, "between 3 and 60"),
        ({"stallMinutes": 61}, "between 3 and 60"),
        ({"reassignConfidence": 0.45}, "between 0.5 and 1"),
        ({"reassignConfidence": 0.72}, "multiple of 0.05"),
        ({"maxRadiusKm": 2.25}, "multiple of 0.5"),
        ({"stallMinute": 10}, "unknown threshold"),
    ],
)
def test_invalid_threshold_values_are_refused_naming_the_key(patch: dict[str, Any], reason: str) -> None:
    with pytest.raises(InvalidRegistryChange) as error:
        validate_thresholds(SCHEMA, CURRENT, patch)
    code, details = raised(error)
    (key,) = patch
    assert code == "INVALID_THRESHOLDS"
    assert list(details) == [f"thresholds.{key}"]
    assert reason in details[f"thresholds.{key}"]
    assert key in error.value.message


def test_every_bad_key_is_reported_in_one_error_and_nothing_changes() -> None:
    current = dict(CURRENT)
    patch = {"stallMinutes": 2.5, "reassignConfidence": 2, "colour": 1, "maxRadiusKm": 10}
    with pytest.raises(InvalidRegistryChange) as error:
        validate_thresholds(SCHEMA, current, patch)
    assert set(error.value.fields) == {"thresholds.stallMinutes", "thresholds.reassignConfidence", "thresholds.colour"}
    assert current == CURRENT


@pytest.mark.parametrize("patch", [[1, 2], "stallMinutes=5", 5, None])
def test_a_thresholds_patch_must_be_an_object(patch: object) -> None:
    with pytest.raises(InvalidRegistryChange) as error:
        validate_thresholds(SCHEMA, CURRENT, patch)
    assert raised(error) == ("INVALID_THRESHOLDS", {"thresholds": "must be an object of key: number"})


def test_keys_missing_from_current_take_their_default_and_stale_keys_drop() -> None:
    result = validate_thresholds(SCHEMA, {"stallMinutes": 12, "retired": 4}, {"maxRadiusKm": 8})
    assert result == {"stallMinutes": 12, "reassignConfidence": 0.7, "maxRadiusKm": 8}


def test_reconcile_keeps_what_still_fits_and_defaults_the_rest() -> None:
    stored = {"stallMinutes": 12, "reassignConfidence": 0.3, "retired": 5}
    assert reconcile_thresholds(SCHEMA, stored) == {"stallMinutes": 12, "reassignConfidence": 0.7, "maxRadiusKm": 6}


# ─── Threshold schemas ─────────────────────────────────────────────────────


def test_a_valid_schema_comes_back_normalised() -> None:
    schema = {
        "waitMinutes": {
            "type": "integer",
            "min": 0,
            "max": 30.0,
            "step": 5,
            "default": 10.0,
            "description": "How long",
        },
        "ratio": {"type": "number", "min": 0, "max": 1, "step": 0.1, "default": 0.3},
    }
    assert validate_thresholds_schema(schema) == {
        "waitMinutes": {"type": "integer", "min": 0, "max": 30, "step": 5, "default": 10, "description": "How long"},
        "ratio": {"type": "number", "min": 0, "max": 1, "step": 0.1, "default": 0.3},
    }


GOOD_SPEC = {"type": "integer", "min": 1, "max": 10, "step": 1, "default": 5}


@pytest.mark.parametrize(
    ("spec", "reason"),
    [
        ({**GOOD_SPEC, "default": 0}, "between min 1 and max 10"),
        ({**GOOD_SPEC, "default": 11}, "between min 1 and max 10"),
        ({**GOOD_SPEC, "min": 12}, "min must not exceed max"),
        ({**GOOD_SPEC, "step": 0}, "step must be greater than 0"),
        ({**GOOD_SPEC, "step": -1}, "step must be greater than 0"),
        ({**GOOD_SPEC, "step": 3, "default": 5}, "whole number of steps"),
        # More steps than a double can count: refused, not an overflow.
        ({"type": "number", "min": -1e308, "max": 1e308, "step": 1e-300, "default": 1e308}, "whole number of steps"),
        ({**GOOD_SPEC, "type": "string"}, "type must be integer or number"),
        ({**GOOD_SPEC, "type": ["integer"]}, "type must be integer or number"),
        ({**GOOD_SPEC, "step": 0.5}, "whole number for an integer threshold"),
        ({**GOOD_SPEC, "min": True}, "min must be a finite number"),
        ({**GOOD_SPEC, "max": "10"}, "max must be a finite number"),
        ({**GOOD_SPEC, "default": float("nan")}, "default must be a finite number"),
        ({key: value for key, value in GOOD_SPEC.items() if key != "default"}, "missing fields: default"),
        ({**GOOD_SPEC, "label": "Stall"}, "unknown fields: label"),
        ({**GOOD_SPEC, "description": 5}, "description must be text"),
        (5, "must be an object"),
    ],
)
def test_a_bad_threshold_spec_is_refused_naming_its_key(spec: object, reason: str) -> None:
    with pytest.raises(InvalidRegistryChange) as error:
        validate_thresholds_schema({"limit": spec})
    code, details = raised(error)
    assert code == "INVALID_THRESHOLDS_SCHEMA"
    assert list(details) == ["limit"]
    assert reason in details["limit"]


@pytest.mark.parametrize("key", ["1st", "stall-minutes", "", "a" * 65, "with space"])
def test_threshold_keys_must_be_identifiers(key: str) -> None:
    with pytest.raises(InvalidRegistryChange) as error:
        validate_thresholds_schema({key: GOOD_SPEC})
    assert list(error.value.fields) == [key]


def test_every_bad_spec_is_reported_at_once() -> None:
    schema = {"a": {**GOOD_SPEC, "step": 0}, "b": GOOD_SPEC, "c": {**GOOD_SPEC, "default": 99}}
    with pytest.raises(InvalidRegistryChange) as error:
        validate_thresholds_schema(schema)
    assert set(error.value.fields) == {"a", "c"}


def test_a_schema_must_be_an_object() -> None:
    with pytest.raises(InvalidRegistryChange) as error:
        validate_thresholds_schema(["stallMinutes"])
    assert list(error.value.fields) == ["thresholds_schema"]


# ─── Skill patches ─────────────────────────────────────────────────────────


@pytest.mark.parametrize(
    "patch",
    [
        {},
        {"enabled": True},
        {"thresholds": {}},
        {"thresholds": {"stallMinutes": 10}},
        {"thresholds": {"stallMinutes": 10.0, "reassignConfidence": 0.7}},
        {"version": 1},
        {"version": 1, "enabled": True, "thresholds": {"maxRadiusKm": 6}},
    ],
)
def test_a_patch_that_changes_nothing_plans_nothing(patch: dict[str, Any]) -> None:
    assert plan_skill_patch(SKILL, patch) == []


def test_a_skill_patch_plans_each_changed_field() -> None:
    changes = plan_skill_patch(SKILL, {"thresholds": {"stallMinutes": 12}, "enabled": False, "version": 1})
    assert changes == [
        FieldChange("enabled", True, False),
        FieldChange("thresholds", dict(SKILL.thresholds), {**SKILL.thresholds, "stallMinutes": 12}),
    ]


@pytest.mark.parametrize(
    ("patch", "error_class", "code", "field"),
    [
        ({"title": "New"}, InvalidRegistryChange, "UNKNOWN_FIELDS", "title"),
        ({"colour": "red"}, InvalidRegistryChange, "UNKNOWN_FIELDS", "colour"),
        ({"enabled": "yes"}, InvalidRegistryChange, "INVALID_FIELD", "enabled"),
        ({"enabled": 1}, InvalidRegistryChange, "INVALID_FIELD", "enabled"),
        ({"version": 0}, InvalidRegistryChange, "INVALID_FIELD", "version"),
        ({"version": True}, InvalidRegistryChange, "INVALID_FIELD", "version"),
        ({"version": "1"}, InvalidRegistryChange, "INVALID_FIELD", "version"),
        ({"version": 2, "enabled": False}, RegistryConflict, "VERSION_CONFLICT", "version"),
        ({"version": 2, "thresholds": {"stallMinutes": 0}}, RegistryConflict, "VERSION_CONFLICT", "version"),
        ({"thresholds": {"stallMinutes": 0}}, InvalidRegistryChange, "INVALID_THRESHOLDS", "thresholds.stallMinutes"),
        ({"thresholds": [5]}, InvalidRegistryChange, "INVALID_THRESHOLDS", "thresholds"),
    ],
)
def test_skill_patch_refusals_name_the_field(patch: dict[str, Any], error_class, code: str, field: str) -> None:
    with pytest.raises(error_class) as error:
        plan_skill_patch(SKILL, patch)
    assert error.value.code == code
    assert field in getattr(error.value, "fields", error.value.details)


def test_a_skill_patch_must_be_an_object() -> None:
    with pytest.raises(InvalidRegistryChange) as error:
        plan_skill_patch(SKILL, ["enabled"])  # type: ignore[arg-type]  # a JSON body can be any value
    assert raised(error) == ("INVALID_PATCH", {"patch": "must be an object"})


def test_refusing_a_record_field_says_it_is_fixed_not_unknown() -> None:
    with pytest.raises(InvalidRegistryChange) as error:
        plan_skill_patch(SKILL, {"tool_names": ["x"], "colour": "red"})
    assert "fixed by the seed" in error.value.fields["tool_names"]
    assert "unknown field" in error.value.fields["colour"]


def test_a_skill_the_seed_disabled_for_a_reason_cannot_be_switched_on() -> None:
    with pytest.raises(RegistryConflict) as error:
        plan_skill_patch(BLOCKED, {"enabled": True})
    assert raised(error) == ("SKILL_BLOCKED", {"enabled": "No data: no payment amount"})
    assert plan_skill_patch(BLOCKED, {"enabled": False}) == []
    assert plan_skill_patch(BLOCKED, {"thresholds": {"stallMinutes": 20}}) != []


@pytest.mark.parametrize(("current", "expected"), [(1, None), (4, None), (4, 4)])
def test_a_matching_or_absent_expected_version_passes(current: int, expected: int | None) -> None:
    check_expected_version(current=current, expected=expected)
    assert plan_skill_patch(replace(SKILL, version=current), {"version": expected}) == []


def test_a_stale_expected_version_is_a_conflict() -> None:
    with pytest.raises(RegistryConflict) as error:
        check_expected_version(current=5, expected=4)
    assert error.value.code == "VERSION_CONFLICT"
    assert "current 5" in error.value.details["version"]


# ─── Agent patches ─────────────────────────────────────────────────────────

AGENT_PATCH_MATRIX = [
    # autonomy
    (GATED, {"autonomous": True}, "EXCEPTION_AGENT", None, [("autonomous", False, True)]),
    (GATED, {"autonomous": True}, None, None, "CONFIRMATION_REQUIRED"),
    (GATED, {"autonomous": True}, "", None, "CONFIRMATION_REQUIRED"),
    (GATED, {"autonomous": True}, "exception_agent", None, "CONFIRMATION_MISMATCH"),
    (GATED, {"autonomous": True}, "EXCEPTION_AGENT ", None, "CONFIRMATION_MISMATCH"),
    (GATED, {"autonomous": True}, "DISPATCH_AGENT", None, "CONFIRMATION_MISMATCH"),
    (GATED_ON, {"autonomous": False}, None, None, [("autonomous", True, False)]),
    (GATED_ON, {"autonomous": True}, None, None, []),
    (GATED, {"autonomous": False}, None, None, []),
    (GATELESS, {"autonomous": True}, "JARVIS", None, "NO_AUTONOMY_GATE"),
    (GATELESS, {"autonomous": False}, None, None, []),
    (GATED, {"autonomous": "true"}, "EXCEPTION_AGENT", None, "INVALID_FIELD"),
    (GATED, {"autonomous": 1}, "EXCEPTION_AGENT", None, "INVALID_FIELD"),
    # model
    (GATED, {"model": "claude-opus-5-5"}, None, None, [("model", None, "claude-opus-5-5")]),
    (GATED, {"model": " claude-sonnet-5-5 "}, None, "", [("model", None, "claude-sonnet-5-5")]),
    (GATED, {"model": "gpt-4o"}, None, None, "MODEL_NOT_ALLOWED"),
    (GATED, {"model": "gpt-4o"}, None, "claude-*, gpt-*", [("model", None, "gpt-4o")]),
    (GATED, {"model": "claude-haiku-4-5"}, None, "claude-opus-*,claude-sonnet-*", "MODEL_NOT_ALLOWED"),
    (GATED, {"model": "Claude-opus-5-5"}, None, None, "MODEL_NOT_ALLOWED"),
    (GATED, {"model": "claude-*"}, None, None, "MODEL_NOT_ALLOWED"),
    (GATED, {"model": "claude opus"}, None, None, "MODEL_NOT_ALLOWED"),
    (GATED, {"model": 5}, None, None, "INVALID_FIELD"),
    (PINNED, {"model": None}, None, None, [("model", "claude-opus-5-5", None)]),
    (PINNED, {"model": ""}, None, None, [("model", "claude-opus-5-5", None)]),
    (PINNED, {"model": "claude-opus-5-5"}, None, "gpt-*", []),
    (GATED, {"model": None}, None, None, []),
    (CONSOLE, {"model": "claude-opus-5-5"}, None, None, "MODEL_NOT_SETTABLE"),
    (CONSOLE, {"model": None}, None, None, []),
    (CONSOLE, {"model": "   "}, None, None, []),
    # autonomy_guard: an opt-in, with or without autonomy, no confirmation needed
    (GATED, {"autonomy_guard": True}, None, None, [("autonomy_guard", False, True)]),
    (replace(GATED_ON, autonomy_guard=True), {"autonomy_guard": False}, None, None, [("autonomy_guard", True, False)]),
    (GATED, {"autonomy_guard": False}, None, None, []),
    (GATED, {"autonomy_guard": "on"}, None, None, "INVALID_FIELD"),
    # shape
    (GATED, {"name": "Renamed"}, None, None, "UNKNOWN_FIELDS"),
    (GATED, {"confirm": "EXCEPTION_AGENT"}, None, None, "UNKNOWN_FIELDS"),
    (
        GATED,
        {"autonomous": True, "model": "claude-opus-5-5"},
        "EXCEPTION_AGENT",
        None,
        [("autonomous", False, True), ("model", None, "claude-opus-5-5")],
    ),
    (GATED, {}, None, None, []),
]


@pytest.mark.parametrize(("agent", "patch", "confirm", "allowed", "expected"), AGENT_PATCH_MATRIX)
def test_agent_patch_matrix(
    agent: Agent,
    patch: dict[str, Any],
    confirm: str | None,
    allowed: str | None,
    expected: list[tuple[str, Any, Any]] | str,
) -> None:
    if isinstance(expected, str):
        with pytest.raises(InvalidRegistryChange) as error:
            plan_agent_patch(agent, patch, confirm=confirm, allowed_models=allowed)
        assert error.value.code == expected
        assert set(error.value.fields) & (set(patch) | {"confirm"})
    else:
        changes = plan_agent_patch(agent, patch, confirm=confirm, allowed_models=allowed)
        assert changes == [FieldChange(*change) for change in expected]


@pytest.mark.parametrize(
    ("setting", "patterns"),
    [
        (None, ("claude-*",)),
        ("", ("claude-*",)),
        (" , ", ("claude-*",)),
        ("claude-opus-*", ("claude-opus-*",)),
        (" claude-opus-* , ,claude-sonnet-* ", ("claude-opus-*", "claude-sonnet-*")),
    ],
)
def test_allowed_models_setting_is_a_comma_separated_pattern_list(
    setting: str | None, patterns: tuple[str, ...]
) -> None:
    assert parse_allowed_models(setting) == patterns


# ─── Confirmation ──────────────────────────────────────────────────────────


@pytest.mark.parametrize(
    ("kind", "autonomous", "expected"),
    [
        (ToolKind.READ, False, False),
        (ToolKind.READ, True, False),
        (ToolKind.WRITE, False, True),
        (ToolKind.WRITE, True, False),
        (ToolKind.NOTIFY, False, True),
        (ToolKind.NOTIFY, True, False),
        (ToolKind.EVENT, False, True),
        (ToolKind.EVENT, True, False),
        ("write", False, True),
        ("read", False, False),
    ],
)
def test_requires_confirmation_matrix(kind: ToolKind | str, autonomous: bool, expected: bool) -> None:
    assert requires_confirmation(kind, autonomous) is expected


# ─── New skills ────────────────────────────────────────────────────────────

AGENTS = {agent.id: agent for agent in (GATED, CONSOLE)}
TOOLS = {"scan_bookings", "notify_riders", "nearby_milers"}
DRAFT: dict[str, Any] = {
    "id": "weekend_surge",
    "agent_id": "CONSOLE_OPS_AGENT",
    "title": "  Weekend surge  ",
    "tool_names": ["scan_bookings", "notify_riders", "scan_bookings"],
    "thresholds_schema": {"surgeRatio": {"type": "number", "min": 1, "max": 3, "step": 0.1, "default": 1.5}},
}


def new_skill(**overrides: Any) -> Skill:
    draft = {key: value for key, value in {**DRAFT, **overrides}.items() if value is not ...}
    return plan_new_skill(draft, agents=AGENTS, known_tools=TOOLS, existing_skill_ids={"sla_guardian"})


def test_a_new_skill_is_custom_at_version_one_with_default_thresholds() -> None:
    skill = new_skill()
    assert skill == Skill(
        id="weekend_surge",
        agent_id="CONSOLE_OPS_AGENT",
        title="Weekend surge",
        category="custom",
        description="",
        sample_prompt="",
        source=SkillSource.CUSTOM,
        enabled=True,
        disabled_reason=None,
        thresholds={"surgeRatio": 1.5},
        thresholds_schema=DRAFT["thresholds_schema"],
        version=1,
        tool_names=("scan_bookings", "notify_riders"),
    )


def test_a_new_skill_may_set_its_thresholds_and_switch() -> None:
    skill = new_skill(thresholds={"surgeRatio": 2.2}, enabled=False, category="monitoring", id="a" * 64)
    assert (skill.thresholds, skill.enabled, skill.category) == ({"surgeRatio": 2.2}, False, "monitoring")
    assert skill.id == "a" * 64


@pytest.mark.parametrize(
    ("overrides", "field", "reason"),
    [
        ({"agent_id": "EXCEPTION_AGENT"}, "agent_id", "console agents only"),
        ({"agent_id": "GHOST_AGENT"}, "agent_id", "no agent 'GHOST_AGENT'"),
        ({"agent_id": ...}, "agent_id", "required"),
        ({"tool_names": ["scan_bookings", "ghost", "phantom"]}, "tool_names", "unknown tools: ghost, phantom"),
        ({"tool_names": []}, "tool_names", "non-empty list"),
        ({"tool_names": "scan_bookings"}, "tool_names", "non-empty list"),
        ({"tool_names": ...}, "tool_names", "non-empty list"),
        ({"title": "   "}, "title", "required"),
        ({"title": ...}, "title", "required"),
        ({"title": 7}, "title", "must be text"),
        ({"title": "t" * 121}, "title", "at most 120"),
        ({"sample_prompt": "p" * 2001}, "sample_prompt", "at most 2000"),
        ({"id": "Weekend"}, "id", "lowercase snake_case"),
        ({"id": "weekend-surge"}, "id", "lowercase snake_case"),
        ({"id": "1weekend"}, "id", "lowercase snake_case"),
        ({"id": "weekend__surge"}, "id", "lowercase snake_case"),
        ({"id": "weekend_"}, "id", "lowercase snake_case"),
        ({"id": "a" * 65}, "id", "at most 64"),
        ({"id": ...}, "id", "required"),
        ({"id": 42}, "id", "required"),
        ({"source": "engine"}, "source", "always custom"),
        ({"version": 3}, "version", "starts at version 1"),
        ({"disabled_reason": "x"}, "disabled_reason", "set only by the seed"),
        ({"owner": "me"}, "owner", "unknown field"),
        ({"enabled": "yes"}, "enabled", "true or false"),
        ({"thresholds_schema": {"surgeRatio": {**GOOD_SPEC, "default": 0}}}, "thresholds_schema.surgeRatio", "between"),
        ({"thresholds_schema": "none"}, "thresholds_schema", "must be an object"),
        ({"thresholds": {"ghost": 1}}, "thresholds.ghost", "unknown threshold"),
        ({"thresholds": {"surgeRatio": 5}}, "thresholds.surgeRatio", "between 1 and 3"),
    ],
)
def test_a_bad_new_skill_is_refused_naming_the_field(overrides: dict[str, Any], field: str, reason: str) -> None:
    with pytest.raises(InvalidRegistryChange) as error:
        new_skill(**overrides)
    assert error.value.code == "INVALID_SKILL"
    assert list(error.value.fields) == [field]
    assert reason in error.value.fields[field]


def test_every_problem_with_a_new_skill_is_reported_at_once() -> None:
    with pytest.raises(InvalidRegistryChange) as error:
        new_skill(id="Bad", agent_id="EXCEPTION_AGENT", title="", tool_names=["ghost"], source="custom")
    assert set(error.value.fields) == {"id", "agent_id", "title", "tool_names", "source"}


def test_a_taken_skill_id_is_a_conflict() -> None:
    with pytest.raises(RegistryConflict) as error:
        new_skill(id="sla_guardian")
    assert error.value.code == "SKILL_EXISTS"
    assert list(error.value.details) == ["id"]


def test_a_new_skill_draft_must_be_an_object() -> None:
    with pytest.raises(InvalidRegistryChange) as error:
        plan_new_skill([], agents=AGENTS, known_tools=TOOLS, existing_skill_ids=())  # type: ignore[arg-type]  # a JSON body can be any value
    assert error.value.code == "INVALID_SKILL"


GUARDED_ON = replace(GATED_ON, autonomy_guard=True)


@pytest.mark.parametrize(
    ("agent", "patch", "confirm", "expected"),
    [
        (GUARDED_ON, {"autonomous": False}, None, [("autonomous", True, False)]),
        (replace(GUARDED_ON, autonomous=False), {"autonomous": False}, None, []),
        (GATED_ON, {"autonomous": False}, None, "GUARD_NOT_OPTED_IN"),
        (GUARDED_ON, {"autonomous": True}, None, "GUARD_DEMOTES_ONLY"),
        (replace(GUARDED_ON, autonomous=False), {"autonomous": True}, "EXCEPTION_AGENT", "GUARD_DEMOTES_ONLY"),
        (GUARDED_ON, {"autonomous": 0}, None, "GUARD_DEMOTES_ONLY"),
        (GUARDED_ON, {"model": "claude-opus-5-5"}, None, "GUARD_DEMOTES_ONLY"),
        (GUARDED_ON, {"autonomous": False, "autonomy_guard": False}, None, "GUARD_DEMOTES_ONLY"),
        (GUARDED_ON, {"autonomous": False}, "EXCEPTION_AGENT", "GUARD_DEMOTES_ONLY"),
        (GUARDED_ON, {}, None, "GUARD_DEMOTES_ONLY"),
    ],
)
def test_the_platform_only_ever_switches_a_guarded_agents_autonomy_off(
    agent: Agent, patch: dict[str, Any], confirm: str | None, expected: list[tuple[str, Any, Any]] | str
) -> None:
    if isinstance(expected, str):
        with pytest.raises(PermissionDenied) as error:
            plan_guard_demotion(agent, patch, confirm=confirm)
        assert error.value.code == expected
    else:
        assert plan_guard_demotion(agent, patch, confirm=confirm) == [FieldChange(*change) for change in expected]
