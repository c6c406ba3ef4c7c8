"""Decision memory's units of work: record decisions, judge them, read them back.

Each function opens what it needs (a direct connection, a transaction of
the shared engine), applies the rules and calls the store, and answers in
domain values; the servicer only decodes before and encodes after.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Protocol

from sqlalchemy.ext.asyncio import AsyncEngine

from services.common import paging
from services.common.callers import AgentScope
from services.common.errors import DomainError, InvalidArgument
from services.decisions import queries, rules, store
from services.decisions.connections import DirectConnections
from services.decisions.embedding import Embedder
from services.decisions.precedent import PrecedentSearch
from services.decisions.queries import DecisionListing, DetailQuery, PendingListing
from services.decisions.rules import (
    AuditEntry,
    DecisionDraft,
    Judgement,
    NewDecision,
    PendingVerdicts,
    SimilarSummary,
    UnreadableDecision,
)
from services.decisions.store import DecisionRow, OutcomeChangeRow, OutcomeCountRow, PendingRow

Clock = Callable[[], datetime]
# (id, created) for a recorded decision, (id, why) for a refused one.
RecordResult = tuple[str, bool] | tuple[str, DomainError]


def utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True)
class DecisionDetail:
    decision: DecisionRow
    # Oldest first.
    history: list[OutcomeChangeRow]
    # Nearest first, without their contexts.
    precedents: list[DecisionRow]
    summary: SimilarSummary


async def record(
    records: DirectConnections,
    embedder: Embedder,
    drafts: Sequence[DecisionDraft | UnreadableDecision],
    *,
    scope: AgentScope,
    embedding_dimension: int,
    clock: Clock = utc_now,
) -> list[RecordResult]:
    """Validate, embed and store decisions in one statement: (id, created or why refused) for each.

    `scope` is what the verified caller may act for: a decision for an
    agent outside it is refused on its own, the others still recorded.
    """
    now = clock()
    # (id, why) for a refused decision, (id, key, decision) for one to store.
    checked: list[tuple[str, DomainError] | tuple[str, uuid.UUID, NewDecision]] = []
    recordings: dict[uuid.UUID, store.Recording] = {}
    for draft in drafts:
        if isinstance(draft, UnreadableDecision):
            checked.append((draft.id, draft.error))
            continue
        try:
            decision = rules.decision_to_record(draft, now=now, embedding_dimension=embedding_dimension)
        except InvalidArgument as error:
            checked.append((draft.id, error))
            continue
        refusal = rules.agent_refusal(scope, decision.agent_id)
        if refusal is not None:
            checked.append((draft.id, refusal))
            continue
        decision_id = decision.id or uuid.uuid4()
        checked.append((str(decision_id), decision_id, decision))
        # The same id twice in one call is stored once; the later copy
        # is then checked against it like any retry.
        if decision_id not in recordings:
            embedding = decision.embedding or embedder.embed(decision.context)
            recordings[decision_id] = store.Recording(decision_id, decision, store.vector_bytes(embedding))
    created: set[uuid.UUID] = set()
    stored: dict[uuid.UUID, rules.DecisionIdentity] = {}
    if recordings:
        async with records.connection() as conn:
            created = await store.insert_decisions(conn, recordings=list(recordings.values()))
            retried = [decision_id for decision_id in recordings if decision_id not in created]
            stored = await store.recorded_identities(conn, ids=retried) if retried else {}
    stored.update((decision_id, rules.identity(recordings[decision_id].decision)) for decision_id in created)
    results: list[RecordResult] = []
    for entry in checked:
        if len(entry) == 2:
            results.append(entry)
            continue
        text_id, decision_id, decision = entry
        if decision_id in created and recordings[decision_id].decision is decision:
            results.append((text_id, True))
        else:
            conflict = rules.id_reuse(text_id, decision, stored.get(decision_id))
            results.append((text_id, False) if conflict is None else (text_id, conflict))
    return results


class AuditLog(Protocol):
    """Where a person's verdict is audited: the registry (services.decisions.clients)."""

    async def append_audit(self, entry: AuditEntry) -> None: ...


async def judge(engine: AsyncEngine, judgement: Judgement, *, registry: AuditLog) -> DecisionRow:
    """Set one decision's outcome and keep the change in its history.

    A person's verdict is committed first and audited after, as an erasure
    is (services.decisions.erasure): a registry that does not answer fails
    the call, never the verdict, which waits in the history for its audit
    row. The same person's next verdict call on the decision, a retry of
    the same verdict included, appends every row still waiting.
    """
    rules.check_judge(judgement)
    audited = rules.audits_verdict(judgement)
    async with engine.begin() as conn:
        current = await store.get_decision(conn, id=judgement.decision_id, lock=True)
        if current is None:
            raise rules.decision_not_found(judgement.decision_id)
        row = current
        if rules.rejudges(
            judgement, outcome=current.outcome, reason=current.outcome_reason, judged_by=current.judged_by
        ):
            row = await store.set_outcome(
                conn,
                id=judgement.decision_id,
                old_outcome=current.outcome,
                outcome=judgement.outcome.value,
                reason=judgement.reason,
                judged_by=judgement.judged_by,
                changed_by=judgement.changed_by,
                changed_by_email=judgement.changed_by_email,
                audit_id=uuid.uuid4() if audited else None,
            )
        waiting = (
            await store.unaudited_verdicts(conn, decision_id=judgement.decision_id, changed_by=judgement.changed_by)
            if audited
            else []
        )
    for verdict in waiting:
        await registry.append_audit(rules.verdict_audit(verdict))
        async with engine.begin() as conn:
            await store.verdict_audited(conn, audit_id=verdict.audit_id)
    return row


async def judge_pending(engine: AsyncEngine, batch: PendingVerdicts) -> list[uuid.UUID]:
    """Judge the decisions of a batch still pending; the ids this call judged."""
    async with engine.begin() as conn:
        return await store.set_pending_outcomes(conn, verdicts=batch.verdicts, judged_by=batch.judged_by)


async def list_decisions(engine: AsyncEngine, listing: DecisionListing) -> tuple[list[DecisionRow], str]:
    """One page of decisions, newest first, and the cursor of the next ("" after the last)."""
    async with engine.connect() as conn:
        known = await store.distinct_values(conn, "model") if listing.model_contains else []
        models = queries.listed_models(known, model=listing.model, model_contains=listing.model_contains)
        if models == []:
            return [], ""
        statement = store.listing_statement(
            decision_type=listing.decision_type,
            outcome=listing.outcome,
            agent_id=listing.agent_id,
            after=listing.after,
            limit=listing.limit + 1,
            models=models,
            decided_from=listing.decided_from,
            decided_to=listing.decided_to,
            subject_id=listing.subject_id,
            rollout_id=listing.rollout_id,
        )
        rows = await store.list_decisions(conn, statement)
    return paging.one_page(rows, listing.limit, lambda row: (row.decided_at, row.id))


async def list_facets(engine: AsyncEngine, days: int, *, now: datetime) -> queries.Facets:
    """The decision types, agents and models of decisions made in the last `days` days."""
    since = now - timedelta(days=days)
    async with engine.connect() as conn:
        values = [await store.distinct_values(conn, column, since=since) for column in store.FACET_COLUMNS]
    decision_types, agent_ids, models = values
    return queries.Facets(window_days=days, decision_types=decision_types, agent_ids=agent_ids, models=models)


async def count_rollout_arms(engine: AsyncEngine, rollout_ids: Sequence[uuid.UUID]) -> list[rules.ArmCount]:
    """Every arm of every rollout asked for, with what its decisions came to so far."""
    async with engine.connect() as conn:
        rows = await store.count_rollout_arms(conn, rollout_ids=rollout_ids)
    return rules.arm_counts(rollout_ids, ((row.rollout_id, row.arm, row.outcome, row.count) for row in rows))


async def weigh_decisions(engine: AsyncEngine, asked: rules.Weighing) -> rules.DecisionWeights:
    """The off-policy estimate's sums over one decision type's judged decisions, for one model."""
    async with engine.connect() as conn:
        return await store.weigh_decisions(conn, decision_type=asked.decision_type, model=asked.model)


async def count_executions(engine: AsyncEngine, asked: rules.ExecutionsAsked) -> list[rules.ExecutionCount]:
    """One agent's decisions by type and by how their action was carried out, with their outcomes."""
    async with engine.connect() as conn:
        rows = await store.count_executions(conn, agent_id=asked.agent_id, decision_type=asked.decision_type)
    return rules.execution_counts((row.decision_type, row.execution, row.outcome, row.count) for row in rows)


async def count_judged_windows(engine: AsyncEngine, window: int) -> list[rules.JudgedWindow]:
    """Every agent × decision type's latest two windows of judged decisions."""
    async with engine.connect() as conn:
        return await store.count_judged_windows(conn, window=window)


async def detail(engine: AsyncEngine, precedents: PrecedentSearch, query: DetailQuery) -> DecisionDetail:
    """One decision with its outcome history and its nearest judged precedents."""
    async with engine.connect() as conn:
        row = await store.get_decision(conn, id=query.decision_id)
        if row is None:
            raise rules.decision_not_found(query.decision_id)
        history = await store.outcome_history(conn, decision_id=query.decision_id)
        embedding = await store.get_embedding(conn, id=query.decision_id) if query.precedents else None
    found: list[DecisionRow] = []
    if embedding is not None:
        # One more than wanted: a judged decision is its own nearest neighbour.
        nearest = await precedents.nearest(
            decision_type=row.decision_type, embedding=store.vector_bytes(embedding), k=query.precedents + 1
        )
        # The context holds rider and customer data; this answer is for the console.
        found = [dataclasses.replace(p, context_json=None) for p in nearest if p.id != query.decision_id][
            : query.precedents
        ]
    return DecisionDetail(row, history, found, rules.similar_summary(p.outcome or "" for p in found))


async def list_pending(
    engine: AsyncEngine, listing: PendingListing, *, clock: Clock = utc_now
) -> tuple[list[PendingRow], str]:
    """One batch of pending decisions, oldest first, and the cursor of the next ("" after the last)."""
    before = listing.decided_before or clock()
    async with engine.connect() as conn:
        rows = await store.list_pending(conn, decided_before=before, after=listing.after, limit=listing.limit + 1)
    return paging.one_page(rows, listing.limit, lambda row: (row.decided_at, row.id))


async def count_outcomes(
    engine: AsyncEngine, *, decided_since: datetime | None, decided_before: datetime | None
) -> list[OutcomeCountRow]:
    async with engine.connect() as conn:
        return await store.count_outcomes(conn, decided_since=decided_since, decided_before=decided_before)


async def count_outcome_series(
    engine: AsyncEngine, asked: rules.OutcomeSeriesAsked, *, now: datetime
) -> tuple[rules.OutcomeWindow, list[rules.DecisionTypeSeries]]:
    """Each decision type's outcomes per bucket of decision time over the asked window, `now` ending the last N days."""
    window = rules.outcome_window(now, asked)
    async with engine.connect() as conn:
        rows = await store.count_outcome_series(
            conn,
            start=window.start,
            end=window.end,
            bucket_seconds=window.bucket_seconds,
            decision_type=asked.decision_type,
        )
    return window, rules.outcome_series(window, rows)
