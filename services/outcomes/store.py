"""Outcomes SQL. Functions take an open connection so callers compose them into
one transaction: a facts merge and its row locks, or a conversation's new
credits, its deferred turns and its digest, commit together or not at all."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from services.common.retention import oldest_first
from services.outcomes.rules.advice import CreditTally
from services.outcomes.rules.erasure import RejectionSample
from services.outcomes.rules.rollout_guard import ArmCredit
from services.outcomes.rules.routing import Evidence
from services.outcomes.rules.submission import BookedConversation
from services.outcomes.rules.sweep import FactValues

# ─── Facts ───────────────────────────────────────────────────────────────────


async def lock_facts(conn: AsyncConnection, *, subject_ids: Iterable[str]) -> dict[str, dict[str, Any]]:
    """Each subject's stored facts document, row-locked until the transaction ends.

    Missing rows are created empty first, so a first event locks a row like
    any other instead of racing another replica's first event on an insert.
    Rows are created and locked in subject order: two transactions locking
    overlapping sets in one order queue rather than deadlock.
    """
    ids = sorted(set(subject_ids))
    if not ids:
        return {}
    await conn.execute(
        text(
            "insert into subject_facts (subject_id) "
            "select s from unnest(cast(:ids as text[])) as s order by s "
            "on conflict (subject_id) do nothing"
        ),
        {"ids": ids},
    )
    rows = await conn.execute(
        text(
            "select subject_id, facts from subject_facts where subject_id = any(cast(:ids as text[])) "
            "order by subject_id for update"
        ),
        {"ids": ids},
    )
    return {row.subject_id: row.facts for row in rows}


async def save_facts(conn: AsyncConnection, *, documents: dict[str, dict[str, Any]]) -> None:
    """Replace the facts document of subjects locked by lock_facts."""
    if not documents:
        return
    await conn.execute(
        text(
            "update subject_facts f set facts = cast(d.facts as jsonb), updated_at = now() "
            "from unnest(cast(:ids as text[]), cast(:docs as text[])) as d(subject_id, facts) "
            "where f.subject_id = d.subject_id"
        ),
        {"ids": list(documents), "docs": [document_json(doc) for doc in documents.values()]},
    )


async def get_facts(conn: AsyncConnection, *, subject_id: str) -> dict[str, Any] | None:
    row = (await conn.execute(text("select facts from subject_facts where subject_id = :s"), {"s": subject_id})).first()
    return None if row is None else row.facts


# The table holds a row per field the facts parser can name, a few dozen at
# most: read whole, it needs no index on last_at.
_PRUNE_REJECTIONS = oldest_first("fact_rejections", "last_at")


async def prune_rejections(conn: AsyncConnection, *, before: datetime, limit: int) -> int:
    """Delete up to `limit` rejection counters last moved before `before`, sample and all.

    A rejection arriving as its row goes starts a fresh counter.
    """
    return (await conn.execute(_PRUNE_REJECTIONS, {"before": before, "limit": limit})).rowcount


async def list_fact_values(conn: AsyncConnection, *, subject_ids: Sequence[str]) -> dict[str, FactValues]:
    """The judge's view of many subjects in one read.

    Postgres reads the timestamps out of the document, which the sweeper would
    otherwise parse one string at a time for every pending decision.
    """
    if not subject_ids:
        return {}
    rows = await conn.execute(
        text(
            """
            select subject_id,
                   facts -> 'status' ->> 'value' as status,
                   cast(facts -> 'assigned_at' ->> 'value' as timestamptz) as assigned_at,
                   cast(facts -> 'delivered_at' ->> 'value' as timestamptz) as delivered_at,
                   cast(facts -> 'sla_due_at' ->> 'value' as timestamptz) as sla_due_at,
                   cast(facts -> 'cancelled' ->> 'value' as boolean) as cancelled
              from subject_facts
             where subject_id = any(cast(:ids as text[]))
            """
        ),
        {"ids": list(set(subject_ids))},
    )
    return {row.subject_id: FactValues(**row._mapping) for row in rows}


async def count_rejection(conn: AsyncConnection, *, field: str, problem: str, payload: str) -> None:
    await conn.execute(
        text(
            "insert into fact_rejections (field, count, last_problem, last_payload, last_at) "
            "values (:field, 1, :problem, :payload, now()) "
            "on conflict (field) do update set count = fact_rejections.count + 1, "
            "last_problem = excluded.last_problem, last_payload = excluded.last_payload, last_at = now()"
        ),
        {"field": field, "problem": problem, "payload": payload},
    )


# ─── Erasure of one subject ──────────────────────────────────────────────────


async def delete_facts(conn: AsyncConnection, *, subject_id: str) -> int:
    """Delete the subject's merged facts; how many documents went (0 or 1)."""
    result = await conn.execute(text("delete from subject_facts where subject_id = :s"), {"s": subject_id})
    return result.rowcount


async def lock_rejection_samples(conn: AsyncConnection) -> list[RejectionSample]:
    """Every stored rejection sample, row-locked: one row per field, so few."""
    rows = await conn.execute(
        text(
            "select field, last_problem, last_payload from fact_rejections "
            "where last_payload <> '' order by field for update"
        )
    )
    return [RejectionSample(field=row.field, problem=row.last_problem, payload=row.last_payload) for row in rows]


async def clear_rejection_samples(conn: AsyncConnection, *, fields: Sequence[str]) -> None:
    """Forget these fields' last sample and problem; their counts stay."""
    if not fields:
        return
    await conn.execute(
        text("update fact_rejections set last_problem = '', last_payload = '' where field = any(cast(:f as text[]))"),
        {"f": list(fields)},
    )


# ─── Conversations and the credit ledger ─────────────────────────────────────


async def lock_conversation(conn: AsyncConnection, *, conversation_id: str) -> BookedConversation:
    """The conversation's booked state, row-locked; created empty if new.

    Two submissions of one conversation then book one after the other, so the
    second sees the first's credits and digests instead of racing them.
    """
    await conn.execute(
        text("insert into conversations (conversation_id) values (:c) on conflict (conversation_id) do nothing"),
        {"c": conversation_id},
    )
    row = (
        await conn.execute(
            text(
                "select conversation_id, skill, decision_type, turn_digests from conversations "
                "where conversation_id = :c for update"
            ),
            {"c": conversation_id},
        )
    ).one()
    return BookedConversation(**row._mapping)


async def update_conversation(
    conn: AsyncConnection,
    *,
    conversation_id: str,
    skill: str | None,
    decision_type: str | None,
    turn_digests: Sequence[str],
) -> None:
    await conn.execute(
        text(
            "update conversations set skill = :skill, decision_type = :decision_type, "
            "turn_digests = cast(:digests as text[]), updated_at = now() where conversation_id = :c"
        ),
        {"c": conversation_id, "skill": skill, "decision_type": decision_type, "digests": list(turn_digests)},
    )


@dataclass(frozen=True, slots=True)
class CreditRow:
    conversation_id: str
    turn_ref: str
    episode_id: int
    model: str | None
    trace_id: str | None
    credit: str
    confidence: float
    resolution: str
    # The rollout arm the turn answered under; both None outside a rollout.
    rollout_id: uuid.UUID | None = None
    rollout_arm: str | None = None


async def insert_credits(
    conn: AsyncConnection,
    *,
    credits: Sequence[CreditRow],
    skill: str | None,
    decision_type: str | None,
) -> set[tuple[str, int]]:
    """Book credits not booked yet; returns the (turn_ref, episode_id) booked now.

    A credit already in the ledger is left exactly as it is, even where this
    submission computed it differently: routing has learnt from it already.
    """
    if not credits:
        return set()
    rows = await conn.execute(
        text(
            """
            insert into credits (conversation_id, turn_ref, episode_id, model, trace_id, skill,
                                 decision_type, credit, confidence, resolution, rollout_id, rollout_arm)
            select c.conversation_id, c.turn_ref, c.episode_id, c.model, c.trace_id, :skill,
                   :decision_type, c.credit, c.confidence, c.resolution, c.rollout_id, c.rollout_arm
              from unnest(cast(:conversation_ids as text[]), cast(:turn_refs as text[]),
                          cast(:episode_ids as integer[]), cast(:models as text[]),
                          cast(:trace_ids as text[]), cast(:credit_values as text[]),
                          cast(:confidences as double precision[]), cast(:resolutions as text[]),
                          cast(:rollout_ids as uuid[]), cast(:rollout_arms as text[]))
                   with ordinality
                   as c(conversation_id, turn_ref, episode_id, model, trace_id, credit, confidence,
                        resolution, rollout_id, rollout_arm, position)
             order by c.position
            on conflict (conversation_id, turn_ref, episode_id) do nothing
            returning turn_ref, episode_id
            """
        ),
        {
            "skill": skill,
            "decision_type": decision_type,
            "conversation_ids": [c.conversation_id for c in credits],
            "turn_refs": [c.turn_ref for c in credits],
            "episode_ids": [c.episode_id for c in credits],
            "models": [c.model for c in credits],
            "trace_ids": [c.trace_id for c in credits],
            "credit_values": [c.credit for c in credits],
            "confidences": [c.confidence for c in credits],
            "resolutions": [c.resolution for c in credits],
            "rollout_ids": [c.rollout_id for c in credits],
            "rollout_arms": [c.rollout_arm for c in credits],
        },
    )
    return {(row.turn_ref, row.episode_id) for row in rows}


@dataclass(frozen=True, slots=True)
class DeferredRow:
    conversation_id: str
    turn_ref: str
    episode_id: int
    model: str | None
    trace_id: str | None
    rollout_id: uuid.UUID | None = None
    rollout_arm: str | None = None


async def insert_deferred(conn: AsyncConnection, *, deferred: Sequence[DeferredRow]) -> None:
    """Record turns waiting for a verdict, unless the turn already has a credit."""
    for turn in deferred:
        await conn.execute(
            text(
                """
                insert into deferred_turns (conversation_id, turn_ref, episode_id, model, trace_id,
                                            rollout_id, rollout_arm)
                select :c, :ref, :episode, :model, :trace, cast(:rollout_id as uuid), cast(:rollout_arm as text)
                 where not exists (select 1 from credits where conversation_id = :c and turn_ref = :ref)
                on conflict (conversation_id, turn_ref) do nothing
                """
            ),
            {
                "c": turn.conversation_id,
                "ref": turn.turn_ref,
                "episode": turn.episode_id,
                "model": turn.model,
                "trace": turn.trace_id,
                "rollout_id": turn.rollout_id,
                "rollout_arm": turn.rollout_arm,
            },
        )


async def resolve_deferred(conn: AsyncConnection, *, conversation_id: str) -> None:
    """Close every waiting turn of the conversation that has a credit now."""
    await conn.execute(
        text(
            """
            update deferred_turns d set resolved_at = now()
             where d.conversation_id = :c and d.resolved_at is null
               and exists (select 1 from credits k where k.conversation_id = d.conversation_id
                                                     and k.turn_ref = d.turn_ref)
            """
        ),
        {"c": conversation_id},
    )


async def count_pending(conn: AsyncConnection, *, model: str | None = None, conversation_id: str | None = None) -> int:
    """Deferred turns still waiting for a verdict, optionally of one model or conversation."""
    value = await conn.scalar(
        text(
            "select count(*) from deferred_turns where resolved_at is null "
            "and (cast(:model as text) is null or model = :model) "
            "and (cast(:c as text) is null or conversation_id = :c)"
        ),
        {"model": model, "c": conversation_id},
    )
    return int(value or 0)


async def list_credits(conn: AsyncConnection, *, model: str | None = None) -> list[CreditRow]:
    """Booked credits in booking order, optionally of one model.

    Order matters to the metrics: an episode's resolution is that of its
    latest booked credit, since a conversation that grew may have settled an
    episode its earlier credits saw as ongoing.
    """
    rows = await conn.execute(
        text(
            "select conversation_id, turn_ref, episode_id, model, trace_id, credit, confidence, resolution "
            "from credits where cast(:model as text) is null or model = :model order by seq"
        ),
        {"model": model},
    )
    return [CreditRow(**row._mapping) for row in rows]


RouteColumn = Literal["skill", "decision_type"]


async def tally_credits(conn: AsyncConnection, *, column: RouteColumn, key: str) -> list[CreditTally]:
    """Confidence-weighted credit per model for one skill or decision type.

    Only credits that bind a trace count: an observer turn (no trace id)
    bound no decision, so nothing the router chose is praised or blamed by it.
    """
    if column not in ("skill", "decision_type"):
        raise ValueError(f"cannot route by {column!r}")
    rows = await conn.execute(
        text(
            f"""
            select model,
                   coalesce(sum(confidence) filter (where credit = 'success'), 0) as successes,
                   coalesce(sum(confidence) filter (where credit = 'failure'), 0) as failures
              from credits
             where {column} = :key and trace_id is not null and model is not null
             group by model
             order by model
            """
        ),
        {"key": key},
    )
    return [CreditTally(row.model, float(row.successes), float(row.failures)) for row in rows]


async def tally_rollout_credits(
    conn: AsyncConnection, *, rollout_ids: Sequence[str]
) -> dict[tuple[str, str], ArmCredit]:
    """Each (rollout, arm)'s booked credit and waiting turns; an arm with neither is absent.

    Unlike routing, a credit counts without a trace id: the arm stamped on
    the turn is itself what binds it to the rollout.
    """
    ids = [uuid.UUID(value) for value in rollout_ids]
    if not ids:
        return {}
    booked = await conn.execute(
        text(
            """
            select cast(rollout_id as text) as rollout_id, rollout_arm,
                   coalesce(sum(confidence) filter (where credit = 'success'), 0) as successes,
                   coalesce(sum(confidence) filter (where credit = 'failure'), 0) as failures
              from credits
             where rollout_id = any(cast(:ids as uuid[]))
             group by rollout_id, rollout_arm
            """
        ),
        {"ids": ids},
    )
    waiting = await conn.execute(
        text(
            """
            select cast(rollout_id as text) as rollout_id, rollout_arm, count(*) as pending
              from deferred_turns
             where rollout_id = any(cast(:ids as uuid[])) and resolved_at is null
             group by rollout_id, rollout_arm
            """
        ),
        {"ids": ids},
    )
    found = {
        (row.rollout_id, row.rollout_arm): ArmCredit(Evidence(float(row.successes), float(row.failures)))
        for row in booked
    }
    for row in waiting:
        key = (row.rollout_id, row.rollout_arm)
        found[key] = ArmCredit(found[key].credit if key in found else Evidence(), int(row.pending))
    return found


def document_json(document: dict[str, Any]) -> str:
    """A facts document as stored JSON text (sorted, so equal facts compare equal)."""
    return json.dumps(document, sort_keys=True, separators=(",", ":"))


# ─── Alerts ──────────────────────────────────────────────────────────────────


@dataclass(frozen=True)
class StoredAlert:
    id: str
    rule: str
    agent_id: str
    decision_type: str
    subject: str
    state: str
    summary: str
    value: float
    threshold: float
    started_at: datetime
    resolved_at: datetime | None


@dataclass(frozen=True)
class OutboxRow:
    id: str
    transition: str
    body: str
    attempts: int


_ALERT_COLUMNS = (
    "cast(id as text) as id, rule, agent_id, decision_type, subject, state, summary, value, threshold, "
    "started_at, resolved_at"
)


async def firing_alerts(conn: AsyncConnection) -> list[StoredAlert]:
    """Every firing alert, locked so one evaluation at a time moves them."""
    rows = await conn.execute(text(f"select {_ALERT_COLUMNS} from alerts where state = 'firing' for update"))
    return [StoredAlert(**row._mapping) for row in rows]


@dataclass(frozen=True)
class NewAlert:
    id: str
    rule: str
    agent_id: str
    decision_type: str
    subject: str
    summary: str
    value: float
    threshold: float


async def open_alerts(conn: AsyncConnection, alerts: Sequence[NewAlert], *, now: datetime) -> list[StoredAlert]:
    """New firing rows in one statement; a key another evaluation opened
    first is skipped (the partial unique index), so only rows opened here return."""
    if not alerts:
        return []
    columns = ("id", "rule", "agent_id", "decision_type", "subject", "summary")
    params: dict[str, Any] = {name: [getattr(a, name) for a in alerts] for name in columns}
    params.update(value=[a.value for a in alerts], threshold=[a.threshold for a in alerts], now=now)
    rows = await conn.execute(
        text(
            "insert into alerts (id, rule, agent_id, decision_type, subject, state, summary, value, threshold, "
            "started_at) select cast(id as uuid), rule, agent_id, decision_type, subject, 'firing', summary, "
            "value, threshold, :now from unnest(cast(:id as text[]), cast(:rule as text[]), "
            "cast(:agent_id as text[]), cast(:decision_type as text[]), cast(:subject as text[]), "
            "cast(:summary as text[]), cast(:value as float8[]), cast(:threshold as float8[])) "
            "as n(id, rule, agent_id, decision_type, subject, summary, value, threshold) "
            "on conflict (rule, agent_id, decision_type, subject) where state = 'firing' do nothing "
            f"returning {_ALERT_COLUMNS}"
        ),
        params,
    )
    return [StoredAlert(**row._mapping) for row in rows]


async def resolve_alerts(conn: AsyncConnection, *, alert_ids: Sequence[str], now: datetime) -> list[StoredAlert]:
    if not alert_ids:
        return []
    rows = await conn.execute(
        text(
            "update alerts set state = 'resolved', resolved_at = :now "
            "where id = any(cast(:ids as uuid[])) and state = 'firing' "
            f"returning {_ALERT_COLUMNS}"
        ),
        {"ids": list(alert_ids), "now": now},
    )
    return [StoredAlert(**row._mapping) for row in rows]


@dataclass(frozen=True)
class Delivery:
    id: str
    alert_id: str
    transition: str
    body: str


async def enqueue_deliveries(conn: AsyncConnection, deliveries: Sequence[Delivery]) -> None:
    if not deliveries:
        return
    await conn.execute(
        text(
            "insert into alert_outbox (id, alert_id, transition, body) "
            "select cast(id as uuid), cast(alert_id as uuid), transition, body from unnest("
            "cast(:id as text[]), cast(:alert_id as text[]), cast(:transition as text[]), cast(:body as text[])"
            ") as d(id, alert_id, transition, body)"
        ),
        {
            "id": [d.id for d in deliveries],
            "alert_id": [d.alert_id for d in deliveries],
            "transition": [d.transition for d in deliveries],
            "body": [d.body for d in deliveries],
        },
    )


async def list_alerts(
    conn: AsyncConnection, *, state: str | None, after: tuple[str, datetime, str] | None, limit: int
) -> list[StoredAlert]:
    """Firing before resolved, newest first within each; limit + 1 rows for paging."""
    clauses = []
    params: dict[str, Any] = {"limit": limit + 1}
    if state:
        clauses.append("state = :state")
        params["state"] = state
    if after is not None:
        clauses.append(
            "(state > :a_state or (state = :a_state and (started_at, id) < (:a_started, cast(:a_id as uuid))))"
        )
        params.update(a_state=after[0], a_started=after[1], a_id=after[2])
    where = f"where {' and '.join(clauses)}" if clauses else ""
    rows = await conn.execute(
        text(f"select {_ALERT_COLUMNS} from alerts {where} order by state, started_at desc, id desc limit :limit"),
        params,
    )
    return [StoredAlert(**row._mapping) for row in rows]


async def due_deliveries(conn: AsyncConnection, *, now: datetime, limit: int) -> list[OutboxRow]:
    """Undelivered transitions whose next attempt is due, oldest first, locked
    and skipped by another replica delivering at the same time."""
    rows = await conn.execute(
        text(
            "select cast(id as text) as id, transition, body, attempts from alert_outbox "
            "where delivered_at is null and next_attempt_at <= :now "
            "order by created_at, id limit :limit for update skip locked"
        ),
        {"now": now, "limit": limit},
    )
    return [OutboxRow(**row._mapping) for row in rows]


async def mark_delivered(conn: AsyncConnection, *, delivery_id: str, now: datetime) -> None:
    await conn.execute(
        text("update alert_outbox set delivered_at = :now, attempts = attempts + 1 where id = cast(:id as uuid)"),
        {"id": delivery_id, "now": now},
    )


async def mark_failed(conn: AsyncConnection, *, delivery_id: str, retry_at: datetime, error: str) -> None:
    await conn.execute(
        text(
            "update alert_outbox set attempts = attempts + 1, next_attempt_at = :retry_at, last_error = :error "
            "where id = cast(:id as uuid)"
        ),
        {"id": delivery_id, "retry_at": retry_at, "error": error[:500]},
    )


async def delivery_counts(conn: AsyncConnection) -> tuple[int, int, int]:
    """Delivered, pending, and failed attempts (every attempt but a row's delivering one)."""
    row = (
        await conn.execute(
            text(
                "select count(*) filter (where delivered_at is not null), "
                "count(*) filter (where delivered_at is null), "
                "coalesce(sum(attempts), 0) - count(*) filter (where delivered_at is not null) from alert_outbox"
            )
        )
    ).one()
    return int(row[0]), int(row[1]), int(row[2])
