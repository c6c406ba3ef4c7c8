"""Decision memory SQL. Functions take an open connection so callers compose
them into one transaction (an outcome and its history row commit together)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pgvector import Vector
from pgvector.asyncpg import register_vector
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from services.decisions.queries import PENDING, PageKey
from services.decisions.rules import NewDecision

# The predicate of the partial HNSW index, spelled exactly as in the
# migration: the planner proves an index usable only when the query's WHERE
# implies the index's, and a parameter ($1 = any(...)) proves nothing.
JUDGED = "outcome in ('success', 'failure')"


class ConnectionLost(Exception):
    """The database connection died mid-statement; a fresh one may succeed."""


@dataclass(frozen=True, slots=True)
class DecisionRow:
    id: uuid.UUID
    decision_type: str
    agent_id: str
    subject_id: str
    action: str
    confidence: float
    reasoning: str | None
    model: str | None
    decided_at: datetime
    outcome: str | None
    outcome_reason: str | None
    judged_at: datetime | None
    judged_by: str | None
    # Read by precedent search only: the admin listing and outcome answers
    # never carry it.
    context: Mapping[str, Any] | None = None
    similarity: float | None = None


@dataclass(frozen=True, slots=True)
class PendingRow:
    id: uuid.UUID
    decision_type: str
    subject_id: str
    decided_at: datetime
    model: str | None


@dataclass(frozen=True, slots=True)
class OutcomeCountRow:
    decision_type: str
    outcome: str | None
    model: str | None
    count: int


@dataclass(frozen=True, slots=True)
class OutcomeChangeRow:
    old_outcome: str | None
    new_outcome: str
    reason: str | None
    judged_by: str
    changed_by: str
    changed_by_email: str
    judged_at: datetime


@dataclass(frozen=True, slots=True)
class Verdict:
    id: uuid.UUID
    outcome: str
    reason: str | None


_COLUMNS = """
    id, decision_type, agent_id, subject_id, action, confidence, reasoning, model,
    decided_at, outcome, outcome_reason, judged_at, judged_by
"""


async def _binary_vectors(conn: AsyncConnection) -> None:
    # Vectors travel in pgvector's binary form: formatting 384 floats as text
    # and parsing them back costs more than the graph walk it feeds. The
    # codec is registered once per database connection, before the first
    # statement with a vector parameter is prepared on it.
    if not conn.info.get("vector_codec"):
        raw = await conn.get_raw_connection()
        await register_vector(raw.driver_connection)
        conn.info["vector_codec"] = True


def _decision(row: Any) -> DecisionRow:
    return DecisionRow(**row._mapping)


async def embedding_dimension(conn: AsyncConnection) -> int:
    """The vector size the schema was created with (fixed at first migration)."""
    value = await conn.scalar(
        text(
            "select atttypmod from pg_attribute"
            " where attrelid = 'decisions'::regclass and attname = 'embedding'"
        )
    )
    return int(value)


async def insert_decision(
    conn: AsyncConnection, *, decision: NewDecision, id: uuid.UUID, embedding: Sequence[float]
) -> bool:
    """Store a decision; False when that id is already stored (a retry)."""
    await _binary_vectors(conn)
    created = await conn.scalar(
        text(
            """
            insert into decisions (id, decision_type, agent_id, subject_id, context, action,
                                   confidence, reasoning, model, embedding, decided_at)
            values (:id, :decision_type, :agent_id, :subject_id, cast(:context as jsonb), :action,
                    :confidence, :reasoning, :model, cast(:embedding as vector), :decided_at)
            on conflict (id) do nothing
            returning id
            """
        ),
        {
            "id": id,
            "decision_type": decision.decision_type,
            "agent_id": decision.agent_id,
            "subject_id": decision.subject_id,
            "context": json.dumps(decision.context),
            "action": decision.action,
            "confidence": decision.confidence,
            "reasoning": decision.reasoning,
            "model": decision.model,
            "embedding": Vector(list(embedding)),
            "decided_at": decision.decided_at,
        },
    )
    return created is not None


async def get_decision(conn: AsyncConnection, *, id: uuid.UUID, lock: bool = False) -> DecisionRow | None:
    row = (
        await conn.execute(
            text(f"select {_COLUMNS} from decisions where id = :id{' for update' if lock else ''}"),
            {"id": id},
        )
    ).first()
    return _decision(row) if row is not None else None


async def get_embedding(conn: AsyncConnection, *, id: uuid.UUID) -> list[float] | None:
    # As a plain float array, so the read needs no vector codec on this connection.
    return await conn.scalar(text("select embedding::real[] from decisions where id = :id"), {"id": id})


async def outcome_history(conn: AsyncConnection, *, decision_id: uuid.UUID) -> list[OutcomeChangeRow]:
    """Every outcome change of one decision, oldest first."""
    rows = await conn.execute(
        text(
            """
            select old_outcome, new_outcome, reason, judged_by, changed_by, changed_by_email, judged_at
              from outcome_history where decision_id = :id order by id
            """
        ),
        {"id": decision_id},
    )
    return [OutcomeChangeRow(**row._mapping) for row in rows]


async def set_outcome(
    conn: AsyncConnection,
    *,
    id: uuid.UUID,
    old_outcome: str | None,
    outcome: str,
    reason: str | None,
    judged_by: str,
    changed_by: str = "",
    changed_by_email: str = "",
) -> DecisionRow:
    """Judge one decision and keep the change; the caller holds its row lock."""
    row = (
        await conn.execute(
            text(
                f"""
                update decisions
                   set outcome = :outcome, outcome_reason = :reason, judged_at = now(), judged_by = :judged_by
                 where id = :id
                returning {_COLUMNS}
                """
            ),
            {"id": id, "outcome": outcome, "reason": reason, "judged_by": judged_by},
        )
    ).one()
    await conn.execute(
        text(
            """
            insert into outcome_history (decision_id, old_outcome, new_outcome, reason, judged_by,
                                         changed_by, changed_by_email, judged_at)
            values (:id, :old, :new, :reason, :judged_by, :changed_by, :changed_by_email, :judged_at)
            """
        ),
        {
            "id": id,
            "old": old_outcome,
            "new": outcome,
            "reason": reason,
            "judged_by": judged_by,
            "changed_by": changed_by,
            "changed_by_email": changed_by_email,
            "judged_at": row.judged_at,
        },
    )
    return _decision(row)


async def set_pending_outcomes(
    conn: AsyncConnection, *, verdicts: Sequence[Verdict], judged_by: str
) -> list[uuid.UUID]:
    """Judge many decisions in one statement, only those still pending.

    The rows are locked first, in id order, skipping any another judge holds:
    two sweeps with overlapping batches would otherwise lock in whatever
    order each plan visits rows and deadlock. A skipped decision is the other
    judge's to judge, so none is judged twice and each id comes back to
    exactly one caller.
    """
    if not verdicts:
        return []
    rows = await conn.execute(
        text(
            """
            with verdict as (
                select * from unnest(cast(:ids as uuid[]), cast(:outcomes as text[]), cast(:reasons as text[]))
                       as v(id, outcome, reason)
            ), locked as (
                select d.id from decisions d join verdict on verdict.id = d.id
                 where d.outcome is null
                 order by d.id
                   for update of d skip locked
            ), judged as (
                update decisions d
                   set outcome = verdict.outcome, outcome_reason = verdict.reason,
                       judged_at = now(), judged_by = :judged_by
                  from verdict join locked on locked.id = verdict.id
                 where d.id = verdict.id
                returning d.id, d.outcome, d.outcome_reason, d.judged_at
            )
            insert into outcome_history (decision_id, old_outcome, new_outcome, reason, judged_by, judged_at)
            select id, null, outcome, outcome_reason, :judged_by, judged_at from judged
            returning decision_id
            """
        ),
        {
            "ids": [v.id for v in verdicts],
            "outcomes": [v.outcome for v in verdicts],
            "reasons": [v.reason for v in verdicts],
            "judged_by": judged_by,
        },
    )
    return [row.decision_id for row in rows]


async def list_decisions(
    conn: AsyncConnection,
    *,
    decision_type: str | None,
    outcome: str | None,
    agent_id: str | None,
    after: PageKey | None,
    limit: int,
    model: str | None = None,
    decided_from: datetime | None = None,
    decided_to: datetime | None = None,
) -> list[DecisionRow]:
    """Newest first, keyset on (decided_at, id). Never reads `context`."""
    where: list[str] = []
    params: dict[str, Any] = {"limit": limit}
    if model:
        where.append("model = :model")
        params["model"] = model
    if decided_from is not None:
        where.append("decided_at >= :decided_from")
        params["decided_from"] = decided_from
    if decided_to is not None:
        where.append("decided_at < :decided_to")
        params["decided_to"] = decided_to
    if decision_type:
        where.append("decision_type = :decision_type")
        params["decision_type"] = decision_type
    if agent_id:
        where.append("agent_id = :agent_id")
        params["agent_id"] = agent_id
    if outcome == PENDING:
        where.append("outcome is null")
    elif outcome:
        where.append("outcome = :outcome")
        params["outcome"] = outcome
    if after is not None:
        where.append("(decided_at, id) < (:after_at, :after_id)")
        params["after_at"], params["after_id"] = after.decided_at, after.id
    clause = f"where {' and '.join(where)}" if where else ""
    rows = await conn.execute(
        text(f"select {_COLUMNS} from decisions {clause} order by decided_at desc, id desc limit :limit"),
        params,
    )
    return [_decision(row) for row in rows]


async def list_pending(
    conn: AsyncConnection, *, decided_before: datetime, after: PageKey | None, limit: int
) -> list[PendingRow]:
    """Pending decisions made before a moment, oldest first, keyset on (decided_at, id)."""
    params: dict[str, Any] = {"before": decided_before, "limit": limit}
    keyset = ""
    if after is not None:
        keyset = "and (decided_at, id) > (:after_at, :after_id)"
        params["after_at"], params["after_id"] = after.decided_at, after.id
    rows = await conn.execute(
        text(
            f"""
            select id, decision_type, subject_id, decided_at, model from decisions
             where outcome is null and decided_at < :before {keyset}
             order by decided_at, id limit :limit
            """
        ),
        params,
    )
    return [PendingRow(**row._mapping) for row in rows]


async def count_outcomes(conn: AsyncConnection, *, decided_since: datetime | None) -> list[OutcomeCountRow]:
    since = "where decided_at >= :since" if decided_since is not None else ""
    rows = await conn.execute(
        text(
            f"""
            select decision_type, outcome, model, count(*) as count from decisions {since}
             group by decision_type, outcome, model
             order by decision_type, outcome nulls first, model nulls first
            """
        ),
        {"since": decided_since},
    )
    return [OutcomeCountRow(**row._mapping) for row in rows]


async def judged_counts(conn: AsyncConnection) -> dict[str, int]:
    """Judged (success or failure) decisions per type: what precedent search reads."""
    rows = await conn.execute(
        text(f"select decision_type, count(*) as n from decisions where {JUDGED} group by decision_type")
    )
    return {row.decision_type: row.n for row in rows}


# Positional, for the driver connection (see find_similar): $1 the query
# vector, $2 the decision type, $3 k.
_SIMILAR_SELECT = f"""
    select {_COLUMNS}, context, 1 - (embedding <=> $1::vector) as similarity
      from decisions
     where {JUDGED} and decision_type = $2
"""

# `<=>` in ORDER BY with LIMIT is the shape the HNSW index answers.
SIMILAR_GRAPH_SQL = _SIMILAR_SELECT + " order by embedding <=> $1::vector limit $3"

# The function form of the same distance matches no index operator, so this
# reads the type's judged rows (through decisions_judged_type) and sorts them:
# exact, for types the shared graph serves badly.
SIMILAR_EXACT_SQL = _SIMILAR_SELECT + " order by cosine_distance(embedding, $1::vector), id limit $3"


def _similar(record: Any) -> DecisionRow:
    # SQLAlchemy's dialect installs a jsonb codec on every connection it
    # opens, so context arrives decoded; a bare driver would hand back text.
    data = dict(record.items())
    if isinstance(data["context"], str):
        data["context"] = json.loads(data["context"])
    return DecisionRow(**data)


async def find_similar(
    conn: AsyncConnection,
    *,
    decision_type: str,
    embedding: Sequence[float],
    k: int,
    exact: bool,
    ef_search: int | None = None,
) -> list[DecisionRow]:
    """Judged decisions of one type nearest to `embedding`, nearest first.

    `exact` reads every judged row of the type; otherwise the HNSW graph is
    walked keeping `ef_search` candidates.

    `conn` must be in autocommit. ef_search is set for the session and
    remembered per database connection, so a steady stream of searches costs
    one statement each instead of four (begin, set local, select, commit).
    In autocommit nothing can roll the setting back behind that memory, and
    precedent search is the only reader of the HNSW index, so the value a
    pooled connection carries never reaches another kind of query.

    This is the one hot read of the context, so it goes to the driver
    connection directly: SQLAlchemy's statement and row handling cost a
    third as much as the graph walk itself.
    """
    if conn.sync_connection.get_execution_options().get("isolation_level") != "AUTOCOMMIT":
        raise ValueError("find_similar needs a connection in AUTOCOMMIT")
    if not exact and ef_search is None:
        raise ValueError("a graph search needs ef_search")
    await _binary_vectors(conn)
    driver = (await conn.get_raw_connection()).driver_connection
    try:
        if not exact and conn.info.get("hnsw.ef_search") != ef_search:
            await driver.execute(f"set hnsw.ef_search = {int(ef_search)}")
            conn.info["hnsw.ef_search"] = ef_search
        records = await driver.fetch(SIMILAR_EXACT_SQL if exact else SIMILAR_GRAPH_SQL, Vector(list(embedding)),
                                     decision_type, k)
    except Exception as error:
        if not driver.is_closed():
            raise
        # Past SQLAlchemy, so tell the pool itself that this one is dead.
        await conn.invalidate(error)
        raise ConnectionLost("the database connection closed during a precedent search") from error
    return [_similar(record) for record in records]


async def prune_before(conn: AsyncConnection, *, before: datetime, batch: int) -> int:
    """Delete up to `batch` decisions made before a moment; how many went.

    SKIP LOCKED lets a prune run beside an outcome being set instead of
    queueing behind it; the skipped row goes in the next run.
    """
    result = await conn.execute(
        text(
            """
            delete from decisions where id in (
                select id from decisions where decided_at < :before
                 order by decided_at limit :batch for update skip locked
            )
            """
        ),
        {"before": before, "batch": batch},
    )
    return result.rowcount
