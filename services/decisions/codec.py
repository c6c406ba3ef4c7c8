"""Decision memory records to and from protobuf: the only module of the
decision-memory half that sees wire types.

Decoding refuses bad input here, naming the field, and answers a plain
value of the rules (rules.py, queries.py) for a flow to act on; encoding
turns a flow's answer into the reply.
"""

from __future__ import annotations

import json
import struct
import uuid
from collections.abc import Iterable, Iterator, Sequence
from datetime import UTC, datetime
from typing import Any

from google.protobuf.timestamp_pb2 import Timestamp

from outrider.v1 import common_pb2, decisions_pb2, outcomes_pb2, registry_pb2
from outrider.wire import MalformedJson, json_bytes, json_object, timestamp, timestamp_fields
from services.common import callers, guards, paging
from services.common.errors import DomainError, InvalidArgument
from services.common.grpc_server import status_of
from services.decisions import queries, rules
from services.decisions.memory import DecisionDetail, RecordResult
from services.decisions.queries import (
    DEFAULT_PENDING_BATCH,
    MAX_PENDING_BATCH,
    MAX_RECORD_BATCH,
    MAX_VERDICTS,
    DecisionListing,
    DetailQuery,
    PendingListing,
    SimilarQuery,
)
from services.decisions.rules import (
    MAX_CONTEXT_BYTES,
    MAX_TEXT_CHARS,
    AuditEntry,
    DecisionDraft,
    Erasure,
    ErasureRequest,
    InvalidDecision,
    Judgement,
    PendingVerdicts,
    SimilarSummary,
    UnreadableDecision,
    Verdict,
)
from services.decisions.store import DecisionRow, OutcomeChangeRow, OutcomeCountRow, PendingRow

# ─── In ────────────────────────────────────────────────────────────────────


def _uuid(value: str, field: str) -> uuid.UUID:
    try:
        return uuid.UUID(value)
    except ValueError:
        raise InvalidArgument(f"{field}: must be a UUID, got {value!r}", field=field) from None


def context_from_proto(data: bytes) -> dict[str, Any] | None:
    """A request's context object; None when none was sent."""
    if len(data) > MAX_CONTEXT_BYTES:
        raise InvalidDecision("context", f"must be at most {MAX_CONTEXT_BYTES:,} bytes of JSON, got {len(data):,}")
    try:
        context = json_object(data)
    except MalformedJson as error:
        raise InvalidArgument(f"context: {error}", field="context") from None
    # The context is stored as jsonb, which holds no lone surrogate.
    guards.texts_in("context", context, error=InvalidDecision)
    return context


def _instant(stamp: Timestamp, present: bool, field: str) -> datetime | None:
    """A Timestamp from outside, held to DESIGN §3's bounds before it becomes a datetime.

    The rules refuse a decided_at in the future; the guard refuses what no
    rule could even compare (year 1, year 9999, seconds past the calendar).
    """
    if not present or (stamp.seconds == 0 and stamp.nanos == 0):
        return None
    return guards.epoch_instant(field, stamp.seconds, stamp.nanos, now=datetime.now(UTC))


def _agent_id(value: str) -> str:
    # Blank is left for the rules to call "required"; anything else is one
    # identifier however it was typed (services.common.guards.identifier).
    if not value.strip():
        return value
    return guards.identifier("agent_id", value.strip(), max_length=MAX_TEXT_CHARS, error=InvalidDecision)


def embedding_from_proto(values: Sequence[float]) -> tuple[float, ...]:
    """A repeated float field (an embedding) as a tuple of floats.

    Iterating the field makes each float through the protobuf runtime, one
    call per value: a tenth of a millisecond for 384 of them, on every
    search. Serialized on its own, the field is one packed run of
    little-endian float32s (proto3's encoding of repeated scalars), which
    struct reads in a single call.
    """
    count = len(values)
    if not count:
        return ()
    alone = decisions_pb2.FindSimilarRequest()
    alone.embedding.extend(values)
    data = alone.SerializeToString()
    return struct.unpack_from(f"<{count}f", data, len(data) - 4 * count)


def draft_from_proto(request: decisions_pb2.RecordDecisionRequest) -> DecisionDraft:
    """A decision to record as sent; raises only when its context cannot be read."""
    return DecisionDraft(
        id=request.id,
        decision_type=request.decision_type,
        agent_id=_agent_id(request.agent_id),
        subject_id=request.subject_id,
        action=request.action,
        confidence=request.confidence if request.HasField("confidence") else None,
        reasoning=request.reasoning,
        model=request.model,
        context=context_from_proto(request.context_json),
        embedding=embedding_from_proto(request.embedding),
        decided_at=_instant(request.decided_at, request.HasField("decided_at"), "decided_at"),
        rollout=(request.rollout.id, request.rollout.arm) if request.HasField("rollout") else None,
        model_propensity=request.model_propensity if request.HasField("model_propensity") else None,
        execution=request.execution,
    )


def drafts_from_proto(request: decisions_pb2.RecordDecisionsRequest) -> list[DecisionDraft | UnreadableDecision]:
    """A batch to record; a decision that cannot be read is refused alone, as one that breaks a rule is."""
    rules.check_batch("decisions", len(request.decisions), MAX_RECORD_BATCH)
    drafts: list[DecisionDraft | UnreadableDecision] = []
    for message in request.decisions:
        try:
            drafts.append(draft_from_proto(message))
        except InvalidArgument as error:
            drafts.append(UnreadableDecision(message.id, error))
    return drafts


def similar_query_from_proto(request: decisions_pb2.FindSimilarRequest, *, dimension: int) -> SimilarQuery:
    return queries.similar_query(
        decision_type=request.decision_type,
        k=request.k if request.HasField("k") else None,
        embedding=embedding_from_proto(request.embedding),
        context=context_from_proto(request.context_json),
        dimension=dimension,
    )


def searches_from_proto(
    message: decisions_pb2.PrecedentQueries,
) -> Iterator[tuple[int, decisions_pb2.FindSimilarRequest]]:
    """The searches of one stream message: (tag, search) each."""
    for query in message.queries:
        yield query.tag, query.search


def judgement_from_proto(request: decisions_pb2.SetOutcomeRequest) -> Judgement:
    """The verdict asked for, and who gives it: the verified caller, never a
    request field (the request's `judged_by` is not read)."""
    decision_id = _uuid(request.id, "id")
    outcome = rules.parse_outcome(request.outcome)
    person = callers.principal()
    judged_by = rules.verdict_judge(person=person is not None, engine=callers.engine_name())
    return Judgement(
        decision_id=decision_id,
        outcome=outcome,
        judged_by=judged_by,
        reason=request.reason.strip() or None,
        changed_by=person.sub if person else "",
        changed_by_email=person.email if person else "",
        writer=person is not None and person.writer,
    )


def pending_verdicts_from_proto(request: decisions_pb2.SetOutcomesRequest) -> PendingVerdicts:
    """The sweep's verdicts; the judge is the verified caller, the request's `judged_by` is not read."""
    judged_by = rules.sweep_judge(person=callers.principal() is not None, engine=callers.engine_name())
    rules.check_batch("verdicts", len(request.verdicts), MAX_VERDICTS)
    verdicts: list[Verdict] = []
    seen: set[uuid.UUID] = set()
    for index, verdict in enumerate(request.verdicts):
        field = f"verdicts[{index}]"
        decision_id = _uuid(verdict.id, f"{field}.id")
        if decision_id in seen:
            raise InvalidArgument(f"{field}.id: {decision_id} appears twice", field=f"{field}.id")
        seen.add(decision_id)
        outcome = rules.parse_outcome(verdict.outcome, f"{field}.outcome")
        verdicts.append(Verdict(decision_id, outcome.value, verdict.reason.strip() or None))
    return PendingVerdicts(judged_by, tuple(verdicts))


def listing_from_proto(request: decisions_pb2.ListDecisionsRequest) -> DecisionListing:
    decided_from = _instant(request.decided_from, request.HasField("decided_from"), "decided_from")
    decided_to = _instant(request.decided_to, request.HasField("decided_to"), "decided_to")
    outcome = queries.outcome_filter(request.outcome)
    limit = paging.page_limit(request.page.limit)
    after = paging.decode_cursor(request.page.cursor, queries.page_key)
    queries.decided_range(decided_from, decided_to)
    return DecisionListing(
        decision_type=request.decision_type or None,
        outcome=outcome,
        agent_id=request.agent_id or None,
        model=request.model or None,
        decided_from=decided_from,
        decided_to=decided_to,
        after=after,
        limit=limit,
        subject_id=request.subject_id or None,
        rollout_id=_uuid(request.rollout_id, "rollout_id") if request.rollout_id else None,
        model_contains=request.model_contains or None,
    )


def detail_query_from_proto(request: decisions_pb2.GetDecisionRequest) -> DetailQuery:
    decision_id = _uuid(request.id, "id")
    wanted = queries.detail_precedents(request.precedents if request.HasField("precedents") else None)
    return DetailQuery(decision_id=decision_id, precedents=wanted)


def context_read_from_proto(request: decisions_pb2.GetDecisionContextRequest) -> uuid.UUID:
    return _uuid(request.id, "id")


def context_to_proto(read: rules.RedactedContext) -> decisions_pb2.DecisionContext:
    return decisions_pb2.DecisionContext(
        decision_id=str(read.decision_id),
        context_json=json_bytes(read.context),
        redacted=dict(read.redacted),
        erased_at=timestamp(read.erased_at),
    )


def pending_listing_from_proto(request: decisions_pb2.ListPendingRequest) -> PendingListing:
    limit = paging.page_limit(request.limit, default=DEFAULT_PENDING_BATCH, maximum=MAX_PENDING_BATCH)
    after = paging.decode_cursor(request.after_cursor, queries.page_key, field="after_cursor")
    before = _instant(request.decided_before, request.HasField("decided_before"), "decided_before")
    return PendingListing(decided_before=before, after=after, limit=limit)


def counted_span_from_proto(request: decisions_pb2.CountOutcomesRequest) -> tuple[datetime | None, datetime | None]:
    """The decisions to count: those made in [since, before); an unset end is open."""
    since = _instant(request.decided_since, request.HasField("decided_since"), "decided_since")
    before = _instant(request.decided_before, request.HasField("decided_before"), "decided_before")
    return since, before


# ─── Out ───────────────────────────────────────────────────────────────────


def recorded_to_proto(decision_id: str, created: bool) -> decisions_pb2.RecordDecisionResponse:
    return decisions_pb2.RecordDecisionResponse(id=decision_id, created=created)


def agent_refusals_to_proto(decisions: int) -> decisions_pb2.AgentRefusals:
    return decisions_pb2.AgentRefusals(decisions=decisions)


def record_results_to_proto(results: Sequence[RecordResult]) -> decisions_pb2.RecordDecisionsResponse:
    """(id, created) for a recorded decision, (id, error) for a refused one."""
    items = []
    for decision_id, outcome in results:
        if isinstance(outcome, DomainError):
            items.append(
                decisions_pb2.RecordDecisionResult(
                    id=decision_id, error_code=outcome.code, error_message=outcome.message
                )
            )
        else:
            items.append(decisions_pb2.RecordDecisionResult(id=decision_id, created=outcome))
    return decisions_pb2.RecordDecisionsResponse(results=items)


def _decision_fields(row: DecisionRow) -> dict[str, Any]:
    return {
        "id": str(row.id),
        "decision_type": row.decision_type,
        "agent_id": row.agent_id,
        "subject_id": row.subject_id,
        "action": row.action,
        "confidence": row.confidence,
        "reasoning": row.reasoning or "",
        "model": row.model or "",
        "decided_at": timestamp(row.decided_at),
        "outcome": row.outcome or "",
        "outcome_reason": row.outcome_reason or "",
        "judged_at": timestamp(row.judged_at),
        "judged_by": row.judged_by or "",
        "similarity": row.similarity or 0.0,
        "context_json": row.context_json or b"",
        "rollout": _rollout_arm(row),
        # None leaves the optional field unset: no propensity was said.
        "model_propensity": row.model_propensity,
        "execution": row.execution or "",
    }


def _rollout_arm(row: DecisionRow) -> common_pb2.RolloutArm | None:
    if row.rollout_id is None or row.rollout_arm is None:
        return None
    return common_pb2.RolloutArm(id=str(row.rollout_id), arm=row.rollout_arm)


def counted_rollouts_from_proto(request: decisions_pb2.CountRolloutArmsRequest) -> list[uuid.UUID]:
    return rules.counted_rollouts(list(request.rollout_ids))


def arm_counts_to_proto(counts: Iterable[rules.ArmCount]) -> decisions_pb2.CountRolloutArmsResponse:
    return decisions_pb2.CountRolloutArmsResponse(
        items=[
            decisions_pb2.ArmCount(
                rollout_id=str(count.rollout_id),
                arm=count.arm.value,
                successes=count.successes,
                failures=count.failures,
                unknown=count.unknown,
                pending=count.pending,
            )
            for count in counts
        ]
    )


def weighing_from_proto(request: decisions_pb2.WeighDecisionsRequest) -> rules.Weighing:
    return rules.weighing(decision_type=request.decision_type, model=request.model)


def weights_to_proto(weights: rules.DecisionWeights) -> decisions_pb2.DecisionWeights:
    return decisions_pb2.DecisionWeights(
        decisions=weights.decisions,
        judged=weights.judged,
        unknown=weights.unknown,
        pending=weights.pending,
        logged_successes=weights.logged_successes,
        with_propensity=weights.with_propensity,
        matched=weights.matched,
        sum_w=weights.sum_w,
        sum_w_r=weights.sum_w_r,
        sum_w2=weights.sum_w2,
        sum_w2_r=weights.sum_w2_r,
        sum_inverse_all=weights.sum_inverse_all,
    )


def executions_from_proto(request: decisions_pb2.CountExecutionsRequest) -> rules.ExecutionsAsked:
    return rules.executions_asked(agent_id=request.agent_id, decision_type=request.decision_type)


def execution_counts_to_proto(counts: Iterable[rules.ExecutionCount]) -> decisions_pb2.CountExecutionsResponse:
    return decisions_pb2.CountExecutionsResponse(
        items=[
            decisions_pb2.ExecutionCount(
                decision_type=count.decision_type,
                execution=count.execution.value if count.execution else "",
                successes=count.successes,
                failures=count.failures,
                unknown=count.unknown,
                pending=count.pending,
            )
            for count in counts
        ]
    )


def judged_window_from_proto(request: decisions_pb2.CountJudgedWindowsRequest) -> int:
    return rules.judged_window(request.window)


def outcome_series_from_proto(request: decisions_pb2.CountOutcomeSeriesRequest) -> rules.OutcomeSeriesAsked:
    return rules.outcome_series_asked(
        days=request.days if request.HasField("days") else None,
        bucket_seconds=request.bucket_seconds if request.HasField("bucket_seconds") else None,
        decision_type=request.decision_type,
        start=_instant(request.start, request.HasField("start"), "start"),
        end=_instant(request.end, request.HasField("end"), "end"),
    )


def outcome_series_to_proto(
    window: rules.OutcomeWindow, series: Iterable[rules.DecisionTypeSeries]
) -> decisions_pb2.OutcomeSeries:
    return decisions_pb2.OutcomeSeries(
        window_days=window.days or 0,
        bucket_seconds=window.bucket_seconds,
        start=timestamp(window.start),
        end=timestamp(window.end),
        types=[
            decisions_pb2.DecisionTypeSeries(
                decision_type=one.decision_type,
                buckets=[
                    decisions_pb2.OutcomeBucket(
                        start=timestamp(bucket.start),
                        successes=bucket.successes,
                        failures=bucket.failures,
                        unknown=bucket.unknown,
                        pending=bucket.pending,
                    )
                    for bucket in one.buckets
                ],
            )
            for one in series
        ],
    )


def judged_windows_to_proto(windows: Iterable[rules.JudgedWindow]) -> decisions_pb2.CountJudgedWindowsResponse:
    return decisions_pb2.CountJudgedWindowsResponse(
        items=[
            decisions_pb2.JudgedWindow(
                agent_id=window.agent_id,
                decision_type=window.decision_type,
                latest_judged=window.latest_judged,
                latest_successes=window.latest_successes,
                previous_judged=window.previous_judged,
                previous_successes=window.previous_successes,
                latest_decided_at=timestamp(window.latest_decided_at),
            )
            for window in windows
        ]
    )


def decision_to_proto(row: DecisionRow) -> decisions_pb2.Decision:
    return decisions_pb2.Decision(**_decision_fields(row))


def similar_to_proto(rows: Sequence[DecisionRow], summary: SimilarSummary) -> decisions_pb2.FindSimilarResponse:
    # Every search builds ten of these; this is decision_to_proto's message
    # in two thirds of its time. Each decision is built in place (a list of
    # messages handed to the constructor would be copied in one by one), its
    # timestamps as plain fields, and an absent column as None, which a
    # message constructor takes as "left unset", the "" or 0 it stands for.
    message = decisions_pb2.FindSimilarResponse(summary=summary_to_proto(summary))
    add = message.items.add
    for row in rows:
        add(
            id=str(row.id),
            decision_type=row.decision_type,
            agent_id=row.agent_id,
            subject_id=row.subject_id,
            action=row.action,
            confidence=row.confidence,
            reasoning=row.reasoning,
            model=row.model,
            decided_at=timestamp_fields(row.decided_at),
            outcome=row.outcome,
            outcome_reason=row.outcome_reason,
            judged_at=timestamp_fields(row.judged_at),
            judged_by=row.judged_by,
            similarity=row.similarity,
            context_json=row.context_json,
        )
    return message


def detail_to_proto(detail: DecisionDetail) -> decisions_pb2.DecisionDetail:
    return decisions_pb2.DecisionDetail(
        decision=decision_to_proto(detail.decision),
        history=[change_to_proto(change) for change in detail.history],
        precedents=[decision_to_proto(p) for p in detail.precedents],
        summary=summary_to_proto(detail.summary),
    )


def decisions_page_to_proto(rows: Iterable[DecisionRow], cursor: str) -> decisions_pb2.ListDecisionsResponse:
    return decisions_pb2.ListDecisionsResponse(items=[decision_to_proto(row) for row in rows], next_cursor=cursor)


def summary_to_proto(summary: SimilarSummary) -> decisions_pb2.SimilarSummary:
    message = decisions_pb2.SimilarSummary(successes=summary.successes, failures=summary.failures)
    if summary.success_rate is not None:
        message.success_rate = summary.success_rate
    return message


def pending_to_proto(row: PendingRow) -> decisions_pb2.PendingDecision:
    return decisions_pb2.PendingDecision(
        id=str(row.id),
        decision_type=row.decision_type,
        subject_id=row.subject_id,
        decided_at=timestamp(row.decided_at),
        model=row.model or "",
    )


def pending_page_to_proto(rows: Iterable[PendingRow], cursor: str) -> decisions_pb2.ListPendingResponse:
    return decisions_pb2.ListPendingResponse(items=[pending_to_proto(row) for row in rows], next_cursor=cursor)


def judged_to_proto(judged: Iterable[uuid.UUID]) -> decisions_pb2.SetOutcomesResponse:
    return decisions_pb2.SetOutcomesResponse(judged_ids=[str(i) for i in judged])


def counts_to_proto(rows: Iterable[OutcomeCountRow]) -> decisions_pb2.CountOutcomesResponse:
    return decisions_pb2.CountOutcomesResponse(items=[count_to_proto(row) for row in rows])


def count_to_proto(row: OutcomeCountRow) -> decisions_pb2.OutcomeCount:
    return decisions_pb2.OutcomeCount(
        decision_type=row.decision_type, outcome=row.outcome or "", count=row.count, model=row.model or ""
    )


def change_to_proto(row: OutcomeChangeRow) -> decisions_pb2.OutcomeChange:
    return decisions_pb2.OutcomeChange(
        old_outcome=row.old_outcome or "",
        new_outcome=row.new_outcome,
        reason=row.reason or "",
        judged_by=row.judged_by,
        changed_by=row.changed_by,
        changed_by_email=row.changed_by_email,
        judged_at=timestamp(row.judged_at),
    )


def precedent_refusal(tag: int, error: DomainError | None) -> decisions_pb2.PrecedentAnswer:
    """One failed search of a stream, as a FindSimilar call would have failed;
    None is an unexpected failure, answered without its text."""
    if error is None:
        refusal = decisions_pb2.SearchRefusal(status="INTERNAL", code="INTERNAL", message="internal error")
    else:
        refusal = decisions_pb2.SearchRefusal(
            status=status_of(error).name,
            code=error.code,
            message=error.message,
            details_json=json.dumps(error.details, default=str).encode(),
        )
    return decisions_pb2.PrecedentAnswer(tag=tag, refused=refusal)


def precedent_found(tag: int, found: decisions_pb2.FindSimilarResponse) -> decisions_pb2.PrecedentAnswer:
    """One answered search of a stream."""
    return decisions_pb2.PrecedentAnswer(tag=tag, found=found)


def precedent_answers(ready: Sequence[decisions_pb2.PrecedentAnswer]) -> decisions_pb2.PrecedentAnswers:
    return decisions_pb2.PrecedentAnswers(answers=ready)


# ─── Erasure of one subject, and the calls it makes ───────────────────────


def erasure_from_proto(request: decisions_pb2.EraseSubjectRequest) -> ErasureRequest:
    return rules.erasure_request(subject_id=request.subject_id, confirm=request.confirm, reason=request.reason)


def erased_to_proto(erasure: Erasure) -> decisions_pb2.EraseSubjectResponse:
    erased = erasure.erased
    return decisions_pb2.EraseSubjectResponse(
        subject_id=erasure.subject_id,
        erased=decisions_pb2.ErasedCounts(
            decisions=erased.decisions, human_inputs=erased.human_inputs, facts=erased.facts
        ),
    )


def erase_facts_request(subject_id: str) -> outcomes_pb2.EraseSubjectFactsRequest:
    return outcomes_pb2.EraseSubjectFactsRequest(subject_id=subject_id)


def erased_facts_from_proto(reply: outcomes_pb2.EraseSubjectFactsResponse) -> int:
    return reply.facts


def append_audit_request(entry: AuditEntry) -> registry_pb2.AppendAuditRequest:
    return registry_pb2.AppendAuditRequest(
        request_id=str(entry.request_id),
        entity=entry.entity,
        entity_id=entry.entity_id,
        field=entry.field,
        old_json=json_bytes(dict(entry.old)) if entry.old is not None else b"",
        new_json=json_bytes(dict(entry.new)),
    )


def facet_days_from_proto(request: decisions_pb2.ListDecisionFacetsRequest) -> int:
    return queries.facet_days(request.days if request.HasField("days") else None)


def facets_to_proto(facets: queries.Facets) -> decisions_pb2.DecisionFacets:
    return decisions_pb2.DecisionFacets(
        window_days=facets.window_days,
        decision_types=facets.decision_types,
        agent_ids=facets.agent_ids,
        models=facets.models,
    )
