"""The decisions gRPC servicer: decode with the codec, call a flow, encode.

The decision-memory RPCs live here, their units of work in memory.py and
precedent.py; the human-decision RPCs come from the HumanDecisionRpcs mixin.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from datetime import UTC, datetime

import grpc

from outrider.rpc import batches
from outrider.v1 import decisions_pb2, decisions_pb2_grpc
from services.common import callers
from services.common.errors import DomainError
from services.common.grpc_server import answerable
from services.common.redaction.redactor import RedactionRules
from services.common.runtime import Runtime
from services.decisions import codec, memory, precedent, rules
from services.decisions.clients import OutcomesClient, RegistryClient
from services.decisions.connections import DirectConnections
from services.decisions.context_read import read_context
from services.decisions.embedding import Embedder, StructuredContextEmbedder
from services.decisions.erasure import erase_subject
from services.decisions.human.service import HumanDecisionRpcs
from services.decisions.precedent import PrecedentSearch

# Searches one SearchPrecedents stream may have running at once: enough to
# keep an engine's concurrent decisions flowing, few enough that one stream
# cannot hold every database connection.
STREAM_SEARCHES_IN_FLIGHT = 32


async def find_precedents(
    request: decisions_pb2.FindSimilarRequest, *, dimension: int, embedder: Embedder, precedents: PrecedentSearch
) -> decisions_pb2.FindSimilarResponse:
    """One precedent search, however it arrived (a call or a stream); also
    run with no gRPC around it by bench/decisions/bench_floor.py."""
    query = codec.similar_query_from_proto(request, dimension=dimension)
    rows, summary = await precedent.find(query, embedder=embedder, precedents=precedents)
    return codec.similar_to_proto(rows, summary)


class DecisionsService(HumanDecisionRpcs, decisions_pb2_grpc.DecisionsServicer):
    def __init__(
        self,
        runtime: Runtime,
        *,
        dimension: int,
        precedents: PrecedentSearch,
        records: DirectConnections,
        outcomes: OutcomesClient,
        registry: RegistryClient,
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
        self._outcomes = outcomes
        self._registry = registry
        # The playground's settings: a context reads here as the model is sent it.
        self._redaction = RedactionRules.build(
            extra_keys=self._settings.redact_keys, extra_patterns=self._settings.redact_patterns
        )
        # Decisions refused since start because their engine's key does not list their agent.
        self._agent_refusals = 0
        # A misconfigured human-input source stops the context here, at
        # start-up, rather than failing the first lease that needs it.
        self.human_sources()

    async def RecordDecision(
        self,
        request: decisions_pb2.RecordDecisionRequest,
        context: grpc.aio.ServicerContext[decisions_pb2.RecordDecisionRequest, decisions_pb2.RecordDecisionResponse],
    ) -> decisions_pb2.RecordDecisionResponse:
        [(decision_id, outcome)] = await self._record([codec.draft_from_proto(request)])
        if isinstance(outcome, DomainError):
            raise outcome
        return codec.recorded_to_proto(decision_id, outcome)

    async def RecordDecisions(
        self,
        request: decisions_pb2.RecordDecisionsRequest,
        context: grpc.aio.ServicerContext[decisions_pb2.RecordDecisionsRequest, decisions_pb2.RecordDecisionsResponse],
    ) -> decisions_pb2.RecordDecisionsResponse:
        return codec.record_results_to_proto(await self._record(codec.drafts_from_proto(request)))

    async def _record(
        self, drafts: Sequence[rules.DecisionDraft | rules.UnreadableDecision]
    ) -> list[memory.RecordResult]:
        # What the verified caller may act for: its engine's key, never a field of the request.
        scope = callers.agent_scope(callers.engine_name(), self._settings.engine_agents)
        results = await memory.record(
            self._records, self._embedder, drafts, scope=scope, embedding_dimension=self._dimension
        )
        self._agent_refusals += sum(
            isinstance(outcome, DomainError) and outcome.code == rules.AGENT_NOT_PERMITTED for _, outcome in results
        )
        return results

    async def CountAgentRefusals(
        self,
        request: decisions_pb2.CountAgentRefusalsRequest,
        context: grpc.aio.ServicerContext[decisions_pb2.CountAgentRefusalsRequest, decisions_pb2.AgentRefusals],
    ) -> decisions_pb2.AgentRefusals:
        return codec.agent_refusals_to_proto(self._agent_refusals)

    async def FindSimilar(
        self,
        request: decisions_pb2.FindSimilarRequest,
        context: grpc.aio.ServicerContext[decisions_pb2.FindSimilarRequest, decisions_pb2.FindSimilarResponse],
    ) -> decisions_pb2.FindSimilarResponse:
        return await self._find_similar(request)

    async def SearchPrecedents(
        self,
        asked: AsyncIterator[decisions_pb2.PrecedentQueries],
        context: grpc.aio.ServicerContext[decisions_pb2.PrecedentQueries, decisions_pb2.PrecedentAnswers],
    ) -> AsyncIterator[decisions_pb2.PrecedentAnswers]:
        # The stream was admitted once, by the engine's key; each search in
        # it then costs what its own work costs, with no call to set up.
        answers: asyncio.Queue[decisions_pb2.PrecedentAnswer | None] = asyncio.Queue()
        slots = asyncio.Semaphore(STREAM_SEARCHES_IN_FLIGHT)
        running: set[asyncio.Task[None]] = set()

        async def answer(tag: int, search: decisions_pb2.FindSimilarRequest) -> None:
            try:
                found = await self._find_similar(search)
            except Exception as error:  # noqa: BLE001 - answered as this search's refusal
                answers.put_nowait(codec.precedent_refusal(tag, answerable(error)))
            else:
                answers.put_nowait(codec.precedent_found(tag, found))
            finally:
                slots.release()

        async def read() -> None:
            try:
                async for message in asked:
                    for tag, search in codec.searches_from_proto(message):
                        # Past the cap the stream stops reading, and HTTP/2
                        # flow control holds the engine back instead of this
                        # memory.
                        await slots.acquire()
                        task = asyncio.create_task(answer(tag, search))
                        running.add(task)
                        task.add_done_callback(running.discard)
                await asyncio.gather(*running)
            finally:
                answers.put_nowait(None)

        reader = asyncio.create_task(read())
        try:
            async for ready in batches(answers):
                yield codec.precedent_answers(ready)
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
        self,
        request: decisions_pb2.SetOutcomeRequest,
        context: grpc.aio.ServicerContext[decisions_pb2.SetOutcomeRequest, decisions_pb2.Decision],
    ) -> decisions_pb2.Decision:
        judged = await memory.judge(self._engine, codec.judgement_from_proto(request), registry=self._registry)
        return codec.decision_to_proto(judged)

    async def ListDecisions(
        self,
        request: decisions_pb2.ListDecisionsRequest,
        context: grpc.aio.ServicerContext[decisions_pb2.ListDecisionsRequest, decisions_pb2.ListDecisionsResponse],
    ) -> decisions_pb2.ListDecisionsResponse:
        page, cursor = await memory.list_decisions(self._engine, codec.listing_from_proto(request))
        return codec.decisions_page_to_proto(page, cursor)

    async def GetDecision(
        self,
        request: decisions_pb2.GetDecisionRequest,
        context: grpc.aio.ServicerContext[decisions_pb2.GetDecisionRequest, decisions_pb2.DecisionDetail],
    ) -> decisions_pb2.DecisionDetail:
        detail = await memory.detail(self._engine, self._precedents, codec.detail_query_from_proto(request))
        return codec.detail_to_proto(detail)

    async def GetDecisionContext(
        self,
        request: decisions_pb2.GetDecisionContextRequest,
        context: grpc.aio.ServicerContext[decisions_pb2.GetDecisionContextRequest, decisions_pb2.DecisionContext],
    ) -> decisions_pb2.DecisionContext:
        read = await read_context(
            self._engine, codec.context_read_from_proto(request), redaction=self._redaction, registry=self._registry
        )
        return codec.context_to_proto(read)

    async def ListPending(
        self,
        request: decisions_pb2.ListPendingRequest,
        context: grpc.aio.ServicerContext[decisions_pb2.ListPendingRequest, decisions_pb2.ListPendingResponse],
    ) -> decisions_pb2.ListPendingResponse:
        page, cursor = await memory.list_pending(self._engine, codec.pending_listing_from_proto(request))
        return codec.pending_page_to_proto(page, cursor)

    async def SetOutcomes(
        self,
        request: decisions_pb2.SetOutcomesRequest,
        context: grpc.aio.ServicerContext[decisions_pb2.SetOutcomesRequest, decisions_pb2.SetOutcomesResponse],
    ) -> decisions_pb2.SetOutcomesResponse:
        judged = await memory.judge_pending(self._engine, codec.pending_verdicts_from_proto(request))
        return codec.judged_to_proto(judged)

    async def CountOutcomes(
        self,
        request: decisions_pb2.CountOutcomesRequest,
        context: grpc.aio.ServicerContext[decisions_pb2.CountOutcomesRequest, decisions_pb2.CountOutcomesResponse],
    ) -> decisions_pb2.CountOutcomesResponse:
        since, before = codec.counted_span_from_proto(request)
        rows = await memory.count_outcomes(self._engine, decided_since=since, decided_before=before)
        return codec.counts_to_proto(rows)

    async def EraseSubject(
        self,
        request: decisions_pb2.EraseSubjectRequest,
        context: grpc.aio.ServicerContext[decisions_pb2.EraseSubjectRequest, decisions_pb2.EraseSubjectResponse],
    ) -> decisions_pb2.EraseSubjectResponse:
        erasure = await erase_subject(
            self._engine, codec.erasure_from_proto(request), outcomes=self._outcomes, registry=self._registry
        )
        return codec.erased_to_proto(erasure)

    async def CountRolloutArms(
        self,
        request: decisions_pb2.CountRolloutArmsRequest,
        context: grpc.aio.ServicerContext[
            decisions_pb2.CountRolloutArmsRequest, decisions_pb2.CountRolloutArmsResponse
        ],
    ) -> decisions_pb2.CountRolloutArmsResponse:
        counts = await memory.count_rollout_arms(self._engine, codec.counted_rollouts_from_proto(request))
        return codec.arm_counts_to_proto(counts)

    async def WeighDecisions(
        self,
        request: decisions_pb2.WeighDecisionsRequest,
        context: grpc.aio.ServicerContext[decisions_pb2.WeighDecisionsRequest, decisions_pb2.DecisionWeights],
    ) -> decisions_pb2.DecisionWeights:
        weights = await memory.weigh_decisions(self._engine, codec.weighing_from_proto(request))
        return codec.weights_to_proto(weights)

    async def CountExecutions(
        self,
        request: decisions_pb2.CountExecutionsRequest,
        context: grpc.aio.ServicerContext[decisions_pb2.CountExecutionsRequest, decisions_pb2.CountExecutionsResponse],
    ) -> decisions_pb2.CountExecutionsResponse:
        counts = await memory.count_executions(self._engine, codec.executions_from_proto(request))
        return codec.execution_counts_to_proto(counts)

    async def CountJudgedWindows(
        self,
        request: decisions_pb2.CountJudgedWindowsRequest,
        context: grpc.aio.ServicerContext[
            decisions_pb2.CountJudgedWindowsRequest, decisions_pb2.CountJudgedWindowsResponse
        ],
    ) -> decisions_pb2.CountJudgedWindowsResponse:
        windows = await memory.count_judged_windows(self._engine, codec.judged_window_from_proto(request))
        return codec.judged_windows_to_proto(windows)

    async def ListDecisionFacets(
        self,
        request: decisions_pb2.ListDecisionFacetsRequest,
        context: grpc.aio.ServicerContext[decisions_pb2.ListDecisionFacetsRequest, decisions_pb2.DecisionFacets],
    ) -> decisions_pb2.DecisionFacets:
        days = codec.facet_days_from_proto(request)
        return codec.facets_to_proto(await memory.list_facets(self._engine, days, now=datetime.now(UTC)))

    async def CountOutcomeSeries(
        self,
        request: decisions_pb2.CountOutcomeSeriesRequest,
        context: grpc.aio.ServicerContext[decisions_pb2.CountOutcomeSeriesRequest, decisions_pb2.OutcomeSeries],
    ) -> decisions_pb2.OutcomeSeries:
        window, series = await memory.count_outcome_series(
            self._engine, codec.outcome_series_from_proto(request), now=datetime.now(UTC)
        )
        return codec.outcome_series_to_proto(window, series)
