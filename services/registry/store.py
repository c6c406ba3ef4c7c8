"""Registry SQL. Functions take an open connection so callers compose them into
one transaction (a write and its audit rows commit together or not at all)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Final

import asyncpg
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from services.registry.inventory import Surface
from services.registry.rules import (
    Agent,
    AgentStatus,
    AppendedChange,
    Executor,
    FieldChange,
    Runtime,
    Skill,
    SkillSource,
    Tool,
    ToolKind,
)

# Every committed change says so on this channel; each replica listens and
# rebuilds its snapshot. NOTIFY is delivered at commit and never for a rolled
# back transaction, so a listener only ever hears about changes that exist.
CHANGE_CHANNEL: Final = "registry_changed"
# The advisory lock every seeding holds (see lock_seeding).
SEED_LOCK: Final = 0x72656764  # "regd"


@dataclass(frozen=True, slots=True)
class Actor:
    """Who made a change; every audit row names a person, not a service."""

    sub: str
    email: str


@dataclass(frozen=True, slots=True)
class AgentRow:
    agent: Agent
    skill_count: int
    tool_count: int


@dataclass(frozen=True, slots=True)
class SkillRow:
    skill: Skill
    updated_by: str
    updated_at: datetime


@dataclass(frozen=True, slots=True)
class AuditRow:
    id: int
    entity: str
    entity_id: str
    field: str
    old: Any
    new: Any
    changed_by: str
    changed_by_email: str
    changed_at: datetime


# ─── Agents ────────────────────────────────────────────────────────────────

_AGENT_FIELDS = """
    a.id, a.name, a.class_ref, a.runtime, a.purpose, a.wake_on, a.writes_to, a.status, a.status_note,
    a.has_autonomy_gate, a.autonomous, a.model, a.autonomy_guard
"""
_AGENT_COUNTS = """
    (select count(*) from skills s where s.agent_id = a.id) as skill_count,
    (select count(distinct st.tool_name) from skills s join skill_tools st on st.skill_id = s.id
      where s.agent_id = a.id) as tool_count
"""


def _agent(row: Any) -> Agent:
    return Agent(
        id=row.id,
        name=row.name,
        class_ref=row.class_ref,
        runtime=Runtime(row.runtime),
        purpose=row.purpose,
        wake_on=row.wake_on,
        writes_to=row.writes_to,
        status=AgentStatus(row.status),
        status_note=row.status_note,
        has_autonomy_gate=row.has_autonomy_gate,
        autonomous=row.autonomous,
        model=row.model,
        autonomy_guard=row.autonomy_guard,
    )


async def list_agents(conn: AsyncConnection) -> list[AgentRow]:
    rows = await conn.execute(text(f"select {_AGENT_FIELDS}, {_AGENT_COUNTS} from agents a order by a.id"))
    return [AgentRow(_agent(row), row.skill_count, row.tool_count) for row in rows]


async def get_agent_row(conn: AsyncConnection, *, agent_id: str, lock: bool = False) -> AgentRow | None:
    """One agent with its counts; `lock` holds its row until the transaction ends, so patches queue."""
    suffix = " for update of a" if lock else ""
    row = (
        await conn.execute(
            text(f"select {_AGENT_FIELDS}, {_AGENT_COUNTS} from agents a where a.id = :id{suffix}"), {"id": agent_id}
        )
    ).first()
    return None if row is None else AgentRow(_agent(row), row.skill_count, row.tool_count)


async def get_agent(conn: AsyncConnection, *, agent_id: str) -> Agent | None:
    row = (await conn.execute(text(f"select {_AGENT_FIELDS} from agents a where a.id = :id"), {"id": agent_id})).first()
    return None if row is None else _agent(row)


async def agents_by_id(conn: AsyncConnection) -> dict[str, Agent]:
    rows = await conn.execute(text(f"select {_AGENT_FIELDS} from agents a order by a.id"))
    return {agent.id: agent for agent in map(_agent, rows)}


async def update_agent(conn: AsyncConnection, *, row: AgentRow, changes: Sequence[FieldChange]) -> AgentRow:
    """Apply planned changes to a locked agent and return it as stored now."""
    values = {change.field: change.new for change in changes}
    _check_columns(values, {"autonomous", "model", "autonomy_guard"})
    assignments = ", ".join(f"{column} = :{column}" for column in values)
    await conn.execute(
        text(f"update agents set {assignments}, updated_at = now() where id = :id"), {**values, "id": row.agent.id}
    )
    return replace(row, agent=replace(row.agent, **values))


async def insert_agent(conn: AsyncConnection, *, agent: Agent) -> None:
    await conn.execute(
        text(
            """
            insert into agents (id, name, class_ref, runtime, purpose, wake_on, writes_to, status, status_note,
                                has_autonomy_gate, autonomous, model, autonomy_guard)
            values (:id, :name, :class_ref, :runtime, :purpose, :wake_on, :writes_to, :status, :status_note,
                    :has_autonomy_gate, :autonomous, :model, :autonomy_guard)
            """
        ),
        _agent_values(agent),
    )


async def replace_agent(conn: AsyncConnection, *, agent: Agent) -> None:
    """Overwrite every column of a stored agent; the caller decides what each field holds."""
    await conn.execute(
        text(
            """
            update agents set name = :name, class_ref = :class_ref, runtime = :runtime, purpose = :purpose,
                   wake_on = :wake_on, writes_to = :writes_to, status = :status, status_note = :status_note,
                   has_autonomy_gate = :has_autonomy_gate, autonomous = :autonomous, model = :model,
                   autonomy_guard = :autonomy_guard, updated_at = now()
             where id = :id
            """
        ),
        _agent_values(agent),
    )


def _agent_values(agent: Agent) -> dict[str, Any]:
    return {
        "id": agent.id,
        "name": agent.name,
        "class_ref": agent.class_ref,
        "runtime": agent.runtime.value,
        "purpose": agent.purpose,
        "wake_on": agent.wake_on,
        "writes_to": agent.writes_to,
        "status": agent.status.value,
        "status_note": agent.status_note,
        "has_autonomy_gate": agent.has_autonomy_gate,
        "autonomous": agent.autonomous,
        "model": agent.model,
        "autonomy_guard": agent.autonomy_guard,
    }


# ─── Tools ─────────────────────────────────────────────────────────────────

_TOOL_FIELDS = """
    t.name, t.description, t.kind, t.target, t.input_schema, t.implemented_at, t.owner_agents, t.executor,
    t.base_url_key, t.http_path
"""


def _tool(row: Any) -> Tool:
    return Tool(
        name=row.name,
        description=row.description,
        kind=ToolKind(row.kind),
        target=row.target,
        input_schema=row.input_schema,
        implemented_at=row.implemented_at,
        owner_agents=tuple(row.owner_agents),
        executor=Executor(row.executor),
        base_url_key=row.base_url_key,
        http_path=row.http_path,
    )


async def list_tools(
    conn: AsyncConnection, *, kind: str | None = None, names: Iterable[str] | None = None
) -> list[Tool]:
    clauses: list[str] = []
    params: dict[str, Any] = {}
    if kind is not None:
        clauses.append("t.kind = :kind")
        params["kind"] = kind
    if names is not None:
        clauses.append("t.name = any(cast(:names as text[]))")
        params["names"] = list(names)
    where = f" where {' and '.join(clauses)}" if clauses else ""
    rows = await conn.execute(text(f"select {_TOOL_FIELDS} from tools t{where} order by t.name"), params)
    return [_tool(row) for row in rows]


async def tool_names(conn: AsyncConnection) -> set[str]:
    return set((await conn.execute(text("select name from tools"))).scalars())


async def tool_users(conn: AsyncConnection) -> dict[str, set[str]]:
    """For each tool, the agents whose skills use it: the agents that decide whether it waits for a human."""
    rows = await conn.execute(
        text("select st.tool_name, s.agent_id from skill_tools st join skills s on s.id = st.skill_id")
    )
    users: dict[str, set[str]] = {}
    for row in rows:
        users.setdefault(row.tool_name, set()).add(row.agent_id)
    return users


async def upsert_tool(conn: AsyncConnection, *, tool: Tool) -> bool:
    """Insert a tool or overwrite its columns; True when a row was written.

    Every tool field is code-defined, so the seed always wins; a row already
    equal to the seed is left alone so its updated_at keeps meaning something.
    """
    result = await conn.execute(
        text(
            """
            insert into tools (name, description, kind, target, input_schema, implemented_at, owner_agents,
                               executor, base_url_key, http_path)
            values (:name, :description, :kind, :target, cast(:input_schema as jsonb), :implemented_at,
                    cast(:owner_agents as text[]), :executor, :base_url_key, :http_path)
            on conflict (name) do update set
                description = excluded.description, kind = excluded.kind, target = excluded.target,
                input_schema = excluded.input_schema, implemented_at = excluded.implemented_at,
                owner_agents = excluded.owner_agents, executor = excluded.executor,
                base_url_key = excluded.base_url_key, http_path = excluded.http_path, updated_at = now()
            where (tools.description, tools.kind, tools.target, tools.input_schema, tools.implemented_at,
                   tools.owner_agents, tools.executor, tools.base_url_key, tools.http_path)
                  is distinct from
                  (excluded.description, excluded.kind, excluded.target, excluded.input_schema,
                   excluded.implemented_at, excluded.owner_agents, excluded.executor, excluded.base_url_key,
                   excluded.http_path)
            """
        ),
        {
            "name": tool.name,
            "description": tool.description,
            "kind": tool.kind.value,
            "target": tool.target,
            "input_schema": json.dumps(tool.input_schema),
            "implemented_at": tool.implemented_at,
            "owner_agents": list(tool.owner_agents),
            "executor": tool.executor.value,
            "base_url_key": tool.base_url_key,
            "http_path": tool.http_path,
        },
    )
    return result.rowcount > 0


# ─── Skills ────────────────────────────────────────────────────────────────

_SKILL_FIELDS = """
    s.id, s.agent_id, s.title, s.category, s.description, s.sample_prompt, s.source, s.enabled,
    s.disabled_reason, s.thresholds, s.thresholds_schema, s.version, s.updated_by, s.updated_at
"""
_SKILL_TOOLS = """
    array(select st.tool_name from skill_tools st where st.skill_id = s.id
          order by st.position, st.tool_name) as tool_names
"""


def _skill_row(row: Any, tools: Sequence[str]) -> SkillRow:
    skill = Skill(
        id=row.id,
        agent_id=row.agent_id,
        title=row.title,
        category=row.category,
        description=row.description,
        sample_prompt=row.sample_prompt,
        source=SkillSource(row.source),
        enabled=row.enabled,
        disabled_reason=row.disabled_reason,
        thresholds=row.thresholds,
        thresholds_schema=row.thresholds_schema,
        version=row.version,
        tool_names=tuple(tools),
    )
    return SkillRow(skill=skill, updated_by=row.updated_by, updated_at=row.updated_at)


async def list_skills(conn: AsyncConnection, *, agent_id: str | None = None) -> list[SkillRow]:
    where = " where s.agent_id = :agent_id" if agent_id is not None else ""
    rows = await conn.execute(
        text(f"select {_SKILL_FIELDS}, {_SKILL_TOOLS} from skills s{where} order by s.agent_id, s.id"),
        {"agent_id": agent_id} if agent_id is not None else {},
    )
    return [_skill_row(row, row.tool_names) for row in rows]


async def get_skill(conn: AsyncConnection, *, skill_id: str, lock: bool = False) -> SkillRow | None:
    """One skill; `lock` holds its row until the transaction ends.

    The lock is what makes the version check honest: without it two patches
    could both read version 3, both pass, and both write version 4.
    """
    if lock:
        row = (
            await conn.execute(
                text(f"select {_SKILL_FIELDS} from skills s where s.id = :id for update"), {"id": skill_id}
            )
        ).first()
        if row is None:
            return None
        names = (
            await conn.execute(
                text("select tool_name from skill_tools where skill_id = :id order by position, tool_name"),
                {"id": skill_id},
            )
        ).scalars()
        return _skill_row(row, list(names))
    row = (
        await conn.execute(
            text(f"select {_SKILL_FIELDS}, {_SKILL_TOOLS} from skills s where s.id = :id"), {"id": skill_id}
        )
    ).first()
    return None if row is None else _skill_row(row, row.tool_names)


async def skill_ids(conn: AsyncConnection) -> set[str]:
    return set((await conn.execute(text("select id from skills"))).scalars())


async def insert_skill(conn: AsyncConnection, *, skill: Skill, updated_by: str) -> SkillRow | None:
    """Insert a new skill and its tool links; None when the id is already taken."""
    stamp = (
        await conn.execute(
            text(
                """
                insert into skills (id, agent_id, title, category, description, sample_prompt, source, enabled,
                                    disabled_reason, thresholds, thresholds_schema, version, updated_by)
                values (:id, :agent_id, :title, :category, :description, :sample_prompt, :source, :enabled,
                        :disabled_reason, cast(:thresholds as jsonb), cast(:thresholds_schema as jsonb), :version,
                        :updated_by)
                on conflict (id) do nothing
                returning updated_at
                """
            ),
            {**_skill_values(skill), "updated_by": updated_by},
        )
    ).scalar_one_or_none()
    if stamp is None:
        return None
    await set_skill_tools(conn, skill_id=skill.id, tool_names=skill.tool_names)
    return SkillRow(skill=skill, updated_by=updated_by, updated_at=stamp)


async def replace_skill(conn: AsyncConnection, *, skill: Skill, updated_by: str | None = None) -> None:
    """Overwrite every column of a stored skill and its tool links; the caller decides each value."""
    await conn.execute(
        text(
            """
            update skills set agent_id = :agent_id, title = :title, category = :category,
                   description = :description, sample_prompt = :sample_prompt, source = :source,
                   enabled = :enabled, disabled_reason = :disabled_reason,
                   thresholds = cast(:thresholds as jsonb), thresholds_schema = cast(:thresholds_schema as jsonb),
                   version = :version, updated_by = coalesce(:updated_by, updated_by), updated_at = now()
             where id = :id
            """
        ),
        {**_skill_values(skill), "updated_by": updated_by},
    )
    await set_skill_tools(conn, skill_id=skill.id, tool_names=skill.tool_names)


def _skill_values(skill: Skill) -> dict[str, Any]:
    return {
        "id": skill.id,
        "agent_id": skill.agent_id,
        "title": skill.title,
        "category": skill.category,
        "description": skill.description,
        "sample_prompt": skill.sample_prompt,
        "source": skill.source.value,
        "enabled": skill.enabled,
        "disabled_reason": skill.disabled_reason,
        "thresholds": json.dumps(dict(skill.thresholds)),
        "thresholds_schema": json.dumps(dict(skill.thresholds_schema)),
        "version": skill.version,
    }


async def set_skill_tools(conn: AsyncConnection, *, skill_id: str, tool_names: Sequence[str]) -> None:
    await conn.execute(
        text("delete from skill_tools where skill_id = :id and not (tool_name = any(cast(:names as text[])))"),
        {"id": skill_id, "names": list(tool_names)},
    )
    await conn.execute(
        text(
            """
            insert into skill_tools (skill_id, tool_name, position)
            select :id, name, ordinality::int from unnest(cast(:names as text[])) with ordinality as t(name)
            on conflict (skill_id, tool_name) do update set position = excluded.position
            where skill_tools.position is distinct from excluded.position
            """
        ),
        {"id": skill_id, "names": list(tool_names)},
    )


async def update_skill(
    conn: AsyncConnection, *, row: SkillRow, changes: Sequence[FieldChange], actor: Actor
) -> SkillRow:
    """Apply planned changes to a locked skill, bump its version, and return the skill as stored now."""
    values = {change.field: change.new for change in changes}
    _check_columns(values, {"enabled", "thresholds"})
    assignments = []
    params: dict[str, Any] = {"id": row.skill.id, "updated_by": actor.sub}
    if "enabled" in values:
        assignments.append("enabled = :enabled")
        params["enabled"] = values["enabled"]
    if "thresholds" in values:
        assignments.append("thresholds = cast(:thresholds as jsonb)")
        params["thresholds"] = json.dumps(values["thresholds"])
    result = await conn.execute(
        text(
            f"""
            update skills set {", ".join(assignments)}, version = version + 1, updated_by = :updated_by,
                   updated_at = now()
             where id = :id
            returning version, updated_at
            """
        ),
        params,
    )
    stored = result.one()
    skill = replace(row.skill, version=stored.version, **values)
    return SkillRow(skill=skill, updated_by=actor.sub, updated_at=stored.updated_at)


# ─── Surfaces ──────────────────────────────────────────────────────────────


async def list_surfaces(conn: AsyncConnection, *, agent_id: str | None = None) -> list[Surface]:
    where = " where :agent_id = any(agent_ids)" if agent_id is not None else ""
    rows = await conn.execute(
        text(f"select id, name, path, description, agent_ids from surfaces{where} order by id"),
        {"agent_id": agent_id} if agent_id is not None else {},
    )
    return [
        Surface(id=row.id, name=row.name, path=row.path, description=row.description, agent_ids=tuple(row.agent_ids))
        for row in rows
    ]


async def upsert_surface(conn: AsyncConnection, *, surface: Surface) -> bool:
    result = await conn.execute(
        text(
            """
            insert into surfaces (id, name, path, description, agent_ids)
            values (:id, :name, :path, :description, cast(:agent_ids as text[]))
            on conflict (id) do update set
                name = excluded.name, path = excluded.path, description = excluded.description,
                agent_ids = excluded.agent_ids
            where (surfaces.name, surfaces.path, surfaces.description, surfaces.agent_ids)
                  is distinct from (excluded.name, excluded.path, excluded.description, excluded.agent_ids)
            """
        ),
        {
            "id": surface.id,
            "name": surface.name,
            "path": surface.path,
            "description": surface.description,
            "agent_ids": list(surface.agent_ids),
        },
    )
    return result.rowcount > 0


# ─── Audit ─────────────────────────────────────────────────────────────────


async def insert_audit(
    conn: AsyncConnection, *, entity: str, entity_id: str, changes: Sequence[FieldChange], actor: Actor
) -> None:
    """One row per changed field, stamped by the database clock in the writing transaction."""
    if not changes:
        return
    await conn.execute(
        text(
            """
            insert into audit (entity, entity_id, field, old, new, changed_by, changed_by_email)
            select :entity, :entity_id, field, old, new, :changed_by, :changed_by_email
              from jsonb_to_recordset(cast(:changes as jsonb)) as c(field text, old jsonb, new jsonb)
            """
        ),
        {
            "entity": entity,
            "entity_id": entity_id,
            "changes": json.dumps(
                [{"field": change.field, "old": _plain(change.old), "new": _plain(change.new)} for change in changes]
            ),
            "changed_by": actor.sub,
            "changed_by_email": actor.email,
        },
    )


async def append_audit(conn: AsyncConnection, *, change: AppendedChange, actor: Actor) -> AuditRow:
    """Keep one change another context made; the row its request id already has, when it has one.

    The unique request id decides, not a prior read: two appends racing
    with one id still leave one row.
    """
    params = {
        "request_id": change.request_id,
        "entity": change.entity,
        "entity_id": change.entity_id,
        "field": change.change.field,
        "old": _jsonb_text(change.change.old),
        "new": _jsonb_text(change.change.new),
        "changed_by": actor.sub,
        "changed_by_email": actor.email,
    }
    row = (
        await conn.execute(
            text(
                f"""
                insert into audit (request_id, entity, entity_id, field, old, new, changed_by, changed_by_email)
                values (:request_id, :entity, :entity_id, :field, cast(:old as jsonb), cast(:new as jsonb),
                        :changed_by, :changed_by_email)
                on conflict (request_id) do nothing
                returning {_AUDIT_COLUMNS}
                """
            ),
            params,
        )
    ).first()
    if row is None:
        # The first append has committed by now (the insert waited for it).
        row = (
            await conn.execute(
                text(f"select {_AUDIT_COLUMNS} from audit where request_id = :request_id"),
                {"request_id": change.request_id},
            )
        ).one()
    return _audit(row)


async def list_audit(
    conn: AsyncConnection,
    *,
    entity: str | None = None,
    entity_id: str | None = None,
    actor: str | None = None,
    changed_from: datetime | None = None,
    changed_to: datetime | None = None,
    before_id: int | None = None,
    limit: int,
) -> list[AuditRow]:
    """Newest first, keyset paged on the row id: stable while new rows arrive."""
    clauses: list[str] = []
    params: dict[str, Any] = {"limit": limit}
    if actor is not None:
        # An operator knows a colleague by email, a script by sub: either names them.
        clauses.append("(changed_by = :actor or changed_by_email = :actor)")
        params["actor"] = actor
    if entity is not None:
        clauses.append("entity = :entity")
        params["entity"] = entity
    if entity_id is not None:
        clauses.append("entity_id = :entity_id")
        params["entity_id"] = entity_id
    if changed_from is not None:
        clauses.append("changed_at >= :changed_from")
        params["changed_from"] = changed_from
    if changed_to is not None:
        clauses.append("changed_at < :changed_to")
        params["changed_to"] = changed_to
    if before_id is not None:
        clauses.append("id < :before_id")
        params["before_id"] = before_id
    where = f" where {' and '.join(clauses)}" if clauses else ""
    rows = await conn.execute(
        text(f"select {_AUDIT_COLUMNS} from audit{where} order by id desc limit :limit"),
        params,
    )
    return [_audit(row) for row in rows]


_AUDIT_COLUMNS = "id, entity, entity_id, field, old, new, changed_by, changed_by_email, changed_at"


def _audit(row: Any) -> AuditRow:
    return AuditRow(
        id=row.id,
        entity=row.entity,
        entity_id=row.entity_id,
        field=row.field,
        # The driver hands jsonb over decoded (SQLAlchemy installs a json
        # codec on every connection): a string value is the value, never JSON
        # text to read again.
        old=row.old,
        new=row.new,
        changed_by=row.changed_by,
        changed_by_email=row.changed_by_email,
        changed_at=row.changed_at,
    )


# ─── Change notification ───────────────────────────────────────────────────


async def announce_change(conn: AsyncConnection, *, what: str) -> None:
    """Queue a notification that fires when (and only if) this transaction commits."""
    await conn.execute(text("select pg_notify(:channel, :what)"), {"channel": CHANGE_CHANNEL, "what": what[:200]})


async def listen_for_changes(conn: asyncpg.Connection[Any], on_change: Callable[[], None]) -> None:
    """Call `on_change` for every committed change this connection hears of.

    A dedicated asyncpg connection, not one of the engine's pool: a LISTEN
    lasts only as long as its connection, and a pooled one is handed back.
    """

    def heard(_conn: object, _pid: int, _channel: str, _payload: object) -> None:
        on_change()

    await conn.add_listener(CHANGE_CHANNEL, heard)


async def keep_alive(conn: asyncpg.Connection[Any]) -> None:
    """A query as cheap as any: on a half-open socket it fails, where waiting would not."""
    await conn.fetchval("select 1")


async def lock_seeding(conn: AsyncConnection) -> None:
    """Hold the seed lock until the transaction ends.

    Two replicas starting at once both seed; the second waits here and then
    finds every row already in place.
    """
    await conn.execute(text("select pg_advisory_xact_lock(:key)"), {"key": SEED_LOCK})


def _check_columns(values: Mapping[str, Any], allowed: set[str]) -> None:
    # Column names are interpolated into SQL; only a fixed set may ever reach it.
    unexpected = set(values) - allowed
    if unexpected:
        raise ValueError(f"not a patchable column: {', '.join(sorted(unexpected))}")


def _jsonb_text(value: Any) -> str | None:
    # None is no value (SQL null, as insert_audit stores it), not JSON's null.
    return None if value is None else json.dumps(_plain(value))


def _plain(value: Any) -> Any:
    return dict(value) if isinstance(value, Mapping) else value
