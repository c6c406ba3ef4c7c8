"""Playground SQL: run admissions for the rate limit, and stored traces.

A run's row is written when it is admitted (`start_run`), grows by one step
per tool call (`record_step`) and takes its end last (`finish_run`), so a
run cut short keeps what it did. Functions take an open connection so
callers choose the transaction.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from services.common.retention import oldest_first


@dataclass(frozen=True, slots=True)
class Admission:
    admitted: bool
    # Seconds until the oldest admission in the window leaves it; 0 when admitted.
    retry_after_s: float


@dataclass(frozen=True, slots=True)
class RunRow:
    id: uuid.UUID
    agent_id: str
    skill_id: str
    model: str
    prompt: str
    turns: int
    input_tokens: int
    output_tokens: int
    total_ms: int
    final_text: str
    stop_reason: str
    error: str
    steps: list[dict[str, Any]]
    step_count: int
    created_by: str
    created_by_email: str
    created_at: datetime
    # Counts of replaced values per kind; never the values.
    redactions: dict[str, int]
    # running | finished (rules.RUNNING, rules.FINISHED).
    status: str


async def admit(conn: AsyncConnection, *, user_sub: str, limit: int, window_s: int) -> Admission:
    """Count the user's admissions in the window and add one if under the limit.

    Call inside a transaction. The advisory lock, keyed by user, makes the
    count and the insert one step across every replica: without it two
    requests could both count nine and both be let in.
    """
    await conn.execute(
        text("select pg_advisory_xact_lock(hashtextextended('playground.admit:' || :sub, 0))"), {"sub": user_sub}
    )
    window = {"sub": user_sub, "window": window_s}
    # What has left the window can never count again.
    await conn.execute(
        text(
            "delete from run_admissions where user_sub = :sub"
            " and admitted_at <= clock_timestamp() - make_interval(secs => :window)"
        ),
        window,
    )
    row = (
        await conn.execute(
            text(
                "select count(*) as used,"
                " extract(epoch from min(admitted_at) + make_interval(secs => :window) - clock_timestamp()) as wait"
                " from run_admissions where user_sub = :sub"
            ),
            window,
        )
    ).one()
    if row.used >= limit:
        return Admission(admitted=False, retry_after_s=max(0.0, float(row.wait or 0.0)))
    await conn.execute(
        text("insert into run_admissions (user_sub, admitted_at) values (:sub, clock_timestamp())"), {"sub": user_sub}
    )
    return Admission(admitted=True, retry_after_s=0.0)


async def start_run(conn: AsyncConnection, *, row: RunRow) -> None:
    """Store a run as it starts (status running); `finish_run` writes its end."""
    await conn.execute(
        text(
            """
            insert into runs (id, agent_id, skill_id, model, prompt, turns, input_tokens, output_tokens, total_ms,
                              final_text, stop_reason, error, steps, created_by, created_by_email, created_at,
                              redactions, status)
            values (:id, :agent_id, :skill_id, :model, :prompt, :turns, :input_tokens, :output_tokens, :total_ms,
                    :final_text, :stop_reason, :error, cast(:steps as jsonb), :created_by, :created_by_email,
                    :created_at, cast(:redactions as jsonb), :status)
            """
        ),
        {
            "id": row.id,
            "agent_id": row.agent_id,
            "skill_id": row.skill_id,
            "model": row.model,
            "prompt": row.prompt,
            "turns": row.turns,
            "input_tokens": row.input_tokens,
            "output_tokens": row.output_tokens,
            "total_ms": row.total_ms,
            "final_text": row.final_text,
            "stop_reason": row.stop_reason,
            "error": row.error,
            "steps": json.dumps(row.steps),
            "created_by": row.created_by,
            "created_by_email": row.created_by_email,
            "created_at": row.created_at,
            "redactions": json.dumps(row.redactions),
            "status": row.status,
        },
    )


@dataclass(frozen=True, slots=True)
class UnauditedRun:
    """A stored run its audit row is not yet kept for: what the row says of it."""

    id: uuid.UUID
    agent_id: str
    skill_id: str
    model: str


async def unaudited_runs(conn: AsyncConnection, *, created_by: str, limit: int) -> list[UnauditedRun]:
    """This person's runs still without their audit row, oldest first."""
    rows = await conn.execute(
        text(
            """
            select id, agent_id, skill_id, model from runs
             where created_by = :created_by and audited_at is null
             order by created_at, id
             limit :limit
            """
        ),
        {"created_by": created_by, "limit": limit},
    )
    return [UnauditedRun(id=row.id, agent_id=row.agent_id, skill_id=row.skill_id, model=row.model) for row in rows]


async def run_audited(conn: AsyncConnection, *, id: uuid.UUID) -> None:
    """The registry keeps the run's audit row."""
    await conn.execute(
        text("update runs set audited_at = now() where id = :id and audited_at is null"),
        {"id": id},
    )


async def record_step(
    conn: AsyncConnection,
    *,
    id: uuid.UUID,
    step: dict[str, Any],
    turns: int,
    input_tokens: int,
    output_tokens: int,
    redactions: dict[str, int],
) -> None:
    """Add one step to a running run, with what the run has used so far.

    The step is appended, not the list rewritten: a run's steps are written
    once each, however many it takes.
    """
    await conn.execute(
        text(
            """
            update runs set steps = steps || jsonb_build_array(cast(:step as jsonb)), turns = :turns,
                            input_tokens = :input_tokens, output_tokens = :output_tokens,
                            redactions = cast(:redactions as jsonb)
            where id = :id and status = 'running'
            """
        ),
        {
            "id": id,
            "step": json.dumps(step),
            "turns": turns,
            "input_tokens": input_tokens,
            "output_tokens": output_tokens,
            "redactions": json.dumps(redactions),
        },
    )


async def finish_run(conn: AsyncConnection, *, row: RunRow) -> None:
    """Write a run's end: every step it took, how it stopped, status finished.

    The whole list of steps is written again, so the stored trace is the
    run's trace even where a step's own write was cut off.
    """
    await conn.execute(
        text(
            """
            update runs set model = :model, turns = :turns, input_tokens = :input_tokens,
                            output_tokens = :output_tokens, total_ms = :total_ms, final_text = :final_text,
                            stop_reason = :stop_reason, error = :error, steps = cast(:steps as jsonb),
                            redactions = cast(:redactions as jsonb), status = :status
            where id = :id
            """
        ),
        {
            "id": row.id,
            "model": row.model,
            "turns": row.turns,
            "input_tokens": row.input_tokens,
            "output_tokens": row.output_tokens,
            "total_ms": row.total_ms,
            "final_text": row.final_text,
            "stop_reason": row.stop_reason,
            "error": row.error,
            "steps": json.dumps(row.steps),
            "redactions": json.dumps(row.redactions),
            "status": row.status,
        },
    )


_COLUMNS = """
    id, agent_id, skill_id, model, prompt, turns, input_tokens, output_tokens, total_ms, final_text,
    stop_reason, error, jsonb_array_length(steps) as step_count, created_by, created_by_email, created_at,
    redactions, status
"""


async def get_run(conn: AsyncConnection, *, id: uuid.UUID) -> RunRow | None:
    row = (await conn.execute(text(f"select {_COLUMNS}, steps from runs where id = :id"), {"id": id})).one_or_none()
    if row is None:
        return None
    return RunRow(**_json_columns(dict(row._mapping)))


async def list_runs(conn: AsyncConnection, *, after: tuple[datetime, uuid.UUID] | None, limit: int) -> list[RunRow]:
    """Newest first, without their steps (GetRun has those)."""
    where = ""
    params: dict[str, Any] = {"limit": limit}
    if after is not None:
        where = "where (created_at, id) < (:at, :id)"
        params.update(at=after[0], id=after[1])
    rows = await conn.execute(
        text(f"select {_COLUMNS} from runs {where} order by created_at desc, id desc limit :limit"), params
    )
    return [RunRow(**_json_columns({**row._mapping, "steps": []})) for row in rows]


def _json_columns(values: dict[str, Any]) -> dict[str, Any]:
    # A text() query leaves jsonb as the driver hands it over: a string.
    for column in ("steps", "redactions"):
        if isinstance(values[column], str):
            values[column] = json.loads(values[column])
    return values


_PRUNE_RUNS = oldest_first("runs", "created_at")
_PRUNE_ADMISSIONS = oldest_first("run_admissions", "admitted_at")


async def prune_runs(conn: AsyncConnection, *, before: datetime, limit: int) -> int:
    """Delete up to `limit` runs created before `before`, oldest first, steps and all."""
    return (await conn.execute(_PRUNE_RUNS, {"before": before, "limit": limit})).rowcount


async def prune_admissions(conn: AsyncConnection, *, before: datetime, limit: int) -> int:
    """Delete up to `limit` admissions made before `before`.

    `admit` clears a person's own old admissions when they next run; these
    are the ones of people who never came back.
    """
    return (await conn.execute(_PRUNE_ADMISSIONS, {"before": before, "limit": limit})).rowcount
