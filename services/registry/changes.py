"""Registry changes made through the API, each in the caller's transaction.

Every change runs the same steps: lock the row, plan the change with the
pure rules, write it, write one audit row per field, and queue the change
notification. The caller commits or rolls back all of it, so a change never
exists without its audit rows and watchers never hear of a change that did
not commit. Each returns the row as stored now and whether anything changed:
the caller asks for a new snapshot only then, and only after the commit.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from sqlalchemy.ext.asyncio import AsyncConnection

from services.registry import rules, store

AUTONOMY_GUARD: Final = store.Actor(sub=rules.AUTONOMY_GUARD_ACTOR, email="")


async def update_skill(
    conn: AsyncConnection, *, skill_id: str, patch: Mapping[str, Any], actor: store.Actor
) -> tuple[store.SkillRow, bool]:
    row = await store.get_skill(conn, skill_id=skill_id, lock=True)
    if row is None:
        raise rules.skill_not_found(skill_id)
    changes = rules.plan_skill_patch(row.skill, patch)
    if changes:
        row = await store.update_skill(conn, row=row, changes=changes, actor=actor)
        await _audit_and_announce(conn, "skill", skill_id, changes, actor)
    return row, bool(changes)


async def update_agent(
    conn: AsyncConnection,
    *,
    agent_id: str,
    patch: Mapping[str, Any],
    confirm: str | None,
    allowed_models: str | None,
    actor: store.Actor | None,
) -> tuple[store.AgentRow, bool]:
    """A person's agent change, or (actor None) the autonomy guard's demotion, audited as it."""
    row = await store.get_agent_row(conn, agent_id=agent_id, lock=True)
    if row is None:
        raise rules.agent_not_found(agent_id, "id")
    if actor is None:
        changes = rules.plan_guard_demotion(row.agent, patch, confirm=confirm)
        actor = AUTONOMY_GUARD
    else:
        changes = rules.plan_agent_patch(row.agent, patch, confirm=confirm, allowed_models=allowed_models)
    if changes:
        row = await store.update_agent(conn, row=row, changes=changes)
        await _audit_and_announce(conn, "agent", agent_id, changes, actor)
    return row, bool(changes)


async def create_skill(conn: AsyncConnection, *, draft: Mapping[str, Any], actor: store.Actor) -> store.SkillRow:
    skill = rules.plan_new_skill(
        draft,
        agents=await store.agents_by_id(conn),
        known_tools=await store.tool_names(conn),
        existing_skill_ids=await store.skill_ids(conn),
    )
    row = await store.insert_skill(conn, skill=skill, updated_by=actor.sub)
    if row is None:
        # Another request created the same id since the check above.
        raise rules.skill_taken(skill.id)
    await _audit_and_announce(conn, "skill", skill.id, [rules.creation_change(skill)], actor)
    return row


async def _audit_and_announce(
    conn: AsyncConnection, entity: str, entity_id: str, changes: list[rules.FieldChange], actor: store.Actor
) -> None:
    await store.insert_audit(conn, entity=entity, entity_id=entity_id, changes=changes, actor=actor)
    await store.announce_change(conn, what=f"{entity}:{entity_id}")
