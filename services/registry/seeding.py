"""Loading the inventory into the registry: `outrider seed`, and a registry's first start.

Upsert by id. Code-defined fields take the seed's value on every run, so the
registry always describes the code that is deployed. Operator-controlled
fields (enabled, thresholds, autonomous, model) are written on insert only:
a reseed that reset them would silently undo a decision someone made and
audited. The one exception is a value the new code can no longer honour
(autonomy without a gate, a threshold the schema now refuses); the reseed
fits it, bumps the skill's version and audits the change as the seed's.

Running it twice writes nothing the second time: rows already equal to what
the seed would make are left alone, updated_at included.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Final

from sqlalchemy.ext.asyncio import AsyncConnection

from services.common.db import context_engine, migrate, wait_reachable
from services.registry import store
from services.registry.inventory import (
    AGENT_OPERATOR_FIELDS,
    SKILL_OPERATOR_FIELDS,
    Inventory,
    load_inventory,
    reseed_agent,
    reseed_skill,
)
from services.registry.rules import Agent, FieldChange, Skill
from services.registry.store import Actor

SEED_ACTOR: Final = Actor(sub="seed", email="")


async def seed(conn: AsyncConnection, inventory: Inventory) -> dict[str, int]:
    """Bring the registry in line with the inventory inside the caller's transaction.

    Returns how many of each entity the inventory holds.
    """
    await store.lock_seeding(conn)
    changed = False

    stored_agents = await store.agents_by_id(conn)
    for agent in inventory.agents:
        stored = stored_agents.get(agent.id)
        if stored is None:
            await store.insert_agent(conn, agent=agent)
            changed = True
            continue
        target = reseed_agent(stored=stored, seeded=agent)
        if target != stored:
            await store.replace_agent(conn, agent=target)
            await store.insert_audit(
                conn,
                entity="agent",
                entity_id=agent.id,
                changes=_changes(stored, target, AGENT_OPERATOR_FIELDS),
                actor=SEED_ACTOR,
            )
            changed = True

    for tool in inventory.tools:
        changed |= await store.upsert_tool(conn, tool=tool)

    stored_skills = {row.skill.id: row.skill for row in await store.list_skills(conn)}
    for skill in inventory.skills:
        stored_skill = stored_skills.get(skill.id)
        if stored_skill is None:
            await store.insert_skill(conn, skill=skill, updated_by=SEED_ACTOR.sub)
            changed = True
            continue
        target_skill = reseed_skill(stored=stored_skill, seeded=skill)
        operator_changes = _changes(stored_skill, target_skill, SKILL_OPERATOR_FIELDS)
        if operator_changes:
            # An engine holding the old version must not overwrite the fitted values.
            target_skill = replace(target_skill, version=stored_skill.version + 1)
        if target_skill != stored_skill:
            await store.replace_skill(conn, skill=target_skill, updated_by=SEED_ACTOR.sub if operator_changes else None)
            await store.insert_audit(
                conn, entity="skill", entity_id=skill.id, changes=operator_changes, actor=SEED_ACTOR
            )
            changed = True

    for surface in inventory.surfaces:
        changed |= await store.upsert_surface(conn, surface=surface)

    if changed:
        await store.announce_change(conn, what="seed")
    return {
        "agents": len(inventory.agents),
        "tools": len(inventory.tools),
        "skills": len(inventory.skills),
        "surfaces": len(inventory.surfaces),
    }


async def seed_if_empty(conn: AsyncConnection, inventory: Inventory) -> dict[str, int] | None:
    """Seed a registry that holds no agents yet (its first start); None when it already has some.

    Only the first start seeds by itself. Afterwards the registry belongs to
    its operators and to `outrider seed`, run when a release changes the
    inventory: a start-up that silently rewrote rows would make a restart a
    change nobody asked for.
    """
    await store.lock_seeding(conn)
    if await store.agents_by_id(conn):
        return None
    return await seed(conn, inventory)


def _changes(stored: Agent | Skill, target: Agent | Skill, operator_fields: tuple[str, ...]) -> list[FieldChange]:
    """The operator-controlled fields a reseed had to change, for the audit trail."""
    return [
        FieldChange(name, getattr(stored, name), getattr(target, name))
        for name in operator_fields
        if getattr(stored, name) != getattr(target, name)
    ]


async def seed_registry(database_url: str, inventory: Inventory | None = None) -> dict[str, int]:
    """Migrate the registry schema and load the inventory (the bundled example by default)."""
    engine = context_engine(database_url, "registry", pool_size=1, max_overflow=0)
    try:
        await wait_reachable(engine)
        await migrate(engine, "registry")
        async with engine.begin() as conn:
            return await seed(conn, inventory if inventory is not None else load_inventory())
    finally:
        await engine.dispose()
