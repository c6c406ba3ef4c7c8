"""The example inventory: what the seed holds, and what the loader refuses."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

import pytest

from services.registry.inventory import (
    AGENT_CODE_DEFINED_FIELDS,
    AGENT_KEY,
    AGENT_OPERATOR_FIELDS,
    SEED_PATH,
    SKILL_CODE_DEFINED_FIELDS,
    SKILL_KEY,
    SKILL_OPERATOR_FIELDS,
    SKILL_STORE_FIELDS,
    TOOL_CODE_DEFINED_FIELDS,
    TOOL_KEY,
    TOOL_OPERATOR_FIELDS,
    Inventory,
    InventoryError,
    load_inventory,
    parse_inventory,
    reseed_agent,
    reseed_skill,
)
from services.registry.rules import (
    PLAYGROUND_EXECUTORS,
    Agent,
    AgentStatus,
    Executor,
    Runtime,
    Skill,
    Tool,
    ToolKind,
    validate_thresholds,
    validate_thresholds_schema,
)

NO_DATA_SKILLS = ("high_value_cod", "cash_exposure", "rider_battery_safety")
REVIEW_ONLY_TOOLS = {
    "assign_riders",
    "escalate_sla_breach",
    "hold_cod_handover",
    "send_rider_to_charge",
    "divert_hub_intake",
    "request_cash_deposit",
}


@pytest.fixture(scope="module")
def inventory() -> Inventory:
    return load_inventory()


@pytest.fixture(scope="module")
def agents(inventory: Inventory) -> dict[str, Agent]:
    return {agent.id: agent for agent in inventory.agents}


@pytest.fixture(scope="module")
def tools(inventory: Inventory) -> dict[str, Tool]:
    return {tool.name: tool for tool in inventory.tools}


@pytest.fixture(scope="module")
def skills(inventory: Inventory) -> dict[str, Skill]:
    return {skill.id: skill for skill in inventory.skills}


def seed_document() -> dict[str, Any]:
    return json.loads(SEED_PATH.read_text(encoding="utf-8"))


SEED_SKILLS = [entry["id"] for entry in seed_document()["skills"]]
SEED_SKILLS_WITH_THRESHOLDS = [entry["id"] for entry in seed_document()["skills"] if entry["thresholds_schema"]]


# ─── What the seed holds ───────────────────────────────────────────────────


def test_inventory_counts(inventory: Inventory) -> None:
    counts = (len(inventory.agents), len(inventory.tools), len(inventory.skills), len(inventory.surfaces))
    assert counts == (11, 24, 15, 4)


@pytest.mark.parametrize(
    ("agent_id", "runtime", "status"),
    [
        ("JARVIS", Runtime.ENGINE, AgentStatus.PARTIAL),
        ("DISPATCH_AGENT", Runtime.ENGINE, AgentStatus.LIVE),
        ("EXCEPTION_AGENT", Runtime.ENGINE, AgentStatus.LIVE),
        ("EXPRESS_DISPATCH_AGENT", Runtime.ENGINE, AgentStatus.LIVE),
        ("CUSTOMER_AGENT", Runtime.ENGINE, AgentStatus.LIVE),
        ("ORDER_AGENT", Runtime.ENGINE, AgentStatus.BROKEN),
        ("HUB_AGENT", Runtime.ENGINE, AgentStatus.SIMULATION),
        ("FLEET_AGENT", Runtime.ENGINE, AgentStatus.SIMULATION),
        ("ROUTE_OPTIMIZER", Runtime.ENGINE, AgentStatus.SIMULATION),
        ("CONSOLE_ASSISTANT", Runtime.CONSOLE, AgentStatus.LIVE),
        ("CONSOLE_OPS_AGENT", Runtime.CONSOLE, AgentStatus.LIVE),
    ],
)
def test_each_agent_carries_its_runtime_and_badge(
    agents: dict[str, Agent], agent_id: str, runtime: Runtime, status: AgentStatus
) -> None:
    agent = agents[agent_id]
    assert (agent.runtime, agent.status) == (runtime, status)
    assert agent.status_note and agent.purpose and agent.wake_on and agent.class_ref


def test_autonomy_gates_exist_on_three_agents_and_all_start_off(agents: dict[str, Agent]) -> None:
    gated = {agent.id for agent in agents.values() if agent.has_autonomy_gate}
    assert gated == {"DISPATCH_AGENT", "EXCEPTION_AGENT", "EXPRESS_DISPATCH_AGENT"}
    assert not any(agent.autonomous for agent in agents.values())
    assert all(agent.model is None for agent in agents.values())


def test_no_data_skills_and_dispatch_rebalance_ship_disabled_with_a_reason(skills: dict[str, Skill]) -> None:
    disabled = {skill.id for skill in skills.values() if not skill.enabled}
    assert disabled == {*NO_DATA_SKILLS, "dispatch_rebalance"}
    for skill_id in NO_DATA_SKILLS:
        reason = skills[skill_id].disabled_reason
        assert reason is not None and reason.startswith("No data")
    assert "endpoint" in (skills["dispatch_rebalance"].disabled_reason or "")
    assert all(skill.disabled_reason is None for skill in skills.values() if skill.enabled)


def test_find_precedents_reads_decision_memory_for_the_two_judged_skills(
    tools: dict[str, Tool], skills: dict[str, Skill]
) -> None:
    tool = tools["find_precedents"]
    assert (tool.kind, tool.executor) == (ToolKind.READ, Executor.OUTRIDER)
    assert set(tool.input_schema["properties"]) == {"decision_type", "context", "k"}
    assert set(tool.input_schema["required"]) == {"decision_type", "context"}
    linked = {skill.id for skill in skills.values() if "find_precedents" in skill.tool_names}
    assert linked == {"stall_response", "assignment_failure_triage"}
    assert set(tool.owner_agents) == {"EXCEPTION_AGENT", "DISPATCH_AGENT"}


@pytest.mark.parametrize(
    "name",
    [
        "record_agent_decision",
        "lookup_order",
        "lookup_miler",
        "open_add_skill_training",
        "open_add_training",
        "query_learning_analytics",
        "ask_question",
    ],
)
def test_tools_the_plan_left_out_are_not_seeded(tools: dict[str, Tool], name: str) -> None:
    assert name not in tools


def test_console_ops_tools_are_the_proposal_verbs(tools: dict[str, Tool]) -> None:
    ops_tools = {tool.name for tool in tools.values() if "CONSOLE_OPS_AGENT" in tool.owner_agents}
    assert {"scan_bookings", "notify_riders", *REVIEW_ONLY_TOOLS} <= ops_tools
    labelled = {tool.name for tool in tools.values() if tool.description.startswith("REVIEW ONLY:")}
    assert labelled == REVIEW_ONLY_TOOLS
    assert all(tools[name].kind is not ToolKind.READ for name in REVIEW_ONLY_TOOLS)


def test_only_read_tools_are_executable_outside_the_engine_and_console(tools: dict[str, Tool]) -> None:
    executable = {tool.name for tool in tools.values() if tool.executor in PLAYGROUND_EXECUTORS}
    assert executable == {
        "find_precedents",
        "get_booking_cache",
        "list_express_bookings",
        "list_express_riders",
        "scan_bookings",
    }
    assert all(tools[name].kind is ToolKind.READ for name in executable)
    assert {tool.name for tool in tools.values() if tool.executor is Executor.LLM} == {
        "decide_stall_response",
        "decide_assignment_failure",
    }


def test_http_tools_name_their_backend_and_a_fillable_get_path(tools: dict[str, Tool]) -> None:
    http_tools = [tool for tool in tools.values() if tool.executor is Executor.HTTP]
    assert http_tools
    for tool in http_tools:
        assert tool.base_url_key == "doormile_api"
        assert tool.http_path and tool.http_path.startswith("/")
        assert set(re.findall(r"\{(\w+)\}", tool.http_path)) <= set(tool.input_schema["required"])
    assert tools["get_booking_cache"].http_path == "/bookings/cache/{booking_id}"
    assert all(
        tool.base_url_key is None and tool.http_path is None
        for tool in tools.values()
        if tool.executor is not Executor.HTTP
    )


@pytest.mark.parametrize("skill_id", SEED_SKILLS_WITH_THRESHOLDS)
def test_every_threshold_default_validates_against_its_schema(skills: dict[str, Skill], skill_id: str) -> None:
    skill = skills[skill_id]
    schema = dict(skill.thresholds_schema)
    defaults = {key: spec["default"] for key, spec in schema.items()}
    assert validate_thresholds_schema(schema) == schema
    assert validate_thresholds(schema, {}, defaults) == defaults
    assert dict(skill.thresholds) == defaults


@pytest.mark.parametrize(
    ("skill_id", "keys"),
    [
        ("stall_response", {"stallMinutes", "reassignConfidence"}),
        ("assignment_failure_triage", {"realertEvery"}),
        ("express_batch_dispatch", {"maxPerRider", "maxRadiusKm", "loadPenaltyKm"}),
        ("sla_guardian", {"warnMinutesBeforeDue"}),
        ("doorstep_stall", {"stallMinutes"}),
        ("fleet_balancer", {"maxBookingsPerRider"}),
        ("high_value_cod", {"codAmountInr"}),
        ("rider_battery_safety", {"minBatteryPercent"}),
        ("hub_congestion", {"maxQueuedAtHub"}),
        ("late_dispatch", {"unassignedMinutes"}),
        ("cash_exposure", {"maxCashPerRiderInr"}),
    ],
)
def test_tunable_skills_expose_the_keys_their_agents_read(
    skills: dict[str, Skill], skill_id: str, keys: set[str]
) -> None:
    assert set(skills[skill_id].thresholds_schema) == keys


def test_stall_reassignment_confidence_defaults_to_the_engine_bar(skills: dict[str, Skill]) -> None:
    assert skills["stall_response"].thresholds["reassignConfidence"] == 0.7


@pytest.mark.parametrize("skill_id", SEED_SKILLS)
def test_each_skill_matches_its_agent_runtime_and_starts_at_version_one(
    agents: dict[str, Agent], skills: dict[str, Skill], skill_id: str
) -> None:
    skill = skills[skill_id]
    assert skill.source.value == agents[skill.agent_id].runtime.value
    assert skill.version == 1
    assert skill.title and skill.description and skill.sample_prompt


def test_console_ops_agent_owns_the_eight_monitoring_skills(skills: dict[str, Skill]) -> None:
    monitoring = {skill.id for skill in skills.values() if skill.category == "monitoring"}
    assert monitoring == {
        "sla_guardian",
        "doorstep_stall",
        "fleet_balancer",
        "high_value_cod",
        "rider_battery_safety",
        "hub_congestion",
        "late_dispatch",
        "cash_exposure",
    }
    assert {skills[skill_id].agent_id for skill_id in monitoring} == {"CONSOLE_OPS_AGENT"}


def test_surfaces_are_the_four_screens(inventory: Inventory) -> None:
    paths = {surface.id: surface.path for surface in inventory.surfaces}
    assert paths == {
        "home": "/doormile/home",
        "control_x": "/doormile/control-x",
        "agents": "/doormile/agents",
        "ops_banner": None,
    }


# ─── Who owns each field ───────────────────────────────────────────────────


@pytest.mark.parametrize(
    ("record", "key", "code_defined", "operator", "store"),
    [
        (Agent, AGENT_KEY, AGENT_CODE_DEFINED_FIELDS, AGENT_OPERATOR_FIELDS, ()),
        (Tool, TOOL_KEY, TOOL_CODE_DEFINED_FIELDS, TOOL_OPERATOR_FIELDS, ()),
        (Skill, SKILL_KEY, SKILL_CODE_DEFINED_FIELDS, SKILL_OPERATOR_FIELDS, SKILL_STORE_FIELDS),
    ],
)
def test_every_field_has_exactly_one_owner(
    record: type, key: str, code_defined: tuple[str, ...], operator: tuple[str, ...], store: tuple[str, ...]
) -> None:
    groups = [(key,), code_defined, operator, store]
    flat = [name for group in groups for name in group]
    assert len(flat) == len(set(flat))
    assert set(flat) == {item.name for item in fields(record)}


def test_operator_controlled_fields_are_the_five_switches() -> None:
    assert {*AGENT_OPERATOR_FIELDS, *TOOL_OPERATOR_FIELDS, *SKILL_OPERATOR_FIELDS} == {
        "autonomous",
        "autonomy_guard",
        "model",
        "enabled",
        "thresholds",
    }


def test_reseeding_an_agent_keeps_the_operators_choices(agents: dict[str, Agent]) -> None:
    seeded = agents["EXCEPTION_AGENT"]
    stored = replace(seeded, autonomous=True, model="claude-opus-5-5", autonomy_guard=True, purpose="old purpose")
    assert reseed_agent(stored=stored, seeded=seeded) == replace(
        seeded, autonomous=True, model="claude-opus-5-5", autonomy_guard=True
    )


def test_reseeding_drops_autonomy_and_model_the_code_no_longer_supports(agents: dict[str, Agent]) -> None:
    stored = replace(agents["EXCEPTION_AGENT"], autonomous=True, model="claude-opus-5-5")
    seeded = replace(agents["EXCEPTION_AGENT"], has_autonomy_gate=False, runtime=Runtime.CONSOLE)
    result = reseed_agent(stored=stored, seeded=seeded)
    assert (result.autonomous, result.model) == (False, None)


def test_reseeding_a_skill_keeps_switch_thresholds_and_version(skills: dict[str, Skill]) -> None:
    seeded = skills["stall_response"]
    stored = replace(
        seeded, enabled=False, thresholds={"stallMinutes": 15, "reassignConfidence": 0.9}, version=7, title="Old title"
    )
    result = reseed_skill(stored=stored, seeded=seeded)
    assert result == replace(
        seeded, enabled=False, thresholds={"stallMinutes": 15, "reassignConfidence": 0.9}, version=7
    )


def test_reseeding_a_skill_fits_thresholds_to_a_changed_schema_and_honours_a_new_reason(
    skills: dict[str, Skill],
) -> None:
    stored = replace(skills["stall_response"], thresholds={"stallMinutes": 15, "reassignConfidence": 0.9, "old": 1})
    schema = {
        **stored.thresholds_schema,
        "reassignConfidence": {"type": "number", "min": 0.5, "max": 0.8, "step": 0.05, "default": 0.7},
    }
    seeded = replace(stored, thresholds_schema=schema, disabled_reason="No data: tracking feed removed")
    result = reseed_skill(stored=stored, seeded=seeded)
    assert result.thresholds == {"stallMinutes": 15, "reassignConfidence": 0.7}
    assert result.enabled is False


# ─── What the loader refuses ───────────────────────────────────────────────


def _find(document: dict[str, Any], section: str, key: str, value: str) -> dict[str, Any]:
    return next(entry for entry in document[section] if entry[key] == value)


def _skill(document: dict[str, Any], skill_id: str) -> dict[str, Any]:
    return _find(document, "skills", "id", skill_id)


def _tool(document: dict[str, Any], name: str) -> dict[str, Any]:
    return _find(document, "tools", "name", name)


def _agent(document: dict[str, Any], agent_id: str) -> dict[str, Any]:
    return _find(document, "agents", "id", agent_id)


Mutation = Callable[[dict[str, Any]], object]

BROKEN_SEEDS: list[tuple[str, Mutation, str]] = [
    (
        "skill on a missing agent",
        lambda d: _skill(d, "ops_briefing").update(agent_id="GHOST_AGENT"),
        "skill 'ops_briefing': agent 'GHOST_AGENT' does not exist",
    ),
    (
        "skill with a missing tool",
        lambda d: _skill(d, "ops_briefing")["tool_names"].append("ghost_tool"),
        "skill 'ops_briefing': tools do not exist: ghost_tool",
    ),
    (
        "duplicate agent",
        lambda d: d["agents"].append(copy.deepcopy(_agent(d, "HUB_AGENT"))),
        "agent 'HUB_AGENT': defined more than once",
    ),
    (
        "duplicate skill",
        lambda d: d["skills"].append(copy.deepcopy(_skill(d, "ops_briefing"))),
        "skill 'ops_briefing': defined more than once",
    ),
    (
        "duplicate tool",
        lambda d: d["tools"].append(copy.deepcopy(_tool(d, "scan_bookings"))),
        "tool 'scan_bookings': defined more than once",
    ),
    (
        "threshold outside its schema",
        lambda d: _skill(d, "stall_response").update(thresholds={"stallMinutes": 500}),
        "skill 'stall_response': thresholds refused",
    ),
    (
        "schema default out of range",
        lambda d: _skill(d, "late_dispatch")["thresholds_schema"]["unassignedMinutes"].update(default=500),
        "skill 'late_dispatch': thresholds_schema refused",
    ),
    (
        "bad skill id",
        lambda d: _skill(d, "ops_briefing").update(id="Ops-Briefing"),
        "skill 'Ops-Briefing': id must be lowercase snake_case",
    ),
    (
        "unknown agent field",
        lambda d: _agent(d, "JARVIS").update(colour="blue"),
        "agent 'JARVIS': unknown fields: colour",
    ),
    (
        "missing tool field",
        lambda d: _tool(d, "scan_bookings").pop("kind"),
        "tool 'scan_bookings': missing fields: kind",
    ),
    ("bad status", lambda d: _agent(d, "JARVIS").update(status="sleeping"), "agent 'JARVIS': status must be one of"),
    (
        "lowercase agent id",
        lambda d: _agent(d, "JARVIS").update(id="jarvis"),
        "agent 'jarvis': id must be UPPER_SNAKE_CASE",
    ),
    (
        "autonomy without a gate",
        lambda d: _agent(d, "JARVIS").update(autonomous=True),
        "agent 'JARVIS': autonomous is true but the agent has no autonomy gate",
    ),
    (
        "model on a console agent",
        lambda d: _agent(d, "CONSOLE_OPS_AGENT").update(model="claude-opus-5-5"),
        "agent 'CONSOLE_OPS_AGENT': model: only engine agents read a model",
    ),
    (
        "owner not using the tool",
        lambda d: _tool(d, "scan_bookings")["owner_agents"].append("JARVIS"),
        "tool 'scan_bookings': owner_agents are CONSOLE_OPS_AGENT, JARVIS",
    ),
    (
        "owner missing for a user",
        lambda d: _tool(d, "notify_customer").update(owner_agents=["EXCEPTION_AGENT"]),
        "but the skills using it belong to CUSTOMER_AGENT, EXCEPTION_AGENT",
    ),
    (
        "owner that does not exist",
        lambda d: _tool(d, "scan_bookings")["owner_agents"].append("GHOST_AGENT"),
        "tool 'scan_bookings': owner agents do not exist: GHOST_AGENT",
    ),
    (
        "tool no skill uses",
        lambda d: _skill(d, "dispatch_rebalance").update(tool_names=["scan_bookings"]),
        "tool 'rebalance_riders': no skill uses it",
    ),
    (
        "http tool without a backend",
        lambda d: _tool(d, "get_booking_cache").pop("base_url_key"),
        "tool 'get_booking_cache': an http tool needs base_url_key",
    ),
    (
        "http path with an unfillable placeholder",
        lambda d: _tool(d, "get_booking_cache").update(http_path="/bookings/{tenant_id}/{booking_id}"),
        "http_path placeholders must be required inputs: tenant_id",
    ),
    (
        "http fields on an engine tool",
        lambda d: _tool(d, "nearby_milers").update(http_path="/milers/nearby"),
        "tool 'nearby_milers': base_url_key and http_path belong to http tools only",
    ),
    (
        "write tool a playground could run",
        lambda d: _tool(d, "reassign_booking").update(executor="outrider"),
        "tool 'reassign_booking': executor outrider is for read tools only",
    ),
    (
        "input property without a description",
        lambda d: _tool(d, "scan_bookings")["input_schema"]["properties"]["status"].pop("description"),
        "input_schema property 'status' needs a JSON type and a description",
    ),
    (
        "input schema requiring an undeclared property",
        lambda d: _tool(d, "scan_bookings")["input_schema"]["required"].append("tenant_id"),
        "input_schema requires undeclared properties: tenant_id",
    ),
    (
        "enabled with a disabled reason",
        lambda d: _skill(d, "high_value_cod").update(enabled=True),
        "skill 'high_value_cod': a skill ships either enabled, or disabled with a disabled_reason",
    ),
    (
        "disabled without a reason",
        lambda d: _skill(d, "ops_briefing").update(enabled=False),
        "skill 'ops_briefing': a skill ships either enabled, or disabled with a disabled_reason",
    ),
    (
        "custom skill in the seed",
        lambda d: _skill(d, "ops_briefing").update(source="custom"),
        "skill 'ops_briefing': source custom is for skills made through the API",
    ),
    (
        "engine skill on a console agent",
        lambda d: _skill(d, "stall_response").update(agent_id="CONSOLE_OPS_AGENT"),
        "skill 'stall_response': engine skills belong to engine agents, and CONSOLE_OPS_AGENT runs in the console",
    ),
    (
        "surface naming a missing agent",
        lambda d: d["surfaces"][0]["agent_ids"].append("GHOST_AGENT"),
        "surface 'home': agents do not exist: GHOST_AGENT",
    ),
    ("unknown section", lambda d: d.update(workflows=[]), "unknown sections: workflows"),
    ("section not a list", lambda d: d.update(tools={}), "tools must be a list"),
    ("record not an object", lambda d: d["agents"].append("JARVIS"), "agents[11]: must be an object"),
]


@pytest.mark.parametrize(
    ("mutate", "fragment"), [case[1:] for case in BROKEN_SEEDS], ids=[case[0] for case in BROKEN_SEEDS]
)
def test_a_broken_seed_is_refused_naming_the_record(mutate: Mutation, fragment: str) -> None:
    document = seed_document()
    mutate(document)
    with pytest.raises(InventoryError) as error:
        parse_inventory(document, source="test seed")
    assert any(fragment in problem for problem in error.value.problems), error.value.problems
    assert str(error.value).startswith("test seed is not a valid inventory")


def test_every_problem_in_a_seed_is_reported_together() -> None:
    document = seed_document()
    _agent(document, "JARVIS").update(status="sleeping")
    _tool(document, "scan_bookings").update(kind="delete")
    with pytest.raises(InventoryError) as error:
        parse_inventory(document)
    assert len(error.value.problems) == 2


def test_a_seed_that_is_not_an_object_is_refused() -> None:
    with pytest.raises(InventoryError) as error:
        parse_inventory([])
    assert "must be an object" in error.value.problems[0]


def test_load_reads_a_seed_from_a_given_path(tmp_path: Path) -> None:
    path = tmp_path / "seed.json"
    path.write_text(SEED_PATH.read_text(encoding="utf-8"), encoding="utf-8")
    assert load_inventory(path) == load_inventory()


@pytest.mark.parametrize(("content", "fragment"), [(None, "cannot be read"), ("{ not json", "is not JSON")])
def test_an_unreadable_seed_file_is_refused(tmp_path: Path, content: str | None, fragment: str) -> None:
    path = tmp_path / "seed.json"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    with pytest.raises(InventoryError) as error:
        load_inventory(path)
    assert error.value.source == str(path)
    assert fragment in error.value.problems[0]
