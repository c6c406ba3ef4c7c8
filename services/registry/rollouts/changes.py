"""Rollout changes, each in the caller's transaction: plan with the pure
rules, write the rollout, its history point and its audit rows, and queue the
change notification when the snapshot's part of it moved.

Completing a rollout writes its change through the same functions the direct
PATCH uses (services.registry.changes), so the baseline it leaves is audited
and announced exactly as an operator's edit would be.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from sqlalchemy.ext.asyncio import AsyncConnection

from services.registry import changes, store
from services.registry.rollouts import rules
from services.registry.rollouts import store as rollout_store
from services.registry.rollouts.store import RolloutRow
from services.registry.rules import agent_not_found

GUARD: Final = store.Actor(sub=rules.GUARD_ACTOR, email="")
DRAFT_FIELDS: Final = frozenset({"agent_id", "decision_type", "change", "steps", "guard"})


@dataclass(frozen=True, slots=True)
class RolloutDraft:
    """A rollout as requested; `unknown` are fields sent that a rollout has no place for."""

    agent_id: str
    decision_type: str
    change: Any
    steps: Sequence[int]
    guard: Mapping[str, Any] | None
    unknown: Sequence[str] = ()


async def create_rollout(
    conn: AsyncConnection, *, draft: RolloutDraft, allowed_models: str | None, actor: store.Actor
) -> RolloutRow:
    if draft.unknown:
        raise rules.InvalidRollout(
            f"rollout refused: {', '.join(draft.unknown)}",
            fields={
                name: f"unknown field (a rollout takes: {', '.join(sorted(DRAFT_FIELDS))})" for name in draft.unknown
            },
        )
    decision_type = rules.check_decision_type(draft.decision_type)
    steps = rules.rollout_steps(draft.steps)
    guard = rules.guard_settings(draft.guard)
    agent = await store.get_agent(conn, agent_id=draft.agent_id)
    if agent is None:
        raise agent_not_found(draft.agent_id, "agent_id")
    skill = None
    if isinstance(draft.change, Mapping) and isinstance(draft.change.get("skill_id"), str):
        found = await store.get_skill(conn, skill_id=draft.change["skill_id"])
        skill = None if found is None else found.skill
    planned = rules.plan_change(draft.change, agent=agent, skill=skill, allowed_models=allowed_models)
    started = rules.new_rollout(
        rollout_id=str(uuid.uuid4()),
        agent_id=agent.id,
        decision_type=decision_type,
        planned=planned,
        steps=steps,
        guard=guard,
    )
    row = await rollout_store.insert_rollout(conn, rollout=started.rollout, actor=actor)
    if row is None:
        existing = await rollout_store.active_rollout_id(conn, agent_id=agent.id, decision_type=decision_type)
        raise rules.rollout_exists(agent.id, decision_type, existing)
    await _record(conn, started, actor)
    return await _found(conn, row.rollout.id)


async def act(
    conn: AsyncConnection, *, rollout_id: str, action: str, reason: str, actor: store.Actor
) -> tuple[RolloutRow, bool]:
    """A person's pause, resume or abort; True when the snapshot must be rebuilt."""
    row = await _found(conn, rollout_id, lock=True)
    step = {"pause": rules.pause, "resume": rules.resume, "abort": rules.abort}[action]
    moved = step(row.rollout, rules.check_reason(reason))
    return await _apply(conn, moved, actor), moved.rollout.percent != row.rollout.percent


async def judge(
    conn: AsyncConnection, *, rollout_id: str, judgement: rules.Judgement, allowed_models: str | None
) -> tuple[RolloutRow, bool]:
    """The guard's verdict; True when the snapshot must be rebuilt (the share or the baseline moved)."""
    row = await _found(conn, rollout_id, lock=True)
    moved = rules.judge(row.rollout, judgement)
    if moved.rollout.state is rules.RolloutState.COMPLETED:
        await _make_baseline(conn, moved.rollout, allowed_models)
    announce = moved.rollout.state is not row.rollout.state or moved.rollout.percent != row.rollout.percent
    return await _apply(conn, moved, GUARD), announce


async def _make_baseline(conn: AsyncConnection, rollout: rules.Rollout, allowed_models: str | None) -> None:
    kind, patch, skill_id = rules.completion_patch(rollout.change)
    if kind is rules.ChangeKind.SKILL and skill_id is not None:
        await changes.update_skill(conn, skill_id=skill_id, patch=patch, actor=GUARD)
        return
    await changes.update_agent(
        conn,
        agent_id=rollout.agent_id,
        patch=patch,
        confirm=rollout.agent_id,
        allowed_models=allowed_models,
        actor=GUARD,
    )


async def _apply(conn: AsyncConnection, moved: rules.Transition, actor: store.Actor) -> RolloutRow:
    # An observation that found what the rollout already holds writes nothing.
    if moved.event is not None:
        await rollout_store.update_rollout(conn, rollout=moved.rollout)
        await _record(conn, moved, actor)
    return await _found(conn, moved.rollout.id)


async def _found(conn: AsyncConnection, rollout_id: str, *, lock: bool = False) -> RolloutRow:
    """The rollout, locked for a change or as it stands now with its history; NOT_FOUND when there is none."""
    found = await rollout_store.get_rollout(conn, rollout_id=rollout_id, lock=lock, history=not lock)
    if found is None:
        raise rules.rollout_not_found(rollout_id)
    return found


async def _record(conn: AsyncConnection, moved: rules.Transition, actor: store.Actor) -> None:
    if moved.event is not None:
        await rollout_store.insert_event(conn, rollout=moved.rollout, event=moved.event, by=actor.email or actor.sub)
    if moved.audit:
        await store.insert_audit(conn, entity="rollout", entity_id=moved.rollout.id, changes=moved.audit, actor=actor)
        await store.announce_change(conn, what=f"rollout:{moved.rollout.id}")
