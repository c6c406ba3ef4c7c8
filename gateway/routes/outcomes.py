"""Outcomes routes: facts, the sweep, conversations, metrics, routing, the
evidence before a switch (DESIGN §10) and alerts."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Path, Query, Request
from pydantic import Field

from gateway.auth import Principal, internal, staff
from gateway.codec import outcomes as codec
from gateway.contracts.common import (
    CARRIABLE,
    ENGINE_ERRORS,
    FILLED,
    STAFF_ERRORS,
    errors,
)
from gateway.contracts.outcomes import (
    AlertPage,
    AutonomyEvidence,
    ConversationIn,
    ConversationMetrics,
    CreditsReply,
    Evaluation,
    FactsIn,
    FactsReply,
    Routing,
    SweepReply,
)
from gateway.contracts.paging import PageQuery
from gateway.routing import JsonBodyRoute
from gateway.upstream import stub
from outrider.v1 import outcomes_pb2_grpc
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
    reply = await _outcomes(request).RecordFacts(codec.facts_request(await request.body()))
    return codec.facts_json(reply)


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
    reply = await _outcomes(request).Sweep(codec.sweep_request(batch_size), timeout=SWEEP_TIMEOUT_S)
    return codec.sweep_json(reply)


@router.post(
    "/internal/conversations",
    summary="Book a conversation's episode credits (idempotent)",
    response_model=CreditsReply,
    responses=errors(401, 409, 422, 503),
)
async def submit_conversation(body: ConversationIn, request: Request, _: None = Depends(internal)) -> dict[str, Any]:
    return codec.credits_json(await _outcomes(request).SubmitConversation(codec.conversation_request(body)))


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
    reply = await _outcomes(request).GetConversationMetrics(codec.conversation_metrics_request(model))
    return codec.conversation_metrics_json(reply)


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
    ] = [],  # noqa: B006 - FastAPI copies a parameter's default for each request; it is never mutated
) -> dict[str, Any]:
    ask = codec.routing_request(decision_type=decision_type, skill=skill, seed=seed, candidates=candidate)
    return codec.routing_json(await _outcomes(request).GetRouting(ask))


DecisionTypeQuery = Query(max_length=64, pattern=FILLED, description="the decision type", examples=["stall_response"])


@router.get(
    "/admin/ai/evaluate",
    summary="Off-policy estimate of a decision type's success rate had every decision gone to one model",
    response_model=Evaluation,
    responses=STAFF_ERRORS,
)
async def evaluate(
    request: Request,
    decision_type: Annotated[str, DecisionTypeQuery],
    model: Annotated[str, Query(max_length=256, pattern=FILLED, description="the model to estimate a pin of")],
    _: Principal = Depends(staff),
) -> dict[str, Any]:
    reply = await _outcomes(request).Evaluate(codec.evaluate_request(decision_type=decision_type, model=model))
    return codec.evaluation_json(reply)


@router.get(
    "/admin/ai/agents/{agent_id}/evidence",
    summary="Judged success by how the agent's actions were carried out, and whether to let it act alone",
    response_model=AutonomyEvidence,
    responses=STAFF_ERRORS,
)
async def autonomy_evidence(
    request: Request,
    agent_id: Annotated[str, Path(min_length=1, max_length=128, pattern=CARRIABLE)],
    _: Principal = Depends(staff),
    decision_type: Annotated[str | None, DecisionTypeQuery] = None,
) -> dict[str, Any]:
    ask = codec.evidence_request(agent_id=agent_id, decision_type=decision_type)
    return codec.evidence_json(await _outcomes(request).GetAutonomyEvidence(ask))


@router.get(
    "/admin/ai/alerts",
    summary="Alerts, firing before resolved, newest first",
    response_model=AlertPage,
    responses=STAFF_ERRORS,
)
async def list_alerts(
    request: Request,
    page: PageQuery,
    state: Annotated[
        Literal["firing", "resolved"] | None, Query(description="only alerts in this state; both when absent")
    ] = None,
    _: Principal = Depends(staff),
) -> dict[str, Any]:
    reply = await _outcomes(request).ListAlerts(codec.alerts_request(state=state or "", page=page))
    return codec.alert_page_json(reply)
