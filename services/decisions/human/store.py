"""SQL for subjects and human decisions.

Functions take an open connection so the caller composes one transaction:
the decisions imported from a range and the cursor that covers the range
commit together or not at all.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from services.decisions.human.rules import HumanDecision, HumanDecisionKind, PageKey, PlanChange


@dataclass(frozen=True, slots=True)
class SubjectRow:
    id: str
    source: str | None
    plan_ref: str | None
    cursor: str


@dataclass(frozen=True, slots=True)
class HumanDecisionRow:
    id: str
    seq: int
    subject_id: str
    kind: HumanDecisionKind
    body: str
    author: str
    provider: str
    external_id: str
    written_at: datetime
    observed_at: datetime
    plan_ref: str | None
    step: str | None


_SUBJECT_COLUMNS = "id, source, plan_ref, source_cursor"
_DECISION_COLUMNS = (
    "id, seq, subject_id, kind, body, author, provider, external_id, written_at, observed_at, plan_ref, step"
)


def _subject(row: Any) -> SubjectRow:
    return SubjectRow(id=row.id, source=row.source, plan_ref=row.plan_ref, cursor=row.source_cursor)


def _decision(row: Any) -> HumanDecisionRow:
    return HumanDecisionRow(
        id=str(row.id),
        seq=row.seq,
        subject_id=row.subject_id,
        kind=HumanDecisionKind(row.kind),
        body=row.body,
        author=row.author,
        provider=row.provider,
        external_id=row.external_id,
        written_at=row.written_at,
        observed_at=row.observed_at,
        plan_ref=row.plan_ref,
        step=row.step,
    )


async def get_subject(conn: AsyncConnection, *, subject_id: str, lock: bool = False) -> SubjectRow | None:
    """The subject, optionally locked until the transaction ends.

    The lock is FOR NO KEY UPDATE: it serialises leases and registrations of
    one subject, yet lets a pushed input (whose foreign key takes only a key
    share) land while a lease is reading its source.
    """
    suffix = " for no key update" if lock else ""
    row = (
        await conn.execute(text(f"select {_SUBJECT_COLUMNS} from subjects where id = :id{suffix}"), {"id": subject_id})
    ).first()
    return None if row is None else _subject(row)


async def ensure_subject(conn: AsyncConnection, *, subject_id: str) -> None:
    """Create the subject with no source and no plan unless it exists already."""
    await conn.execute(text("insert into subjects (id) values (:id) on conflict (id) do nothing"), {"id": subject_id})


async def upsert_subject(
    conn: AsyncConnection, *, subject_id: str, source: str | None, plan_ref: str | None
) -> SubjectRow:
    """Create or replace the subject's source and plan.

    A new source starts from its beginning: the old cursor is a position in
    another feed and means nothing there. Rereading is safe because every
    input is keyed by its provenance.
    """
    row = (
        await conn.execute(
            text(
                f"""
                insert into subjects (id, source, plan_ref) values (:id, :source, :plan_ref)
                on conflict (id) do update set
                    source = excluded.source,
                    plan_ref = excluded.plan_ref,
                    source_cursor = case when subjects.source is distinct from excluded.source
                                         then '' else subjects.source_cursor end,
                    updated_at = now()
                returning {_SUBJECT_COLUMNS}
                """
            ),
            {"id": subject_id, "source": source, "plan_ref": plan_ref},
        )
    ).one()
    return _subject(row)


async def set_cursor(conn: AsyncConnection, *, subject_id: str, position: str) -> None:
    await conn.execute(
        text("update subjects set source_cursor = :position, updated_at = now() where id = :id"),
        {"id": subject_id, "position": position},
    )


async def add_plan_change(conn: AsyncConnection, *, subject_id: str, plan_ref: str | None) -> None:
    await conn.execute(
        text("insert into subject_plans (subject_id, plan_ref) values (:id, :plan_ref)"),
        {"id": subject_id, "plan_ref": plan_ref},
    )


async def list_plan_changes(conn: AsyncConnection, *, subject_id: str) -> list[PlanChange]:
    rows = await conn.execute(
        text("select plan_ref, accepted_at from subject_plans where subject_id = :id order by seq"),
        {"id": subject_id},
    )
    return [PlanChange(plan_ref=row.plan_ref, accepted_at=row.accepted_at) for row in rows]


async def owners_of(conn: AsyncConnection, *, provider: str, external_ids: Sequence[str]) -> dict[str, str]:
    """external_id → subject_id for the inputs of this provider already recorded."""
    if not external_ids:
        return {}
    rows = await conn.execute(
        text(
            "select external_id, subject_id from human_decisions where provider = :provider and external_id = any(:ids)"
        ),
        {"provider": provider, "ids": list(external_ids)},
    )
    return {row.external_id: row.subject_id for row in rows}


async def insert_decision(conn: AsyncConnection, *, decision: HumanDecision) -> tuple[HumanDecisionRow, bool]:
    """Record the decision, or answer the one its (provider, external_id) already has.

    The unique constraint decides, not a prior read: two imports racing
    past any check still leave one row. The flag says whether this call
    created it.
    """
    row = (
        await conn.execute(
            text(
                f"""
                insert into human_decisions
                    (id, subject_id, provider, external_id, kind, body, author,
                     written_at, observed_at, plan_ref, step)
                values (:id, :subject_id, :provider, :external_id, :kind, :body, :author,
                        :written_at, :observed_at, :plan_ref, :step)
                on conflict (provider, external_id) do nothing
                returning {_DECISION_COLUMNS}
                """
            ),
            {
                "id": uuid.uuid4(),
                "subject_id": decision.subject_id,
                "provider": decision.provider,
                "external_id": decision.external_id,
                "kind": decision.kind.value,
                "body": decision.body,
                "author": decision.author,
                "written_at": decision.written_at,
                "observed_at": decision.observed_at,
                "plan_ref": decision.plan_ref,
                "step": decision.step,
            },
        )
    ).first()
    if row is not None:
        return _decision(row), True
    # The conflicting writer has committed by now (the insert waited for
    # it), so a fresh statement sees its row.
    existing = (
        await conn.execute(
            text(
                f"select {_DECISION_COLUMNS} from human_decisions"
                " where provider = :provider and external_id = :external_id"
            ),
            {"provider": decision.provider, "external_id": decision.external_id},
        )
    ).one()
    return _decision(existing), False


async def list_decisions(
    conn: AsyncConnection, *, subject_id: str, after: PageKey | None = None, limit: int | None = None
) -> list[HumanDecisionRow]:
    """The subject's human decisions, oldest written first: the last is the newest intent.

    Written time, not import time, orders them: an input pushed late still
    says what the person meant at the moment they wrote it.
    """
    params: dict[str, object] = {"id": subject_id}
    where = "subject_id = :id"
    if after is not None:
        where += " and (written_at, seq) > (:written_at, :seq)"
        params.update(written_at=after.written_at, seq=after.seq)
    tail = ""
    if limit is not None:
        tail = " limit :limit"
        params["limit"] = limit
    rows = await conn.execute(
        text(f"select {_DECISION_COLUMNS} from human_decisions where {where} order by written_at, seq{tail}"),
        params,
    )
    return [_decision(row) for row in rows]


async def erase_bodies(conn: AsyncConnection, *, subject_id: str) -> int:
    """Clear the body of the subject's human decisions not erased yet; how many.

    The rest stays, so a lease still sees that a person decided, when, and
    which plan step an approval bound; the body is what quoted the subject.
    """
    result = await conn.execute(
        text("update human_decisions set body = '', erased_at = now() where subject_id = :id and erased_at is null"),
        {"id": subject_id},
    )
    return result.rowcount
