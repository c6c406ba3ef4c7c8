"""Decision memory SQL. Functions take an open connection so callers compose
them into one transaction (an outcome and its history row commit together)."""

from __future__ import annotations

import struct
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, NamedTuple

import asyncpg
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from outrider.wire import json_bytes
from services.decisions.queries import PENDING, PageKey
from services.decisions.rules import (
    DecisionWeights,
    Erased,
    Erasure,
    ErasureRequest,
    JudgedWindow,
    NewDecision,
    UnauditedVerdict,
    Verdict,
)

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
    # UTF-8 JSON of the context, as Postgres prints it. Read by precedent
    # search only: the admin listing and outcome answers never carry it. It
    # stays text because its one reader passes it on unchanged, and parsing
    # it only to print it again cost more than the rest of the row.
    context_json: bytes | None = None
    similarity: float | None = None
    # The rollout arm it was made under; None outside a rollout. Read by the
    # listing and single reads, not by precedent search.
    rollout_id: uuid.UUID | None = None
    rollout_arm: str | None = None
    # What DESIGN §10's evidence reads; read with the rollout arm, not by precedent search.
    model_propensity: float | None = None
    execution: str | None = None


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


_COLUMNS = """
    id, decision_type, agent_id, subject_id, action, confidence, reasoning, model,
    decided_at, outcome, outcome_reason, judged_at, judged_by
"""


# What a read of one decision or a listing returns: the columns above, the
# rollout arm, the model's propensity and how the action was carried out.
_READ_COLUMNS = f"{_COLUMNS}, rollout_id, rollout_arm, model_propensity, execution"


@dataclass(frozen=True, slots=True)
class ArmCountRow:
    rollout_id: uuid.UUID
    arm: str
    outcome: str | None
    count: int


def _decision(row: Any) -> DecisionRow:
    return DecisionRow(**row._mapping)


async def embedding_dimension(conn: AsyncConnection) -> int:
    """The vector size the schema was created with (fixed at first migration)."""
    value = await conn.scalar(
        text("select atttypmod from pg_attribute where attrelid = 'decisions'::regclass and attname = 'embedding'")
    )
    return int(value)


async def get_decision(conn: AsyncConnection, *, id: uuid.UUID, lock: bool = False) -> DecisionRow | None:
    row = (
        await conn.execute(
            text(f"select {_READ_COLUMNS} from decisions where id = :id{' for update' if lock else ''}"),
            {"id": id},
        )
    ).first()
    return _decision(row) if row is not None else None


@dataclass(frozen=True, slots=True)
class ContextRow:
    # The context as Postgres prints it; "{}" once erased.
    context_json: str
    erased_at: datetime | None


async def get_context(conn: AsyncConnection, *, id: uuid.UUID) -> ContextRow | None:
    row = (
        await conn.execute(
            text("select context::text as context_json, erased_at from decisions where id = :id"), {"id": id}
        )
    ).first()
    return ContextRow(row.context_json, row.erased_at) if row is not None else None


async def get_embedding(conn: AsyncConnection, *, id: uuid.UUID) -> list[float] | None:
    # As a plain float array, so the read needs no vector codec on this connection.
    embedding: list[float] | None = await conn.scalar(
        text("select embedding::real[] from decisions where id = :id"), {"id": id}
    )
    return embedding


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
    audit_id: uuid.UUID | None = None,
) -> DecisionRow:
    """Judge one decision and keep the change; the caller holds its row lock.

    A change carrying `audit_id` waits in the history for its audit row
    (unaudited_verdicts) until verdict_audited marks it written.
    """
    row = (
        await conn.execute(
            text(
                f"""
                update decisions
                   set outcome = :outcome, outcome_reason = :reason, judged_at = now(), judged_by = :judged_by
                 where id = :id
                returning {_READ_COLUMNS}
                """
            ),
            {"id": id, "outcome": outcome, "reason": reason, "judged_by": judged_by},
        )
    ).one()
    await conn.execute(
        text(
            """
            insert into outcome_history (decision_id, old_outcome, new_outcome, reason, judged_by,
                                         changed_by, changed_by_email, judged_at, audit_id)
            values (:id, :old, :new, :reason, :judged_by, :changed_by, :changed_by_email, :judged_at, :audit_id)
            """
        ),
        {
            "id": id,
            "audit_id": audit_id,
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


async def unaudited_verdicts(
    conn: AsyncConnection, *, decision_id: uuid.UUID, changed_by: str
) -> list[UnauditedVerdict]:
    """This person's verdicts on the decision still without their audit row, oldest first."""
    rows = await conn.execute(
        text(
            """
            select audit_id, decision_id, old_outcome, new_outcome, reason
              from outcome_history
             where decision_id = :decision_id and audit_id is not null and audited_at is null
               and changed_by = :changed_by
             order by id
            """
        ),
        {"decision_id": decision_id, "changed_by": changed_by},
    )
    return [
        UnauditedVerdict(
            audit_id=row.audit_id,
            decision_id=row.decision_id,
            old_outcome=row.old_outcome,
            new_outcome=row.new_outcome,
            reason=row.reason,
        )
        for row in rows
    ]


async def verdict_audited(conn: AsyncConnection, *, audit_id: uuid.UUID) -> None:
    """The registry keeps the verdict's audit row: its ledger entry is done."""
    await conn.execute(
        text("update outcome_history set audited_at = now() where audit_id = :audit_id and audited_at is null"),
        {"audit_id": audit_id},
    )


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


class ListingStatement(NamedTuple):
    sql: str
    params: dict[str, Any]


async def list_decisions(conn: AsyncConnection, listing: ListingStatement) -> list[DecisionRow]:
    """One page of the listing (see listing_statement). Never reads `context`."""
    rows = await conn.execute(text(listing.sql), listing.params)
    return [_decision(row) for row in rows]


def listing_statement(
    *,
    decision_type: str | None,
    outcome: str | None,
    agent_id: str | None,
    after: PageKey | None,
    limit: int,
    models: Sequence[str] | None = None,
    decided_from: datetime | None = None,
    decided_to: datetime | None = None,
    subject_id: str | None = None,
    rollout_id: uuid.UUID | None = None,
) -> ListingStatement:
    """The listing's statement and its parameters: newest first, keyset on (decided_at, id).

    `models` (None: any) is read one model at a time through
    decisions_model_decided, each giving at most a page, and the pages are
    merged: a filter over the decision-time index instead would read every
    other model's rows to find a rare one's.
    """
    where: list[str] = []
    params: dict[str, Any] = {"limit": limit}
    if subject_id:
        where.append("subject_id = :subject_id")
        params["subject_id"] = subject_id
    if rollout_id is not None:
        where.append("rollout_id = :rollout_id")
        params["rollout_id"] = rollout_id
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
    order = "order by decided_at desc, id desc limit :limit"
    if models is None:
        clause = f"where {' and '.join(where)}" if where else ""
        statement = f"select {_READ_COLUMNS} from decisions {clause} {order}"
    else:
        params["models"] = list(models)
        # The model is matched as a range of one value, not with `=`: inside
        # the lateral it is the outer row's, which the planner counts as a
        # constant, so with `=` it drops the model from the order below,
        # guesses a seventh of the table matches and walks the decision-time
        # index (98 ms for a page of a model only the oldest of 300,000
        # decisions name). As a range the order by model first stays, and
        # only decisions_model_decided gives it without a sort (0.08 ms).
        clause = " and ".join(["model >= listed.wanted and model <= listed.wanted", *where])
        statement = f"""
            select {_READ_COLUMNS} from unnest(cast(:models as text[])) as listed(wanted)
              cross join lateral (
                  select {_READ_COLUMNS} from decisions where {clause}
                   order by model, decided_at desc, id desc limit :limit
              ) as one_model
             {order}
            """
    return ListingStatement(statement, params)


# The columns whose distinct values the console's filters offer, each the
# leading column of an index that also holds the decision time.
FACET_COLUMNS = ("decision_type", "agent_id", "model")


async def distinct_values(conn: AsyncConnection, column: str, *, since: datetime | None = None) -> list[str]:
    """The distinct values of a facet column, sorted; with `since`, only those of decisions made since then.

    A recursive skip through the column's index: each step finds the next
    value above the last with one probe, so a million decisions of a dozen
    models cost a dozen probes, not a million rows.
    """
    if column not in FACET_COLUMNS:
        raise ValueError(f"no index leads with {column!r}")
    recent = ""
    params: dict[str, Any] = {}
    if since is not None:
        recent = f"and exists (select 1 from decisions d where d.{column} = seen.value and d.decided_at >= :since)"
        params["since"] = since
    rows = await conn.execute(
        text(
            f"""
            with recursive seen(value) as (
                (select {column} from decisions where {column} is not null order by {column} limit 1)
                union all
                select (select {column} from decisions where {column} > seen.value order by {column} limit 1)
                  from seen where seen.value is not null
            )
            select value from seen where value is not null {recent} order by value
            """
        ),
        params,
    )
    return [row.value for row in rows]


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


async def count_outcomes(
    conn: AsyncConnection, *, decided_since: datetime | None, decided_before: datetime | None
) -> list[OutcomeCountRow]:
    bounds = [
        *(["decided_at >= :since"] if decided_since is not None else []),
        *(["decided_at < :before"] if decided_before is not None else []),
    ]
    where = f"where {' and '.join(bounds)}" if bounds else ""
    rows = await conn.execute(
        text(
            f"""
            select decision_type, outcome, model, count(*) as count from decisions {where}
             group by decision_type, outcome, model
             order by decision_type, outcome nulls first, model nulls first
            """
        ),
        {"since": decided_since, "before": decided_before},
    )
    return [OutcomeCountRow(**row._mapping) for row in rows]


async def judged_counts(conn: AsyncConnection) -> dict[str, int]:
    """Judged (success or failure) decisions per type that precedent search can find.

    Erased decisions are judged but hold no embedding, so no graph holds
    them; they are counted apart and subtracted, each count read from a
    partial index (decisions_judged_type, decisions_erased_judged).
    """
    rows = await conn.execute(
        text(
            f"""
            select decision_type, sum(n) as n from (
                select decision_type, count(*) as n from decisions where {JUDGED} group by decision_type
                union all
                select decision_type, -count(*) from decisions
                 where erased_at is not null and {JUDGED} group by decision_type
            ) as counted group by decision_type having sum(n) > 0
            """
        )
    )
    return {row.decision_type: int(row.n) for row in rows}


# ─── the direct connections (services/decisions/connections.py) ───────────
#
# Precedent search and recording run on every engine decision, on asyncpg
# connections of their own. Vectors and JSON cross those connections as
# bytes the store encodes itself: pgvector's codec builds a Python float and
# an array for each of a vector's hundreds of values, and the jsonb codec
# would parse a context only for the answer to print it again.


def vector_bytes(values: Sequence[float]) -> bytes:
    """pgvector's binary form of a vector: dimensions, a zero, big-endian float32s."""
    return struct.pack(f">HH{len(values)}f", len(values), 0, *values)


def _jsonb_send(data: bytes) -> bytes:
    # jsonb's binary form is a version byte, 1, and the JSON text.
    return b"\x01" + data


def _jsonb_recv(data: bytes) -> bytes:
    if data[:1] != b"\x01":
        raise ValueError(f"unknown jsonb binary version {data[:1]!r}")
    return data[1:]


async def prepare_direct(conn: asyncpg.Connection) -> None:
    """Codecs of a direct connection: vectors and jsonb pass as bytes, as above."""
    await conn.set_type_codec("vector", schema="public", encoder=bytes, decoder=bytes, format="binary")
    await conn.set_type_codec("jsonb", schema="pg_catalog", encoder=_jsonb_send, decoder=_jsonb_recv, format="binary")


async def set_search_width(conn: asyncpg.Connection, *, ef_search: int) -> None:
    """How many candidates a graph walk on this connection keeps, until set again."""
    await conn.execute(f"set hnsw.ef_search = {int(ef_search)}")


# Positional: $1 the query vector, $2 the decision type, $3 k. The columns
# are listed in DecisionRow's field order, so a record becomes a row whole.
_SIMILAR_SELECT = f"""
    select {_COLUMNS}, context, 1 - (embedding <=> $1::vector) as similarity
      from decisions
     where {JUDGED} and decision_type = $2 and embedding is not null
"""

# `<=>` in ORDER BY with LIMIT is the shape the HNSW index answers.
SIMILAR_GRAPH_SQL = _SIMILAR_SELECT + " order by embedding <=> $1::vector limit $3"

# The function form of the same distance matches no index operator, so this
# reads the type's judged rows (through decisions_judged_type) and sorts them:
# exact, for types the shared graph serves badly.
SIMILAR_EXACT_SQL = _SIMILAR_SELECT + " order by cosine_distance(embedding, $1::vector), id limit $3"


async def find_similar(
    conn: asyncpg.Connection, *, decision_type: str, embedding: bytes, k: int, exact: bool
) -> list[DecisionRow]:
    """Judged decisions of one type nearest to `embedding` (vector_bytes), nearest first.

    `exact` reads every judged row of the type; otherwise the HNSW graph is
    walked as wide as the connection's hnsw.ef_search, which its checkout
    set (connections.py).
    """
    try:
        records = await conn.fetch(SIMILAR_EXACT_SQL if exact else SIMILAR_GRAPH_SQL, embedding, decision_type, k)
    except Exception as error:
        if not conn.is_closed():
            raise
        raise ConnectionLost("the database connection closed during a precedent search") from error
    return [DecisionRow(*record) for record in records]


# An erased decision's context, as a recorded decision without one has it.
_NO_CONTEXT = "'{}'::jsonb"


async def erase_decisions(conn: AsyncConnection, *, subject_id: str) -> int:
    """Clear the context, reasoning and embedding of the subject's decisions not erased yet; how many.

    Everything else stays: the action and outcome keep the counts and the
    metrics whole, and the outcome history names no one but the judges.
    """
    result = await conn.execute(
        text(
            f"""
            update decisions set context = {_NO_CONTEXT}, reasoning = null, embedding = null, erased_at = now()
             where subject_id = :subject_id and erased_at is null
            """
        ),
        {"subject_id": subject_id},
    )
    return result.rowcount


_ERASURE_COLUMNS = "id, subject_id, reason, decisions, human_inputs, facts"


def _erasure(row: Any) -> Erasure:
    return Erasure(
        id=row.id,
        subject_id=row.subject_id,
        reason=row.reason,
        erased=Erased(decisions=row.decisions, human_inputs=row.human_inputs, facts=row.facts),
    )


async def open_erasure(conn: AsyncConnection, *, request: ErasureRequest, new_id: uuid.UUID) -> Erasure:
    """The subject's unfinished erasure, row-locked, or a new one with `new_id`.

    An unfinished one is resumed under the reason given now: its audit row
    is still to be written, by this call.
    """
    row = (
        await conn.execute(
            text(
                f"""
                insert into erasures (id, subject_id, reason) values (:id, :subject_id, :reason)
                on conflict (subject_id) where audited_at is null do update set reason = excluded.reason
                returning {_ERASURE_COLUMNS}
                """
            ),
            {"id": new_id, "subject_id": request.subject_id, "reason": request.reason},
        )
    ).one()
    return _erasure(row)


async def count_erased(conn: AsyncConnection, *, erasure_id: uuid.UUID, erased: Erased) -> Erasure:
    """Add what a step of the erasure cleared to its ledger row."""
    row = (
        await conn.execute(
            text(
                f"""
                update erasures set decisions = decisions + :decisions, human_inputs = human_inputs + :human_inputs,
                                    facts = facts + :facts
                 where id = :id
                returning {_ERASURE_COLUMNS}
                """
            ),
            {
                "id": erasure_id,
                "decisions": erased.decisions,
                "human_inputs": erased.human_inputs,
                "facts": erased.facts,
            },
        )
    ).one()
    return _erasure(row)


async def finish_erasure(conn: AsyncConnection, *, erasure_id: uuid.UUID) -> None:
    """Mark the erasure audited: the subject's next erasure is a new one."""
    await conn.execute(
        text("update erasures set audited_at = now() where id = :id and audited_at is null"), {"id": erasure_id}
    )


class Recording(NamedTuple):
    """One decision to store: its id, the validated decision, its vector (vector_bytes)."""

    id: uuid.UUID
    decision: NewDecision
    embedding: bytes


async def insert_decisions(conn: asyncpg.Connection, *, recordings: Sequence[Recording]) -> set[uuid.UUID]:
    """Store decisions in one statement; the ids that were new.

    An id already stored is a retry and is left as it is, so each decision
    lands once however often it is sent. The statement is atomic on its own,
    so no transaction is opened around it.
    """
    if not recordings:
        return set()
    rows = await conn.fetch(
        """
        insert into decisions (id, decision_type, agent_id, subject_id, context, action,
                               confidence, reasoning, model, embedding, decided_at, rollout_id, rollout_arm,
                               model_propensity, execution)
        select * from unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::jsonb[], $6::text[],
                             $7::float8[], $8::text[], $9::text[], $10::vector[], $11::timestamptz[],
                             $12::uuid[], $13::text[], $14::float8[], $15::text[])
        on conflict (id) do nothing
        returning id
        """,
        [r.id for r in recordings],
        [r.decision.decision_type for r in recordings],
        [r.decision.agent_id for r in recordings],
        [r.decision.subject_id for r in recordings],
        [json_bytes(r.decision.context) for r in recordings],
        [r.decision.action for r in recordings],
        [r.decision.confidence for r in recordings],
        [r.decision.reasoning for r in recordings],
        [r.decision.model for r in recordings],
        [r.embedding for r in recordings],
        [r.decision.decided_at for r in recordings],
        [r.decision.rollout.rollout_id if r.decision.rollout else None for r in recordings],
        [r.decision.rollout.arm.value if r.decision.rollout else None for r in recordings],
        [r.decision.model_propensity for r in recordings],
        [r.decision.execution.value if r.decision.execution else None for r in recordings],
    )
    return {row[0] for row in rows}


async def count_rollout_arms(conn: AsyncConnection, *, rollout_ids: Sequence[uuid.UUID]) -> list[ArmCountRow]:
    """Decisions per rollout, arm and outcome (null for pending), from decisions_rollout_arms alone."""
    rows = await conn.execute(
        text(
            """
            select rollout_id, rollout_arm as arm, outcome, count(*) as count
              from decisions
             where rollout_id = any(cast(:ids as uuid[]))
             group by rollout_id, rollout_arm, outcome
            """
        ),
        {"ids": list(rollout_ids)},
    )
    return [ArmCountRow(**row._mapping) for row in rows]


async def recorded_identities(
    conn: asyncpg.Connection, *, ids: Iterable[uuid.UUID]
) -> dict[uuid.UUID, tuple[str, str, str, str]]:
    """(decision_type, agent_id, subject_id, action) of stored decisions, by id."""
    rows = await conn.fetch(
        "select id, decision_type, agent_id, subject_id, action from decisions where id = any($1::uuid[])",
        list(ids),
    )
    return {row[0]: (row[1], row[2], row[3], row[4]) for row in rows}


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


# ─── Evidence for the outcomes context (DESIGN §10) ────────────────────────

# The unjudged predicate of decisions_unjudged_type, spelled as in the
# migration for the same reason as JUDGED.
UNJUDGED = "(outcome is null or outcome = 'unknown')"


async def weigh_decisions(conn: AsyncConnection, *, decision_type: str, model: str) -> DecisionWeights:
    """One type's inverse-propensity sums for `model`, each half read from its own partial index.

    The judged half is an index-only scan of decisions_judged_weights, the
    unknown and pending counts of decisions_unjudged_type.
    """
    params = {"decision_type": decision_type, "model": model}
    judged = (
        await conn.execute(
            text(
                f"""
                select count(*) as judged,
                       count(*) filter (where outcome = 'success') as logged_successes,
                       count(model_propensity) as with_propensity,
                       count(model_propensity) filter (where model = :model) as matched,
                       coalesce(sum(1 / model_propensity) filter (where model = :model), 0) as sum_w,
                       coalesce(sum(1 / model_propensity)
                                filter (where model = :model and outcome = 'success'), 0) as sum_w_r,
                       coalesce(sum(1 / (model_propensity * model_propensity))
                                filter (where model = :model), 0) as sum_w2,
                       coalesce(sum(1 / (model_propensity * model_propensity))
                                filter (where model = :model and outcome = 'success'), 0) as sum_w2_r,
                       coalesce(sum(1 / model_propensity), 0) as sum_inverse_all
                  from decisions
                 where {JUDGED} and decision_type = :decision_type
                """
            ),
            params,
        )
    ).one()
    unjudged = (
        await conn.execute(
            text(
                f"""
                select count(*) filter (where outcome = 'unknown') as unknown,
                       count(*) filter (where outcome is null) as pending
                  from decisions
                 where {UNJUDGED} and decision_type = :decision_type
                """
            ),
            params,
        )
    ).one()
    return DecisionWeights(
        decisions=judged.judged + unjudged.unknown + unjudged.pending,
        judged=judged.judged,
        unknown=unjudged.unknown,
        pending=unjudged.pending,
        logged_successes=judged.logged_successes,
        with_propensity=judged.with_propensity,
        matched=judged.matched,
        sum_w=float(judged.sum_w),
        sum_w_r=float(judged.sum_w_r),
        sum_w2=float(judged.sum_w2),
        sum_w2_r=float(judged.sum_w2_r),
        sum_inverse_all=float(judged.sum_inverse_all),
    )


@dataclass(frozen=True, slots=True)
class ExecutionCountRow:
    decision_type: str
    execution: str | None
    outcome: str | None
    count: int


async def count_executions(
    conn: AsyncConnection, *, agent_id: str, decision_type: str | None
) -> list[ExecutionCountRow]:
    """An agent's decisions per type, execution and outcome (null for pending), from decisions_agent_execution."""
    only_type = "and decision_type = :decision_type" if decision_type is not None else ""
    rows = await conn.execute(
        text(
            f"""
            select decision_type, execution, outcome, count(*) as count
              from decisions
             where agent_id = :agent_id {only_type}
             group by decision_type, execution, outcome
            """
        ),
        {"agent_id": agent_id, "decision_type": decision_type},
    )
    return [ExecutionCountRow(**row._mapping) for row in rows]


# :window and :twice (2·window); shown with its plan by bench/decisions/bench_evidence.py.
JUDGED_WINDOWS_SQL = f"""
            with recursive pairs as (
                (select agent_id, decision_type from decisions
                  where {JUDGED} order by agent_id, decision_type limit 1)
                union all
                select next.agent_id, next.decision_type from pairs cross join lateral (
                    select agent_id, decision_type from decisions
                     where {JUDGED} and (agent_id, decision_type) > (pairs.agent_id, pairs.decision_type)
                     order by agent_id, decision_type limit 1
                ) as next
            )
            select pairs.agent_id, pairs.decision_type,
                   count(*) filter (where latest.place <= :window) as latest_judged,
                   count(*) filter (where latest.place <= :window and latest.outcome = 'success')
                       as latest_successes,
                   count(*) filter (where latest.place > :window) as previous_judged,
                   count(*) filter (where latest.place > :window and latest.outcome = 'success')
                       as previous_successes,
                   max(latest.decided_at) as latest_decided_at
              from pairs cross join lateral (
                  select outcome, decided_at, row_number() over (order by decided_at desc, id desc) as place
                    from (
                        select outcome, decided_at, id from decisions
                         where {JUDGED} and agent_id = pairs.agent_id and decision_type = pairs.decision_type
                         order by decided_at desc, id desc limit :twice
                    ) as newest
              ) as latest
             group by pairs.agent_id, pairs.decision_type
             order by pairs.agent_id, pairs.decision_type
            """


async def count_judged_windows(conn: AsyncConnection, *, window: int) -> list[JudgedWindow]:
    """Per agent and decision type with a judged decision, its latest `window` judged ones and the `window` before.

    The pairs are found by skipping through decisions_judged_windows one
    pair at a time (a loose index scan), and each pair's latest 2·window
    judged decisions are read from the same index newest first, so the cost
    is pairs × window entries, not the table. Ties in decision time are
    broken by id, as in every listing.
    """
    rows = await conn.execute(text(JUDGED_WINDOWS_SQL), {"window": window, "twice": 2 * window})
    return [JudgedWindow(**row._mapping) for row in rows]


# :start, :end (the window), :start_epoch and :width (seconds); the bucket
# is counted from the window's start. Shown with its plan by
# bench/decisions/bench_outcome_series.py.
OUTCOME_SERIES_SQL = """
            select decision_type, floor((extract(epoch from decided_at) - :start_epoch) / :width)::int as bucket,
                   outcome, count(*) as count
              from decisions
             where decided_at >= :start and decided_at < :end {only_type}
             group by 1, 2, 3
            """


async def count_outcome_series(
    conn: AsyncConnection, *, start: datetime, end: datetime, bucket_seconds: int, decision_type: str | None
) -> list[tuple[str, int, str | None, int]]:
    """(decision type, bucket index, outcome or null for pending, count) over decided_at in [start, end)."""
    only_type = "and decision_type = :decision_type" if decision_type is not None else ""
    rows = await conn.execute(
        text(OUTCOME_SERIES_SQL.format(only_type=only_type)),
        {
            "start": start,
            "end": end,
            "start_epoch": int(start.timestamp()),
            "width": bucket_seconds,
            "decision_type": decision_type,
        },
    )
    return [(decision_type, bucket, outcome, count) for decision_type, bucket, outcome, count in rows]
