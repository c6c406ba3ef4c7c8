"""Outcomes routes: facts, the sweep, conversations, metrics and routing."""

from __future__ import annotations

import json
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request
from pydantic import Field

from gateway.auth import Principal, internal, staff
from gateway.contracts.common import (
    CARRIABLE,
    ENGINE_ERRORS,
    FILLED,
    STAFF_ERRORS,
    errors,
)
from gateway.contracts.outcomes import (
    ConversationIn,
    ConversationMetrics,
    CreditsReply,
    FactsIn,
    FactsReply,
    Routing,
    SweepReply,
)
from gateway.routing import JsonBodyRoute
from gateway.upstream import stub
from outrider.v1 import outcomes_pb2, outcomes_pb2_grpc
from services.outcomes.rules import MAX_BATCH, MAX_CANDIDATES

router = APIRouter(tags=["outcomes"], route_class=JsonBodyRoute)

SWEEP_TIMEOUT_S = 600.0


def _outcomes(request: Request) -> outcomes_pb2_grpc.OutcomesStub:
    return stub(request, "outcomes", outcomes_pb2_grpc.OutcomesStub)


@router.post(
    "/internal/facts",
    summary="Record subject facts (the payload of a facts.booking event)",
    response_model=FactsReply,
    responses=ENGINE_ERRORS,
)
async def record_facts(body: FactsIn, request: Request, _: None = Depends(internal)) -> dict[str, Any]:
    # The body goes on as it came: the outcomes context parses it with the
    # same code as the NATS events, so both doors accept and refuse alike.
    reply = await _outcomes(request).RecordFacts(outcomes_pb2.RecordFactsRequest(event=await request.body()))
    return {"subject_id": reply.subject_id, "facts": json.loads(reply.facts), "changed": reply.changed}


@router.post(
    "/internal/outcomes/sweep",
    summary="Judge every pending decision old enough, now",
    response_model=SweepReply,
    responses=ENGINE_ERRORS,
)
async def sweep(
    request: Request,
    _: None = Depends(internal),
    batch_size: Annotated[int | None, Query(ge=1, le=MAX_BATCH, description="decisions per round trip")] = None,
) -> dict[str, Any]:
    # A sweep of a large backlog takes minutes, not the usual call's seconds.
    reply = await _outcomes(request).Sweep(
        outcomes_pb2.SweepRequest(batch_size=batch_size or 0), timeout=SWEEP_TIMEOUT_S
    )
    return {"judged": reply.judged, "by_outcome": dict(reply.by_outcome), "scanned": reply.scanned}


def _credit_json(credit: outcomes_pb2.TurnCredit) -> dict[str, Any]:
    return {
        "turn_ref": credit.turn_ref,
        "model": credit.model if credit.HasField("model") else None,
        "trace_id": credit.trace_id if credit.HasField("trace_id") else None,
        "credit": credit.credit,
        "confidence": credit.confidence,
        "episode_id": credit.episode_id,
        "resolution": credit.resolution,
    }


@router.post(
    "/internal/conversations",
    summary="Book a conversation's episode credits (idempotent)",
    response_model=CreditsReply,
    responses=errors(401, 409, 422, 503),
)
async def submit_conversation(body: ConversationIn, request: Request, _: None = Depends(internal)) -> dict[str, Any]:
    message = outcomes_pb2.SubmitConversationRequest(
        conversation_id=body.conversation_id,
        turns=[outcomes_pb2.Turn(**turn.model_dump(exclude_none=True)) for turn in body.turns],
        **{k: v for k, v in (("skill", body.skill), ("decision_type", body.decision_type)) if v is not None},
    )
    reply = await _outcomes(request).SubmitConversation(message)
    return {"credits": [_credit_json(c) for c in reply.credits], "deferred": reply.deferred}


@router.get(
    "/admin/ai/conversation-metrics",
    summary="Outcome metrics over the credit ledger",
    response_model=ConversationMetrics,
    responses=STAFF_ERRORS,
)
async def conversation_metrics(
    request: Request,
    _: Principal = Depends(staff),
    model: Annotated[
        str | None, Query(max_length=256, pattern=CARRIABLE, description="only this model's episodes")
    ] = None,
) -> dict[str, Any]:
    message = outcomes_pb2.GetConversationMetricsRequest()
    if model is not None:
        message.model = model
    reply = await _outcomes(request).GetConversationMetrics(message)
    return {
        "model": reply.model if reply.HasField("model") else None,
        "episodes": reply.episodes,
        "resolved": reply.resolved,
        "abandoned": reply.abandoned,
        "ambiguous": reply.ambiguous,
        "ongoing": reply.ongoing,
        "first_turn_resolutions": reply.first_turn_resolutions,
        "first_turn_resolution_rate": reply.first_turn_resolution_rate,
        "avg_turns_to_resolution": reply.avg_turns_to_resolution,
        "churn_rate": reply.churn_rate,
        "pending": reply.pending,
    }


@router.get(
    "/admin/ai/routing",
    summary="Per-model evidence, posteriors and the Thompson pick for one key",
    response_model=Routing,
    responses=STAFF_ERRORS,
)
async def routing(
    request: Request,
    _: Principal = Depends(staff),
    decision_type: Annotated[
        str,
        Query(
            max_length=64,
            pattern=FILLED,
            description="route this decision type (or give skill)",
            examples=["stall_response"],
        ),
    ] = "",
    skill: Annotated[
        str, Query(max_length=128, pattern=FILLED, description="route this skill (or give decision_type)")
    ] = "",
    seed: Annotated[
        int | None, Query(ge=-(2**63), le=2**63 - 1, description="same seed and evidence, same pick")
    ] = None,
    candidate: Annotated[
        list[Annotated[str, Field(pattern=FILLED, max_length=256)]],
        Query(max_length=MAX_CANDIDATES, description="models to choose among; default every model with evidence"),
    ] = [],
) -> dict[str, Any]:
    message = outcomes_pb2.GetRoutingRequest(decision_type=decision_type, skill=skill, candidates=candidate)
    if seed is not None:
        message.seed = seed
    reply = await _outcomes(request).GetRouting(message)
    return {
        "key": reply.key,
        "pick": reply.pick or None,
        "seed": reply.seed,
        "arms": [
            {
                "model": arm.model,
                "successes": arm.successes,
                "failures": arm.failures,
                "alpha": arm.alpha,
                "beta": arm.beta,
                "posterior_mean": arm.posterior_mean,
                "pick_probability": arm.pick_probability,
                "credit": {"successes": arm.credit_successes, "failures": arm.credit_failures},
                "decisions": {"successes": arm.decision_successes, "failures": arm.decision_failures},
            }
            for arm in reply.arms
        ],
    }
