"""The inventory as typed records: agents, tools, skills and surfaces from seed.json.

The seed is the only place agents and tools come from. It is checked whole
before anything is returned: a seed that names a tool nobody implemented, or a
skill on an agent that does not exist, would put that lie on every screen that
reads the registry, so a bad seed refuses to load rather than half-load.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from pathlib import Path
from typing import Any, Final, TypeVar

from services.registry.rules import (
    PLAYGROUND_EXECUTORS,
    SKILL_ID_PATTERN,
    Agent,
    AgentStatus,
    Executor,
    InvalidRegistryChange,
    Runtime,
    Skill,
    SkillSource,
    Tool,
    ToolKind,
    check_model,
    reconcile_thresholds,
    skill_id_problem,
    validate_thresholds,
    validate_thresholds_schema,
)

SEED_PATH: Final = Path(__file__).with_name("seed.json")

# ─── Who owns each field ───────────────────────────────────────────────────
#
# Code-defined fields describe what the code does; a reseed overwrites them.
# Operator-controlled fields are the operator's decisions; the seed sets them on
# insert only. A reseed that reset `autonomous` or `thresholds` would silently
# undo a decision someone made and audited.

AGENT_KEY: Final = "id"
AGENT_CODE_DEFINED_FIELDS: Final = (
    "name",
    "class_ref",
    "runtime",
    "purpose",
    "wake_on",
    "writes_to",
    "status",
    "status_note",
    "has_autonomy_gate",
)
AGENT_OPERATOR_FIELDS: Final = ("autonomous", "model", "autonomy_guard")

TOOL_KEY: Final = "name"
TOOL_CODE_DEFINED_FIELDS: Final = (
    "description",
    "kind",
    "target",
    "input_schema",
    "implemented_at",
    "owner_agents",
    "executor",
    "base_url_key",
    "http_path",
)
TOOL_OPERATOR_FIELDS: Final = ()

SKILL_KEY: Final = "id"
SKILL_CODE_DEFINED_FIELDS: Final = (
    "agent_id",
    "title",
    "category",
    "description",
    "sample_prompt",
    "source",
    "disabled_reason",
    "thresholds_schema",
    "tool_names",
)
SKILL_OPERATOR_FIELDS: Final = ("enabled", "thresholds")
# Neither side: the store starts it at 1 and bumps it on every operator change.
SKILL_STORE_FIELDS: Final = ("version",)


@dataclass(frozen=True, slots=True)
class Surface:
    """A screen where agents show up, so an operator knows where to look for them."""

    id: str
    name: str
    path: str | None
    description: str
    agent_ids: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Inventory:
    agents: tuple[Agent, ...]
    tools: tuple[Tool, ...]
    skills: tuple[Skill, ...]
    surfaces: tuple[Surface, ...]


class InventoryError(Exception):
    """The seed is unusable; every problem names the record it was found in."""

    def __init__(self, source: str, problems: Sequence[str]) -> None:
        self.source = source
        self.problems = tuple(problems)
        listing = "\n".join(f"  - {problem}" for problem in self.problems)
        super().__init__(f"{source} is not a valid inventory:\n{listing}")


def load_inventory(path: str | os.PathLike[str] | None = None) -> Inventory:
    """Read and check the seed file; the bundled example seed by default."""
    seed_path = Path(path) if path is not None else SEED_PATH
    try:
        text = seed_path.read_text(encoding="utf-8")
    except OSError as error:
        raise InventoryError(str(seed_path), [f"cannot be read: {error.strerror or error}"]) from error
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        raise InventoryError(str(seed_path), [f"is not JSON: {error.msg} at line {error.lineno}"]) from error
    return parse_inventory(document, source=str(seed_path))


def parse_inventory(document: object, *, source: str = "seed") -> Inventory:
    """Check a seed document already parsed from JSON and build the records."""
    problems: list[str] = []
    sections = _sections(document, problems)
    agents = [agent for entry in _listed(sections, "agents") if (agent := _agent(entry, problems))]
    tools = [tool for entry in _listed(sections, "tools") if (tool := _tool(entry, problems))]
    skills = [skill for entry in _listed(sections, "skills") if (skill := _skill(entry, problems))]
    surfaces = [surface for entry in _listed(sections, "surfaces") if (surface := _surface(entry, problems))]
    if problems:
        raise InventoryError(source, problems)
    problems.extend(_integrity_problems(agents, tools, skills, surfaces))
    if problems:
        raise InventoryError(source, problems)
    return Inventory(agents=tuple(agents), tools=tuple(tools), skills=tuple(skills), surfaces=tuple(surfaces))


# ─── Reseeding ─────────────────────────────────────────────────────────────


def reseed_agent(*, stored: Agent, seeded: Agent) -> Agent:
    """The agent a reseed leaves behind: the seed's code-defined fields, the operator's choices."""
    # A gate the code removed takes autonomy with it, and a console agent reads
    # no model; keeping either would show a power the agent no longer has.
    return replace(
        seeded,
        autonomous=stored.autonomous and seeded.has_autonomy_gate,
        model=stored.model if seeded.runtime is Runtime.ENGINE else None,
        autonomy_guard=stored.autonomy_guard,
    )


def reseed_skill(*, stored: Skill, seeded: Skill) -> Skill:
    """The skill a reseed leaves behind: the seed's code-defined fields, the operator's choices."""
    # A disabled_reason the code adds means the skill cannot work; leaving it
    # on would show an all-clear that nothing computed.
    return replace(
        seeded,
        enabled=stored.enabled and not seeded.disabled_reason,
        thresholds=reconcile_thresholds(seeded.thresholds_schema, stored.thresholds),
        version=stored.version,
    )


# ─── Reading records ───────────────────────────────────────────────────────

_SECTIONS: Final = ("agents", "tools", "skills", "surfaces")
_AGENT_ID_PATTERN: Final = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*")
_PLACEHOLDER: Final = re.compile(r"\{([^{}]*)\}")
_JSON_TYPES: Final = frozenset({"string", "integer", "number", "boolean", "object", "array"})
_INPUT_SCHEMA_KEYS: Final = frozenset({"type", "properties", "required", "additionalProperties"})

_Choice = TypeVar("_Choice", bound=StrEnum)


class _Reader:
    """Reads one seed record and notes every problem rather than stopping at the first."""

    def __init__(
        self,
        raw: object,
        *,
        section: str,
        index: int,
        key: str,
        required: Iterable[str],
        optional: Iterable[str] = (),
        problems: list[str],
    ) -> None:
        self._problems = problems
        self._start = len(problems)
        self._raw: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
        name = self._raw.get(key)
        self.label = f"{section[:-1]} {name!r}" if isinstance(name, str) and name else f"{section}[{index}]"
        if not isinstance(raw, Mapping):
            self.fail("must be an object")
            return
        required = tuple(required)
        allowed = set(required) | set(optional)
        unknown = sorted(str(field) for field in raw if field not in allowed)
        if unknown:
            self.fail(f"unknown fields: {', '.join(unknown)}")
        missing = [field for field in required if field not in raw]
        if missing:
            self.fail(f"missing fields: {', '.join(missing)}")

    @property
    def ok(self) -> bool:
        return len(self._problems) == self._start

    def fail(self, problem: str) -> None:
        self._problems.append(f"{self.label}: {problem}")

    def has(self, field: str) -> bool:
        return field in self._raw

    def text(self, field: str) -> str:
        value = self._raw.get(field, "")
        if field in self._raw and (not isinstance(value, str) or not value.strip()):
            self.fail(f"{field} must be non-empty text")
            return ""
        return value if isinstance(value, str) else ""

    def optional_text(self, field: str) -> str | None:
        if self._raw.get(field) is None:
            return None
        return self.text(field)

    def flag(self, field: str) -> bool:
        value = self._raw.get(field, False)
        if not isinstance(value, bool):
            self.fail(f"{field} must be true or false")
            return False
        return value

    def names(self, field: str, *, allow_empty: bool = False) -> tuple[str, ...]:
        value = self._raw.get(field, [])
        if not isinstance(value, list) or not all(isinstance(item, str) and item for item in value):
            self.fail(f"{field} must be a list of names")
            return ()
        if not value and not allow_empty and field in self._raw:
            self.fail(f"{field} must name at least one")
        repeated = sorted({item for item in value if value.count(item) > 1})
        if repeated:
            self.fail(f"{field} repeats {', '.join(repeated)}")
        return tuple(value)

    def choice(self, field: str, enum: type[_Choice]) -> _Choice:
        value = self._raw.get(field)
        members = tuple(enum)
        if field in self._raw and value not in members:
            self.fail(f"{field} must be one of {', '.join(members)}, got {value!r}")
        return enum(value) if value in members else members[0]

    def mapping(self, field: str) -> Mapping[str, Any]:
        value = self._raw.get(field, {})
        if not isinstance(value, Mapping):
            self.fail(f"{field} must be an object")
            return {}
        return value


def _sections(document: object, problems: list[str]) -> Mapping[str, Any]:
    if not isinstance(document, Mapping):
        problems.append("the seed must be an object with agents, tools, skills and surfaces")
        return {}
    unknown = sorted(str(key) for key in document if key not in _SECTIONS)
    if unknown:
        problems.append(f"unknown sections: {', '.join(unknown)}")
    for section in _SECTIONS:
        if not isinstance(document.get(section), list):
            problems.append(f"{section} must be a list")
    return document


def _listed(sections: Mapping[str, Any], section: str) -> Iterable[tuple[str, int, object]]:
    value = sections.get(section)
    items = value if isinstance(value, list) else []
    return ((section, index, raw) for index, raw in enumerate(items))


def _agent(entry: tuple[str, int, object], problems: list[str]) -> Agent | None:
    section, index, raw = entry
    read = _Reader(
        raw,
        section=section,
        index=index,
        key="id",
        required=(
            "id",
            "name",
            "class_ref",
            "runtime",
            "purpose",
            "wake_on",
            "writes_to",
            "status",
            "status_note",
            "has_autonomy_gate",
            "autonomous",
        ),
        optional=("model",),
        problems=problems,
    )
    agent_id = read.text("id")
    if agent_id and not _AGENT_ID_PATTERN.fullmatch(agent_id):
        read.fail("id must be UPPER_SNAKE_CASE")
    agent = Agent(
        id=agent_id,
        name=read.text("name"),
        class_ref=read.text("class_ref"),
        runtime=read.choice("runtime", Runtime),
        purpose=read.text("purpose"),
        wake_on=read.text("wake_on"),
        writes_to=read.text("writes_to"),
        status=read.choice("status", AgentStatus),
        status_note=read.text("status_note"),
        has_autonomy_gate=read.flag("has_autonomy_gate"),
        autonomous=read.flag("autonomous"),
        model=read.optional_text("model"),
    )
    if agent.autonomous and not agent.has_autonomy_gate:
        read.fail("autonomous is true but the agent has no autonomy gate")
    if read.ok and agent.model is not None:
        try:
            check_model(agent, agent.model)
        except InvalidRegistryChange as error:
            read.fail(f"model: {error.fields.get('model', error.message)}")
    return agent if read.ok else None


def _tool(entry: tuple[str, int, object], problems: list[str]) -> Tool | None:
    section, index, raw = entry
    read = _Reader(
        raw,
        section=section,
        index=index,
        key="name",
        required=(
            "name",
            "description",
            "kind",
            "target",
            "input_schema",
            "implemented_at",
            "owner_agents",
            "executor",
        ),
        optional=("base_url_key", "http_path"),
        problems=problems,
    )
    name = read.text("name")
    if name and not SKILL_ID_PATTERN.fullmatch(name):
        read.fail("name must be lowercase snake_case")
    tool = Tool(
        name=name,
        description=read.text("description"),
        kind=read.choice("kind", ToolKind),
        target=read.text("target"),
        input_schema=read.mapping("input_schema"),
        implemented_at=read.text("implemented_at"),
        owner_agents=read.names("owner_agents"),
        executor=read.choice("executor", Executor),
        base_url_key=read.optional_text("base_url_key"),
        http_path=read.optional_text("http_path"),
    )
    if read.ok:
        for problem in _tool_problems(tool):
            read.fail(problem)
    return tool if read.ok else None


def _tool_problems(tool: Tool) -> list[str]:
    problems = _input_schema_problems(tool.input_schema)
    if tool.executor in PLAYGROUND_EXECUTORS and tool.kind is not ToolKind.READ:
        # A playground runs outrider and http tools for real; a write reaching
        # one of them would mutate production from a test prompt.
        problems.append(f"executor {tool.executor} is for read tools only, and this tool is {tool.kind}")
    if tool.executor is Executor.HTTP:
        if not tool.base_url_key or not SKILL_ID_PATTERN.fullmatch(tool.base_url_key):
            problems.append("an http tool needs base_url_key, a lowercase snake_case backend name")
        if not tool.http_path or not tool.http_path.startswith("/"):
            problems.append("an http tool needs http_path, a GET path starting with /")
        else:
            required = tool.input_schema.get("required")
            required = required if isinstance(required, list) else []
            unfilled = [name for name in _PLACEHOLDER.findall(tool.http_path) if name not in required]
            if unfilled:
                problems.append(f"http_path placeholders must be required inputs: {', '.join(unfilled)}")
    elif tool.base_url_key is not None or tool.http_path is not None:
        problems.append("base_url_key and http_path belong to http tools only")
    return problems


def _input_schema_problems(schema: Mapping[str, Any]) -> list[str]:
    problems: list[str] = []
    unknown = sorted(str(key) for key in schema if key not in _INPUT_SCHEMA_KEYS)
    if unknown:
        problems.append(f"input_schema has unknown keys: {', '.join(unknown)}")
    if schema.get("type") != "object":
        problems.append("input_schema type must be object")
    properties = schema.get("properties")
    if not isinstance(properties, Mapping) or not properties:
        problems.append("input_schema needs at least one property")
        properties = {}
    for name, prop in properties.items():
        # The model fills these arguments from the schema alone; a property
        # without a type and a description is an argument it has to guess.
        if (
            not isinstance(prop, Mapping)
            or prop.get("type") not in _JSON_TYPES
            or not isinstance(prop.get("description"), str)
            or not prop["description"].strip()
        ):
            problems.append(f"input_schema property {name!r} needs a JSON type and a description")
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(isinstance(name, str) for name in required):
        problems.append("input_schema required must be a list of property names")
    else:
        undeclared = [name for name in required if name not in properties]
        if undeclared:
            problems.append(f"input_schema requires undeclared properties: {', '.join(undeclared)}")
    return problems


def _skill(entry: tuple[str, int, object], problems: list[str]) -> Skill | None:
    section, index, raw = entry
    read = _Reader(
        raw,
        section=section,
        index=index,
        key="id",
        required=(
            "id",
            "agent_id",
            "title",
            "category",
            "description",
            "sample_prompt",
            "source",
            "enabled",
            "thresholds_schema",
            "tool_names",
        ),
        optional=("disabled_reason", "thresholds"),
        problems=problems,
    )
    skill_id = read.text("id")
    if read.has("id") and (reason := skill_id_problem(skill_id)) is not None:
        read.fail(f"id {reason}")
    source = read.choice("source", SkillSource)
    if source is SkillSource.CUSTOM:
        read.fail("source custom is for skills made through the API; the seed ships engine or console skills")
    enabled = read.flag("enabled")
    disabled_reason = read.optional_text("disabled_reason")
    if enabled == bool(disabled_reason):
        read.fail("a skill ships either enabled, or disabled with a disabled_reason saying why")
    schema: dict[str, dict[str, Any]] = {}
    thresholds: dict[str, Any] = {}
    try:
        schema = validate_thresholds_schema(read.mapping("thresholds_schema"))
        thresholds = validate_thresholds(schema, {}, read.mapping("thresholds"))
    except InvalidRegistryChange as error:
        read.fail(f"{error.message} ({_reasons(error.fields)})")
    skill = Skill(
        id=skill_id,
        agent_id=read.text("agent_id"),
        title=read.text("title"),
        category=read.text("category"),
        description=read.text("description"),
        sample_prompt=read.text("sample_prompt"),
        source=source,
        enabled=enabled,
        disabled_reason=disabled_reason,
        thresholds=thresholds,
        thresholds_schema=schema,
        version=1,
        tool_names=read.names("tool_names"),
    )
    return skill if read.ok else None


def _surface(entry: tuple[str, int, object], problems: list[str]) -> Surface | None:
    section, index, raw = entry
    read = _Reader(
        raw,
        section=section,
        index=index,
        key="id",
        required=("id", "name", "path", "description", "agent_ids"),
        problems=problems,
    )
    surface = Surface(
        id=read.text("id"),
        name=read.text("name"),
        path=read.optional_text("path"),
        description=read.text("description"),
        agent_ids=read.names("agent_ids", allow_empty=True),
    )
    return surface if read.ok else None


def _reasons(details: Mapping[str, Any]) -> str:
    return "; ".join(f"{key}: {reason}" for key, reason in details.items())


# ─── Integrity across records ──────────────────────────────────────────────


def _integrity_problems(
    agents: Sequence[Agent], tools: Sequence[Tool], skills: Sequence[Skill], surfaces: Sequence[Surface]
) -> list[str]:
    problems = [
        *_duplicates("agent", (agent.id for agent in agents)),
        *_duplicates("tool", (tool.name for tool in tools)),
        *_duplicates("skill", (skill.id for skill in skills)),
        *_duplicates("surface", (surface.id for surface in surfaces)),
    ]
    agents_by_id = {agent.id: agent for agent in agents}
    tool_names = {tool.name for tool in tools}

    users: dict[str, set[str]] = {tool.name: set() for tool in tools}
    for skill in skills:
        label = f"skill {skill.id!r}"
        agent = agents_by_id.get(skill.agent_id)
        if agent is None:
            problems.append(f"{label}: agent {skill.agent_id!r} does not exist")
        elif agent.runtime.value != skill.source.value:
            problems.append(
                f"{label}: {skill.source} skills belong to {skill.source} agents, "
                f"and {agent.id} runs in the {agent.runtime}"
            )
        unknown = [name for name in skill.tool_names if name not in tool_names]
        if unknown:
            problems.append(f"{label}: tools do not exist: {', '.join(unknown)}")
        for name in skill.tool_names:
            users.get(name, set()).add(skill.agent_id)

    for tool in tools:
        label = f"tool {tool.name!r}"
        unknown_owners = [owner for owner in tool.owner_agents if owner not in agents_by_id]
        if unknown_owners:
            problems.append(f"{label}: owner agents do not exist: {', '.join(unknown_owners)}")
        # Every tool belongs to a skill, and its owners are exactly the agents
        # whose skills use it. Otherwise "used by" on screen says one thing
        # while the agents' skills do another.
        if not users[tool.name]:
            problems.append(f"{label}: no skill uses it")
        elif set(tool.owner_agents) != users[tool.name]:
            problems.append(
                f"{label}: owner_agents are {', '.join(sorted(tool.owner_agents))}, but the skills "
                f"using it belong to {', '.join(sorted(users[tool.name]))}"
            )

    for surface in surfaces:
        unknown = [agent_id for agent_id in surface.agent_ids if agent_id not in agents_by_id]
        if unknown:
            problems.append(f"surface {surface.id!r}: agents do not exist: {', '.join(unknown)}")
    return problems


def _duplicates(entity: str, keys: Iterable[str]) -> list[str]:
    seen: set[str] = set()
    repeated: list[str] = []
    for key in keys:
        if key in seen and key not in repeated:
            repeated.append(key)
        seen.add(key)
    return [f"{entity} {key!r}: defined more than once" for key in repeated]
