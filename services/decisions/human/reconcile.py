"""Human input into durable decisions: reconcile before a lease, and the push path.

Before an agent takes a subject on, everything its source holds after the
stored cursor is imported, and only then is the lease granted. The imported
decisions and the cursor past them commit in one transaction, so the cursor
never covers an input that is not recorded. Any failure to read the source
refuses the lease and leaves the cursor where it was: an agent acting while
newer human input is unread is the failure this exists to prevent, so a
source outage must stop the agent rather than let it proceed on old intent.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from services.common.errors import Conflict, NotFound, Unavailable
from services.decisions.human import store
from services.decisions.human.rules import (
    HumanDecisionListing,
    HumanInput,
    HumanInputSource,
    InvalidHumanInput,
    PageKey,
    SourceCursor,
    Subject,
    human_decision,
    next_cursor,
    plan_import,
    plan_in_force,
    source_matches,
)
from services.decisions.human.sources import SourceError, SourceTimeout, SourceUnavailable
from services.decisions.human.store import HumanDecisionRow, SubjectRow

_log = logging.getLogger(__name__)

Clock = Callable[[], datetime]


def utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True)
class Lease:
    subject_id: str
    # Oldest written first: the last is the newest intent, and every one
    # outranks the agent's own earlier decisions on the subject.
    decisions: list[HumanDecisionRow]
    imported: int


async def register_subject(engine: AsyncEngine, subject: Subject) -> SubjectRow:
    """Create or replace a subject's source and accepted plan, keeping the plan history."""
    async with engine.begin() as conn:
        previous = await store.get_subject(conn, subject_id=subject.id, lock=True)
        row = await store.upsert_subject(conn, subject_id=subject.id, source=subject.source, plan_ref=subject.plan_ref)
        if row.plan_ref != (previous.plan_ref if previous else None):
            await store.add_plan_change(conn, subject_id=subject.id, plan_ref=row.plan_ref)
    return row


async def lease(
    engine: AsyncEngine, sources: Mapping[str, HumanInputSource], subject_id: str, *, clock: Clock = utc_now
) -> Lease:
    """Reconcile the subject's source, then answer with all its human decisions.

    The subject's row stays locked while its source is read, so concurrent
    leases of one subject take turns: the second reads after the cursor the
    first committed and finds nothing new. The unique provenance key stands
    behind the lock for any writer that does not take it.
    """
    async with engine.begin() as conn:
        subject = await store.get_subject(conn, subject_id=subject_id, lock=True)
        if subject is None:
            raise _unknown(subject_id)
        imported = await _reconcile(conn, sources, subject, clock())
        decisions = await store.list_decisions(conn, subject_id=subject_id)
    return Lease(subject_id=subject_id, decisions=decisions, imported=imported)


async def _reconcile(
    conn: AsyncConnection, sources: Mapping[str, HumanInputSource], subject: SubjectRow, observed_at: datetime
) -> int:
    source = source_matches(subject.source, sources.keys())
    if source is None:
        return 0
    cursor = SourceCursor(subject_id=subject.id, source=source, position=subject.cursor)
    details = {"subject_id": subject.id, "source": source}
    try:
        inputs, returned = await sources[source].fetch_after(
            Subject(id=subject.id, source=subject.source, plan_ref=subject.plan_ref), cursor
        )
    except SourceError as exc:
        _log.warning(
            "human-input source failed; lease refused",
            extra={"subject_id": subject.id, "source": source, "reason": exc.reason},
        )
        raise _refusal(exc, details) from None

    for item in inputs:
        if item.provider != source or item.subject_id != subject.id:
            # Recording it under this subject would hand one subject's
            # comment to another as an authoritative decision.
            raise Conflict(
                f"lease refused: source {source} returned an input of {item.provider}/{item.subject_id}",
                code="HUMAN_SOURCE_MISMATCH",
                details={**details, "external_id": item.external_id},
            )
    owners = await store.owners_of(
        conn, provider=source, external_ids=[item.external_id for item in inputs if item.external_id.strip()]
    )
    elsewhere = sorted(eid for eid, owner in owners.items() if owner != subject.id)
    if elsewhere:
        raise _owned_elsewhere(source, elsewhere[0], owners[elsewhere[0]], details)
    try:
        plan = plan_import(inputs, [eid for eid, owner in owners.items() if owner == subject.id])
    except InvalidHumanInput as exc:
        raise Conflict(
            f"lease refused: human-input source {source} sent an input that cannot be imported: {exc}",
            code="HUMAN_INPUT_INVALID",
            details={**details, "field": exc.field, "reason": exc.problem},
        ) from None

    history = await store.list_plan_changes(conn, subject_id=subject.id)
    imported = 0
    for item in plan.to_record:
        decision = human_decision(item, plan_ref=plan_in_force(history, item.written_at), observed_at=observed_at)
        row, created = await store.insert_decision(conn, decision=decision)
        if created:
            imported += 1
        elif row.subject_id != subject.id:
            # Pushed meanwhile, for another subject, by a writer that does not take this lock.
            raise _owned_elsewhere(source, item.external_id, row.subject_id, details)

    # Only now, in the transaction that holds every decision derived from
    # the range, may the cursor move past it.
    advanced = next_cursor(cursor, returned)
    if advanced is not None:
        await store.set_cursor(conn, subject_id=subject.id, position=advanced.position)
    return imported


async def record_input(
    engine: AsyncEngine, item: HumanInput, *, clock: Clock = utc_now
) -> tuple[HumanDecisionRow, bool]:
    """Record one pushed input; a redelivery answers the decision already recorded.

    A subject seen here first is created without a source: a source may push
    an input only once, so refusing it would lose a human decision for good.
    """
    async with engine.begin() as conn:
        await store.ensure_subject(conn, subject_id=item.subject_id)
        history = await store.list_plan_changes(conn, subject_id=item.subject_id)
        decision = human_decision(item, plan_ref=plan_in_force(history, item.written_at), observed_at=clock())
        row, created = await store.insert_decision(conn, decision=decision)
        if row.subject_id != item.subject_id:
            raise _owned_elsewhere(
                item.provider,
                item.external_id,
                row.subject_id,
                {"subject_id": item.subject_id, "source": item.provider},
            )
    return row, created


async def list_page(
    engine: AsyncEngine, listing: HumanDecisionListing
) -> tuple[list[HumanDecisionRow], PageKey | None]:
    limit = listing.limit
    async with engine.connect() as conn:
        if await store.get_subject(conn, subject_id=listing.subject_id) is None:
            raise _unknown(listing.subject_id)
        rows = await store.list_decisions(conn, subject_id=listing.subject_id, after=listing.after, limit=limit + 1)
    if len(rows) <= limit:
        return rows, None
    last = rows[limit - 1]
    return rows[:limit], PageKey(written_at=last.written_at, seq=last.seq)


def _unknown(subject_id: str) -> NotFound:
    return NotFound(
        f"subject {subject_id!r} is not registered; PUT /internal/subjects/{{id}} first",
        code="SUBJECT_NOT_FOUND",
        details={"subject_id": subject_id},
    )


def _refusal(error: SourceError, details: dict[str, str]) -> Unavailable | Conflict:
    """A failed read refuses the lease: 503 when retrying may help, 409 when the answer is wrong."""
    details = {**details, "reason": error.reason}
    if isinstance(error, SourceTimeout):
        return Unavailable(
            f"lease refused: human-input source {error.source} timed out ({error.reason})",
            code="HUMAN_SOURCE_TIMEOUT",
            details=details,
        )
    if isinstance(error, SourceUnavailable):
        return Unavailable(
            f"lease refused: human-input source {error.source} is unavailable ({error.reason})",
            code="HUMAN_SOURCE_UNAVAILABLE",
            details=details,
        )
    return Conflict(
        f"lease refused: human-input source {error.source} answered malformed ({error.reason})",
        code="HUMAN_SOURCE_MALFORMED",
        details=details,
    )


def _owned_elsewhere(source: str, external_id: str, owner: str, details: dict[str, str]) -> Conflict:
    return Conflict(
        f"input {external_id!r} of {source} is already recorded for subject {owner!r}",
        code="HUMAN_INPUT_OWNED_ELSEWHERE",
        details={**details, "external_id": external_id, "owner": owner},
    )
