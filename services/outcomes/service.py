"""The outcomes gRPC servicer: parse, call the intake, sweeper, ledger or
router, encode."""

from __future__ import annotations

import grpc
from sqlalchemy.ext.asyncio import AsyncEngine

from outrider.v1 import outcomes_pb2, outcomes_pb2_grpc
from services.common.errors import InvalidArgument
from services.outcomes import advice, codec, intake, ledger, store
from services.outcomes.facts import decode_booking_event
from services.outcomes.sweeper import Sweeper, batch_size


class OutcomesService(outcomes_pb2_grpc.OutcomesServicer):
    def __init__(self, engine: AsyncEngine, *, sweeper: Sweeper, decisions: codec.DecisionsClient) -> None:
        self._engine = engine
        self._sweeper = sweeper
        self._decisions = decisions

    async def RecordFacts(
        self, request: outcomes_pb2.RecordFactsRequest, context: grpc.aio.ServicerContext
    ) -> outcomes_pb2.RecordFactsResponse:
        event = intake.check_storable(decode_booking_event(request.event))
        async with self._engine.begin() as conn:
            merged = (await intake.merge_events(conn, [event]))[event.subject_id]
        return codec.facts_response(merged.facts, changed=merged.changed)

    async def Sweep(
        self, request: outcomes_pb2.SweepRequest, context: grpc.aio.ServicerContext
    ) -> outcomes_pb2.SweepResponse:
        report = await self._sweeper.sweep(batch=batch_size(request.batch_size))
        return codec.sweep_response(report)

    async def SubmitConversation(
        self, request: outcomes_pb2.SubmitConversationRequest, context: grpc.aio.ServicerContext
    ) -> outcomes_pb2.SubmitConversationResponse:
        conversation, route = codec.conversation_from_proto(request)
        async with self._engine.begin() as conn:
            booking = await ledger.submit(conn, conversation, route)
        return outcomes_pb2.SubmitConversationResponse(
            credits=[codec.credit_to_proto(c) for c in booking.credits], deferred=booking.pending
        )

    async def GetConversationMetrics(
        self, request: outcomes_pb2.GetConversationMetricsRequest, context: grpc.aio.ServicerContext
    ) -> outcomes_pb2.ConversationMetrics:
        model = codec.metrics_model(request)
        async with self._engine.connect() as conn:
            metrics = await ledger.metrics(conn, model=model)
        return codec.metrics_to_proto(metrics, model=model)

    async def GetRouting(
        self, request: outcomes_pb2.GetRoutingRequest, context: grpc.aio.ServicerContext
    ) -> outcomes_pb2.Routing:
        result = await self._advise(
            decision_type=request.decision_type,
            skill=request.skill,
            candidates=request.candidates,
            seed=codec.seed_of(request),
        )
        return codec.routing_to_proto(result)

    async def RecommendModel(
        self, request: outcomes_pb2.RecommendModelRequest, context: grpc.aio.ServicerContext
    ) -> outcomes_pb2.RecommendModelResponse:
        result = await self._advise(
            decision_type=request.decision_type,
            skill=request.skill,
            candidates=request.candidates,
            seed=codec.seed_of(request),
        )
        if result.pick is None:
            raise InvalidArgument(
                f"no model has evidence for {result.key.label}; name the candidates to choose among",
                field="candidates",
                code="NO_CANDIDATES",
            )
        return codec.recommendation_to_proto(result)

    async def _advise(
        self, *, decision_type: str, skill: str, candidates: list[str], seed: int | None
    ) -> advice.Advice:
        key = advice.route_key(decision_type=decision_type, skill=skill)
        models = advice.candidate_models(candidates)
        async with self._engine.connect() as conn:
            credits = await store.tally_credits(conn, column=key.kind, key=key.name)
        outcomes = await self._decisions.count_outcomes() if key.kind == "decision_type" else []
        return advice.advise(
            key,
            credits=credits,
            outcomes=outcomes,
            candidates=models,
            seed=advice.new_seed() if seed is None else seed,
        )
