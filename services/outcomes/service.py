"""The outcomes gRPC servicer: decode with the codec, call the intake,
sweeper, ledger or router, encode."""

from __future__ import annotations

from typing import Any

import grpc
from sqlalchemy.ext.asyncio import AsyncEngine

from outrider.v1 import outcomes_pb2, outcomes_pb2_grpc
from services.outcomes import codec, erasure, intake, ledger, store
from services.outcomes.clients import DecisionsClient
from services.outcomes.router import Router
from services.outcomes.rules import autonomy, evaluation
from services.outcomes.sweeper import Sweeper

Context = grpc.aio.ServicerContext[Any, Any]


class OutcomesService(outcomes_pb2_grpc.OutcomesServicer):
    def __init__(self, engine: AsyncEngine, *, sweeper: Sweeper, router: Router, decisions: DecisionsClient) -> None:
        self._engine = engine
        self._sweeper = sweeper
        self._router = router
        self._decisions = decisions

    async def RecordFacts(
        self, request: outcomes_pb2.RecordFactsRequest, context: Context
    ) -> outcomes_pb2.RecordFactsResponse:
        event = codec.facts_event(request)
        async with self._engine.begin() as conn:
            merged = (await intake.merge_events(conn, [event]))[event.subject_id]
        return codec.facts_response(merged.facts, changed=merged.changed)

    async def Sweep(self, request: outcomes_pb2.SweepRequest, context: Context) -> outcomes_pb2.SweepResponse:
        report = await self._sweeper.sweep(batch=codec.sweep_batch(request))
        return codec.sweep_response(report)

    async def SubmitConversation(
        self, request: outcomes_pb2.SubmitConversationRequest, context: Context
    ) -> outcomes_pb2.SubmitConversationResponse:
        conversation, route = codec.conversation_from_proto(request)
        async with self._engine.begin() as conn:
            booking = await ledger.submit(conn, conversation, route)
        return codec.submission_response(booking)

    async def GetConversationMetrics(
        self, request: outcomes_pb2.GetConversationMetricsRequest, context: Context
    ) -> outcomes_pb2.ConversationMetrics:
        model = codec.metrics_model(request)
        async with self._engine.connect() as conn:
            metrics = await ledger.metrics(conn, model=model)
        return codec.metrics_to_proto(metrics, model=model)

    async def GetRouting(self, request: outcomes_pb2.GetRoutingRequest, context: Context) -> outcomes_pb2.Routing:
        advice = await self._router.advise(codec.route_request(request))
        return codec.routing_to_proto(advice)

    async def RecommendModel(
        self, request: outcomes_pb2.RecommendModelRequest, context: Context
    ) -> outcomes_pb2.RecommendModelResponse:
        advice = await self._router.recommend(codec.route_request(request))
        return codec.recommendation_to_proto(advice)

    async def EraseSubject(
        self, request: outcomes_pb2.EraseSubjectFactsRequest, context: Context
    ) -> outcomes_pb2.EraseSubjectFactsResponse:
        return codec.erased_facts_response(await erasure.erase_subject(self._engine, codec.erased_subject(request)))

    async def ListAlerts(
        self, request: outcomes_pb2.ListAlertsRequest, context: Context
    ) -> outcomes_pb2.ListAlertsResponse:
        state, after, limit = codec.list_alerts_query(request)
        async with self._engine.connect() as conn:
            rows = await store.list_alerts(conn, state=state, after=after, limit=limit)
        return codec.alerts_response(rows, limit)

    async def GetAlertDelivery(
        self, request: outcomes_pb2.GetAlertDeliveryRequest, context: Context
    ) -> outcomes_pb2.AlertDelivery:
        async with self._engine.connect() as conn:
            delivered, pending, failed = await store.delivery_counts(conn)
        return outcomes_pb2.AlertDelivery(delivered=delivered, pending=pending, failed_attempts=failed)

    async def Evaluate(self, request: outcomes_pb2.EvaluateRequest, context: Context) -> outcomes_pb2.Evaluation:
        # The sums come from the decisions context, computed where the
        # decisions are kept: a million decisions cross as eleven numbers.
        decision_type, model = codec.evaluate_query(request)
        weights = await self._decisions.weigh_decisions(decision_type=decision_type, model=model)
        return codec.evaluation_to_proto(
            decision_type=decision_type, model=model, weights=weights, evaluation=evaluation.snips(weights, model=model)
        )

    async def GetAutonomyEvidence(
        self, request: outcomes_pb2.GetAutonomyEvidenceRequest, context: Context
    ) -> outcomes_pb2.AutonomyEvidence:
        agent_id, decision_type = codec.evidence_query(request)
        counts = await self._decisions.count_executions(agent_id=agent_id, decision_type=decision_type)
        return codec.evidence_to_proto(agent_id=agent_id, decision_type=decision_type, evidence=autonomy.weigh(counts))
