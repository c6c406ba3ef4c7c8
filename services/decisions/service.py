"""The decisions gRPC servicer: parse, apply a rule, call the store, encode.

The decision-memory RPCs live here; the human-decision RPCs come from the
HumanDecisionRpcs mixin.
"""

from __future__ import annotations

import asyncio
import dataclasses
import uuid
from collections.abc import AsyncIterator, Sequence
from datetime import UTC, datetime

import grpc

from outrider.rpc import batches
from outrider.v1 import decisions_pb2, decisions_pb2_grpc
from outrider.wire import timestamp_datetime
from services.common import callers, paging
from services.common.errors import Conflict, DomainError, InvalidArgument, NotFound, PermissionDenied
from services.common.grpc_server import answerable
from services.common.runtime import Runtime
from services.decisions import codec, queries, rules, store
from services.decisions.connections import DirectConnections
from services.decisions.embedding import Embedder, StructuredContextEmbedder
from services.decisions.human_service import HumanDecisionRpcs
from services.decisions.precedent import PrecedentSearch
from services.decisions.rules import JudgedBy, Outcome

# Searches one SearchPrecedents stream may have running at once: enough to
# keep an engine's concurrent decisions flowing, few enough that one stream
# cannot hold every database connection.
STREAM_SEARCHES_IN_FLIGHT = 32


def _now() -> datetime:
    return datetime.now(UTC)


def _uuid(value: str, field: str) -> uuid.UUID:
    try:
        return uuid.UUID(value)
    except ValueError:
        raise InvalidArgument(f"{field}: must be a UUID, got {value!r}", field=field) from None


def _identity(decision: rules.NewDecision) -> tuple[str, str, str, str]:
    return decision.decision_type, decision.agent_id, decision.subject_id, decision.action


async def find_precedents(
    request: decisions_pb2.FindSimilarRequest, *, dimension: int, embedder: Embedder, precedents: PrecedentSearch
) -> decisions_pb2.FindSimilarResponse:
    """One precedent search, however it arrived (a call or a stream); also
    run with no gRPC around it by bench/decisions/bench_floor.py."""
    query = queries.similar_query(
        decision_type=request.decision_type,
        k=request.k if request.HasField("k") else None,
        embedding=codec.embedding_from_proto(request.embedding),
        context=codec.context_from_proto(request.context_json),
        dimension=dimension,
    )
    vector = store.vector_bytes(query.embedding or embedder.embed(query.context or {}))
    rows = await precedents.nearest(decision_type=query.decision_type, embedding=vector, k=query.k)
    return codec.similar_to_proto(rows, rules.similar_summary(row.outcome or "" for row in rows))


class DecisionsService(HumanDecisionRpcs, decisions_pb2_grpc.DecisionsServicer):
    def __init__(
        self,
        runtime: Runtime,
        *,
        dimension: int,
        precedents: PrecedentSearch,
        records: DirectConnections,
        embedder: Embedder | None = None,
    ) -> None:
        self._runtime = runtime
        self._engine = runtime.engine
        self._settings = runtime.settings
        self._dimension = dimension
        self._embedder = embedder or StructuredContextEmbedder(dimension)
        if self._embedder.dimension != dimension:
            raise ValueError(f"the embedder makes {self._embedder.dimension} dimensions, the schema holds {dimension}")
        self._precedents = precedents
        self._records = records
        # A misconfigured human-input source stops the context here, at
        # start-up, rather than failing the first lease that needs it.
        self.human_sources()

    async def RecordDecision(
        self, request: decisions_pb2.RecordDecisionRequest, context: grpc.aio.ServicerContext
    ) -> decisions_pb2.RecordDecisionResponse:
        [(decision_id, outcome)] = await self._record([request])
        if isinstance(outcome, DomainError):
            raise outcome
        return decisions_pb2.RecordDecisionResponse(id=decision_id, created=outcome)

    async def RecordDecisions(
        self, request: decisions_pb2.RecordDecisionsRequest, context: grpc.aio.ServicerContext
    ) -> decisions_pb2.RecordDecisionsResponse:
        if len(request.decisions) > queries.MAX_RECORD_BATCH:
            raise InvalidArgument(
                f"decisions: at most {queries.MAX_RECORD_BATCH} per call, got {len(request.decisions)}",
                field="decisions",
            )
        return codec.record_results_to_proto(await self._record(request.decisions))

    def _new_decision(self, request: decisions_pb2.RecordDecisionRequest, now: datetime) -> rules.NewDecision:
        decision = rules.new_decision(
            id=request.id or None,
            decision_type=request.decision_type,
            agent_id=request.agent_id,
            subject_id=request.subject_id,
            action=request.action,
            confidence=request.confidence if request.HasField("confidence") else None,
            reasoning=request.reasoning or None,
            model=request.model or None,
            context=codec.context_from_proto(request.context_json),
            embedding=codec.embedding_from_proto(request.embedding),
            decided_at=timestamp_datetime(request.decided_at, request.HasField("decided_at")),
            now=now,
            embedding_dimension=self._dimension,
        )
        if decision.decided_at > now:
            # Within the clock-skew allowance the rules grant: the engine's
            # clock ran ahead, so the decision was made no later than now.
            decision = dataclasses.replace(decision, decided_at=now)
        return decision

    async def _record(
        self, requests: Sequence[decisions_pb2.RecordDecisionRequest]
    ) -> list[tuple[str, bool | DomainError]]:
        """Validate, embed and store decisions in one statement: (id, created or why refused) for each."""
        now = _now()
        checked: list[tuple[str, uuid.UUID | None, rules.NewDecision | InvalidArgument]] = []
        recordings: dict[uuid.UUID, store.Recording] = {}
        for request in requests:
            try:
                decision = self._new_decision(request, now)
            except InvalidArgument as error:
                checked.append((request.id, None, error))
                continue
            decision_id = decision.id or uuid.uuid4()
            checked.append((str(decision_id), decision_id, decision))
            # The same id twice in one call is stored once; the later copy
            # is then checked against it like any retry.
            if decision_id not in recordings:
                embedding = decision.embedding or self._embedder.embed(decision.context)
                recordings[decision_id] = store.Recording(decision_id, decision, store.vector_bytes(embedding))
        created: set[uuid.UUID] = set()
        stored: dict[uuid.UUID, tuple[str, str, str, str]] = {}
        if recordings:
            async with self._records.connection() as conn:
                created = await store.insert_decisions(conn, recordings=list(recordings.values()))
                retried = [decision_id for decision_id in recordings if decision_id not in created]
                stored = await store.recorded_identities(conn, ids=retried) if retried else {}
        stored.update((decision_id, _identity(recordings[decision_id].decision)) for decision_id in created)
        results: list[tuple[str, bool | DomainError]] = []
        for text_id, decision_id, decision in checked:
            if isinstance(decision, InvalidArgument):
                results.append((text_id, decision))
            elif decision_id in created and recordings[decision_id].decision is decision:
                results.append((text_id, True))
            elif stored.get(decision_id, _identity(decision)) != _identity(decision):
                # A retry repeats the same decision; the same id on a
                # different one is a caller reusing keys, and answering
                # "already recorded" would silently drop the second decision.
                results.append(
                    (
                        text_id,
                        Conflict(
                            f"id {text_id} is already recorded for a different decision",
                            code="DECISION_ID_REUSED",
                            details={"id": text_id},
                        ),
                    )
                )
            else:
                results.append((text_id, False))
        return results

    async def FindSimilar(
        self, request: decisions_pb2.FindSimilarRequest, context: grpc.aio.ServicerContext
    ) -> decisions_pb2.FindSimilarResponse:
        return await self._find_similar(request)

    async def SearchPrecedents(
        self, asked: AsyncIterator[decisions_pb2.PrecedentQueries], context: grpc.aio.ServicerContext
    ) -> AsyncIterator[decisions_pb2.PrecedentAnswers]:
        # The stream was admitted once, by the engine's key; each search in
        # it then costs what its own work costs, with no call to set up.
        answers: asyncio.Queue[decisions_pb2.PrecedentAnswer | None] = asyncio.Queue()
        slots = asyncio.Semaphore(STREAM_SEARCHES_IN_FLIGHT)
        running: set[asyncio.Task[None]] = set()

        async def answer(query: decisions_pb2.PrecedentQuery) -> None:
            try:
                found = await self._find_similar(query.search)
            except Exception as error:  # noqa: BLE001 - answered as this search's refusal
                answers.put_nowait(codec.precedent_refusal(query.tag, answerable(error)))
            else:
                answers.put_nowait(decisions_pb2.PrecedentAnswer(tag=query.tag, found=found))
            finally:
                slots.release()

        async def read() -> None:
            try:
                async for message in asked:
                    for query in message.queries:
                        # Past the cap the stream stops reading, and HTTP/2
                        # flow control holds the engine back instead of this
                        # memory.
                        await slots.acquire()
                        task = asyncio.create_task(answer(query))
                        running.add(task)
                        task.add_done_callback(running.discard)
                await asyncio.gather(*running)
            finally:
                answers.put_nowait(None)

        reader = asyncio.create_task(read())
        try:
            async for ready in batches(answers):
                yield decisions_pb2.PrecedentAnswers(answers=ready)
            await reader
        finally:
            # The engine went away or the stream broke: searches still
            # running have no one to answer.
            reader.cancel()
            for task in list(running):
                task.cancel()

    async def _find_similar(self, request: decisions_pb2.FindSimilarRequest) -> decisions_pb2.FindSimilarResponse:
        return await find_precedents(
            request, dimension=self._dimension, embedder=self._embedder, precedents=self._precedents
        )

    async def SetOutcome(
        self, request: decisions_pb2.SetOutcomeRequest, context: grpc.aio.ServicerContext
    ) -> decisions_pb2.Decision:
        decision_id = _uuid(request.id, "id")
        outcome = rules.parse_outcome(request.outcome)
        judged_by = rules.parse_judged_by(request.judged_by or JudgedBy.API.value)
        person = callers.principal()
        if judged_by is JudgedBy.HUMAN and (person is None or not person.writer):
            # An engine key reaches SetOutcome for its API verdicts; only a
            # role-1 person the gateway verified may give a human one.
            raise PermissionDenied("a human verdict needs a signed-in role-1 person", code="HUMAN_VERDICT_REFUSED")
        reason = request.reason.strip() or None
        async with self._engine.begin() as conn:
            current = await store.get_decision(conn, id=decision_id, lock=True)
            if current is None:
                raise NotFound(
                    f"decision {decision_id} does not exist",
                    code="DECISION_NOT_FOUND",
                    details={"id": str(decision_id)},
                )
            if current.outcome == outcome.value and current.outcome_reason == reason:
                # The same verdict again is a retry, not a change: no history row.
                return codec.decision_to_proto(current)
            if not rules.may_rejudge(Outcome(current.outcome) if current.outcome else None, judged_by):
                raise Conflict(
                    f"decision {decision_id} is already judged {current.outcome} by {current.judged_by};"
                    " only a person may change it",
                    code="ALREADY_JUDGED",
                    details={"id": str(decision_id), "outcome": current.outcome, "judged_by": current.judged_by},
                )
            row = await store.set_outcome(
                conn,
                id=decision_id,
                old_outcome=current.outcome,
                outcome=outcome.value,
                reason=reason,
                judged_by=judged_by.value,
                changed_by=person.sub if person else "",
                changed_by_email=person.email if person else "",
            )
        return codec.decision_to_proto(row)

    async def ListDecisions(
        self, request: decisions_pb2.ListDecisionsRequest, context: grpc.aio.ServicerContext
    ) -> decisions_pb2.ListDecisionsResponse:
        decided_from = timestamp_datetime(request.decided_from, request.HasField("decided_from"))
        decided_to = timestamp_datetime(request.decided_to, request.HasField("decided_to"))
        outcome = queries.outcome_filter(request.outcome)
        limit = paging.page_limit(request.page.limit)
        after = paging.decode_cursor(request.page.cursor, queries.page_key)
        queries.decided_range(decided_from, decided_to)
        async with self._engine.connect() as conn:
            rows = await store.list_decisions(
                conn,
                decision_type=request.decision_type or None,
                outcome=outcome,
                agent_id=request.agent_id or None,
                after=after,
                limit=limit + 1,
                model=request.model or None,
                decided_from=decided_from,
                decided_to=decided_to,
            )
        page, cursor = paging.one_page(rows, limit, lambda row: (row.decided_at, row.id))
        return decisions_pb2.ListDecisionsResponse(
            items=[codec.decision_to_proto(row) for row in page], next_cursor=cursor
        )

    async def GetDecision(
        self, request: decisions_pb2.GetDecisionRequest, context: grpc.aio.ServicerContext
    ) -> decisions_pb2.DecisionDetail:
        decision_id = _uuid(request.id, "id")
        wanted = queries.detail_precedents(request.precedents if request.HasField("precedents") else None)
        async with self._engine.connect() as conn:
            row = await store.get_decision(conn, id=decision_id)
            if row is None:
                raise NotFound(
                    f"decision {decision_id} does not exist",
                    code="DECISION_NOT_FOUND",
                    details={"id": str(decision_id)},
                )
            history = await store.outcome_history(conn, decision_id=decision_id)
            embedding = await store.get_embedding(conn, id=decision_id) if wanted else None
        precedents: list[store.DecisionRow] = []
        if embedding is not None:
            # One more than wanted: a judged decision is its own nearest neighbour.
            nearest = await self._precedents.nearest(
                decision_type=row.decision_type, embedding=store.vector_bytes(embedding), k=wanted + 1
            )
            # The context holds rider and customer data; this answer is for the console.
            precedents = [dataclasses.replace(p, context_json=None) for p in nearest if p.id != decision_id][:wanted]
        summary = rules.similar_summary(p.outcome or "" for p in precedents)
        return decisions_pb2.DecisionDetail(
            decision=codec.decision_to_proto(row),
            history=[codec.change_to_proto(change) for change in history],
            precedents=[codec.decision_to_proto(p) for p in precedents],
            summary=codec.summary_to_proto(summary),
        )

    async def ListPending(
        self, request: decisions_pb2.ListPendingRequest, context: grpc.aio.ServicerContext
    ) -> decisions_pb2.ListPendingResponse:
        limit = paging.page_limit(
            request.limit, default=queries.DEFAULT_PENDING_BATCH, maximum=queries.MAX_PENDING_BATCH
        )
        after = paging.decode_cursor(request.after_cursor, queries.page_key, field="after_cursor")
        before = timestamp_datetime(request.decided_before, request.HasField("decided_before")) or _now()
        async with self._engine.connect() as conn:
            rows = await store.list_pending(conn, decided_before=before, after=after, limit=limit + 1)
        page, cursor = paging.one_page(rows, limit, lambda row: (row.decided_at, row.id))
        return decisions_pb2.ListPendingResponse(
            items=[codec.pending_to_proto(row) for row in page], next_cursor=cursor
        )

    async def SetOutcomes(
        self, request: decisions_pb2.SetOutcomesRequest, context: grpc.aio.ServicerContext
    ) -> decisions_pb2.SetOutcomesResponse:
        judged_by = rules.parse_judged_by(request.judged_by)
        if len(request.verdicts) > queries.MAX_VERDICTS:
            raise InvalidArgument(
                f"verdicts: at most {queries.MAX_VERDICTS} per call, got {len(request.verdicts)}", field="verdicts"
            )
        verdicts: list[store.Verdict] = []
        seen: set[uuid.UUID] = set()
        for index, verdict in enumerate(request.verdicts):
            field = f"verdicts[{index}]"
            decision_id = _uuid(verdict.id, f"{field}.id")
            if decision_id in seen:
                raise InvalidArgument(f"{field}.id: {decision_id} appears twice", field=f"{field}.id")
            seen.add(decision_id)
            outcome = rules.parse_outcome(verdict.outcome, f"{field}.outcome")
            verdicts.append(store.Verdict(decision_id, outcome.value, verdict.reason.strip() or None))
        async with self._engine.begin() as conn:
            judged = await store.set_pending_outcomes(conn, verdicts=verdicts, judged_by=judged_by.value)
        return decisions_pb2.SetOutcomesResponse(judged_ids=[str(i) for i in judged])

    async def CountOutcomes(
        self, request: decisions_pb2.CountOutcomesRequest, context: grpc.aio.ServicerContext
    ) -> decisions_pb2.CountOutcomesResponse:
        since = timestamp_datetime(request.decided_since, request.HasField("decided_since"))
        async with self._engine.connect() as conn:
            rows = await store.count_outcomes(conn, decided_since=since)
        return decisions_pb2.CountOutcomesResponse(items=[codec.count_to_proto(row) for row in rows])
