"""Rollout SQL: the rollouts table and its history, on the caller's connection
so a state change, its history point and its audit rows commit together."""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from services.registry.rollouts.rules import (
    ACTIVE_STATES,
    ArmEvidence,
    GuardSettings,
    Rollout,
    RolloutEvent,
    RolloutState,
)
from services.registry.store import Actor


@dataclass(frozen=True, slots=True)
class RolloutRow:
    rollout: Rollout
    created_by: str
    created_at: datetime
    updated_at: datetime
    history: tuple[RolloutEvent, ...] = ()


_COLUMNS = """
    id, agent_id, decision_type, change, baseline, steps, step, percent, state, max_drop, confidence, min_judged,
    control, candidate, p_harm, reason, created_by, created_by_email, created_at, updated_at
"""


def _evidence(stored: Mapping[str, Any] | None) -> ArmEvidence:
    return ArmEvidence(**stored) if stored else ArmEvidence()


def _row(row: Any) -> RolloutRow:
    rollout = Rollout(
        id=str(row.id),
        agent_id=row.agent_id,
        decision_type=row.decision_type,
        change=row.change,
        baseline=row.baseline,
        steps=tuple(row.steps),
        step=row.step,
        percent=row.percent,
        state=RolloutState(row.state),
        guard=GuardSettings(max_drop=row.max_drop, confidence=row.confidence, min_judged=row.min_judged),
        control=_evidence(row.control),
        candidate=_evidence(row.candidate),
        p_harm=row.p_harm,
        reason=row.reason,
    )
    return RolloutRow(
        rollout=rollout,
        created_by=row.created_by_email or row.created_by,
        created_at=row.created_at,
        updated_at=row.updated_at,
    )


async def insert_rollout(conn: AsyncConnection, *, rollout: Rollout, actor: Actor) -> RolloutRow | None:
    """Insert a new rollout; None when its agent and decision type already have a running or paused one.

    The partial unique index decides, not a read before the insert, so two
    creates racing for one (agent, decision type) leave one rollout.
    """
    row = (
        await conn.execute(
            text(
                f"""
                insert into rollouts (id, agent_id, decision_type, change, baseline, steps, step, percent, state,
                                      max_drop, confidence, min_judged, created_by, created_by_email)
                values (:id, :agent_id, :decision_type, cast(:change as jsonb), cast(:baseline as jsonb),
                        cast(:steps as integer[]), :step, :percent, :state, :max_drop, :confidence, :min_judged,
                        :created_by, :created_by_email)
                on conflict (agent_id, decision_type) where state in ('running', 'paused') do nothing
                returning {_COLUMNS}
                """
            ),
            {
                "id": uuid.UUID(rollout.id),
                "agent_id": rollout.agent_id,
                "decision_type": rollout.decision_type,
                "change": json.dumps(dict(rollout.change)),
                "baseline": json.dumps(dict(rollout.baseline)),
                "steps": list(rollout.steps),
                "step": rollout.step,
                "percent": rollout.percent,
                "state": rollout.state.value,
                "max_drop": rollout.guard.max_drop,
                "confidence": rollout.guard.confidence,
                "min_judged": rollout.guard.min_judged,
                "created_by": actor.sub,
                "created_by_email": actor.email,
            },
        )
    ).first()
    return None if row is None else _row(row)


async def active_rollout_id(conn: AsyncConnection, *, agent_id: str, decision_type: str) -> str | None:
    found = (
        await conn.execute(
            text(
                "select id from rollouts where agent_id = :agent_id and decision_type = :decision_type"
                " and state in ('running', 'paused')"
            ),
            {"agent_id": agent_id, "decision_type": decision_type},
        )
    ).scalar_one_or_none()
    return None if found is None else str(found)


async def get_rollout(
    conn: AsyncConnection, *, rollout_id: str, lock: bool = False, history: bool = False
) -> RolloutRow | None:
    """One rollout; `lock` holds its row until the transaction ends, so two verdicts on it queue."""
    try:
        key = uuid.UUID(rollout_id)
    except ValueError:
        return None
    suffix = " for update" if lock else ""
    row = (await conn.execute(text(f"select {_COLUMNS} from rollouts where id = :id{suffix}"), {"id": key})).first()
    if row is None:
        return None
    found = _row(row)
    if not history:
        return found
    return RolloutRow(
        rollout=found.rollout,
        created_by=found.created_by,
        created_at=found.created_at,
        updated_at=found.updated_at,
        history=tuple(await rollout_history(conn, rollout_id=key)),
    )


async def list_rollouts(
    conn: AsyncConnection,
    *,
    agent_id: str | None,
    state: RolloutState | None,
    after: tuple[datetime, uuid.UUID] | None,
    limit: int,
) -> list[RolloutRow]:
    """Newest first, keyset paged on (created_at, id)."""
    clauses: list[str] = []
    params: dict[str, Any] = {"limit": limit}
    if agent_id is not None:
        clauses.append("agent_id = :agent_id")
        params["agent_id"] = agent_id
    if state is not None:
        clauses.append("state = :state")
        params["state"] = state.value
    if after is not None:
        clauses.append("(created_at, id) < (:after_at, :after_id)")
        params["after_at"], params["after_id"] = after
    where = f" where {' and '.join(clauses)}" if clauses else ""
    rows = await conn.execute(
        text(f"select {_COLUMNS} from rollouts{where} order by created_at desc, id desc limit :limit"), params
    )
    return [_row(row) for row in rows]


async def active_rollouts(conn: AsyncConnection) -> list[Rollout]:
    """Every running or paused rollout: what the snapshot carries."""
    rows = await conn.execute(
        text(f"select {_COLUMNS} from rollouts where state = any(cast(:states as text[])) order by id"),
        {"states": sorted(state.value for state in ACTIVE_STATES)},
    )
    return [_row(row).rollout for row in rows]


async def update_rollout(conn: AsyncConnection, *, rollout: Rollout) -> RolloutRow:
    """Write a locked rollout's state, share and evidence, and return it as stored now."""
    row = (
        await conn.execute(
            text(
                f"""
                update rollouts set step = :step, percent = :percent, state = :state,
                       control = cast(:control as jsonb), candidate = cast(:candidate as jsonb), p_harm = :p_harm,
                       reason = :reason, updated_at = now()
                 where id = :id
                returning {_COLUMNS}
                """
            ),
            {
                "id": uuid.UUID(rollout.id),
                "step": rollout.step,
                "percent": rollout.percent,
                "state": rollout.state.value,
                "control": json.dumps(asdict(rollout.control)),
                "candidate": json.dumps(asdict(rollout.candidate)),
                "p_harm": rollout.p_harm,
                "reason": rollout.reason,
            },
        )
    ).one()
    return _row(row)


async def insert_event(conn: AsyncConnection, *, rollout: Rollout, event: str, by: str) -> None:
    await conn.execute(
        text(
            """
            insert into rollout_events (rollout_id, event, percent, p_harm, reason, by)
            values (:rollout_id, :event, :percent, :p_harm, :reason, :by)
            """
        ),
        {
            "rollout_id": uuid.UUID(rollout.id),
            "event": event,
            "percent": rollout.percent,
            "p_harm": rollout.p_harm,
            "reason": rollout.reason,
            "by": by,
        },
    )


async def rollout_history(conn: AsyncConnection, *, rollout_id: uuid.UUID) -> Sequence[RolloutEvent]:
    rows = await conn.execute(
        text("select event, percent, at, by, p_harm, reason from rollout_events where rollout_id = :id order by id"),
        {"id": rollout_id},
    )
    return [
        RolloutEvent(event=row.event, percent=row.percent, at=row.at, by=row.by, p_harm=row.p_harm, reason=row.reason)
        for row in rows
    ]
