"""Outcomes routes: facts, the sweep, conversations, metrics and routing."""

from __future__ import annotations

import json
from typing import Any

from fastapi import APIRouter, Depends, Query, Request
from pydantic import BaseModel, ConfigDict, StrictStr

from gateway.auth import Principal, internal, staff
from gateway.errors import ApiError
from gateway.upstream import stub
from outrider.v1 import outcomes_pb2, outcomes_pb2_grpc

router = APIRouter(tags=["outcomes"])


def _outcomes(request: Request) -> outcomes_pb2_grpc.OutcomesStub:
    return stub(request, "outcomes", outcomes_pb2_grpc.OutcomesStub)


@router.post("/internal/facts", summary="Record subject facts (the payload of a facts.booking event)")
async def record_facts(request: Request, _: None = Depends(internal)) -> dict[str, Any]:
    # The body goes through untouched: the outcomes context parses it with the
    # same code as the NATS events, so both doors accept and refuse alike.
    reply = await _outcomes(request).RecordFacts(outcomes_pb2.RecordFactsRequest(event=await request.body()))
    return {"subject_id": reply.subject_id, "facts": json.loads(reply.facts), "changed": reply.changed}


@router.post("/internal/outcomes/sweep", summary="Judge every pending decision old enough, now")
async def sweep(
    request: Request,
    _: None = Depends(internal),
    batch_size: int = Query(
        0, ge=-(2**31), le=2**31 - 1, description="decisions per round trip; 0 means the default (500)"
    ),
) -> dict[str, Any]:
    reply = await _outcomes(request).Sweep(outcomes_pb2.SweepRequest(batch_size=batch_size))
    return {"judged": reply.judged, "by_outcome": dict(reply.by_outcome), "scanned": reply.scanned}


class TurnIn(BaseModel):
    model_config = ConfigDict(extra="ignore")

    role: StrictStr
    text: StrictStr
    ref: StrictStr
    model: StrictStr | None = None
    trace_id: StrictStr | None = None


class ConversationIn(BaseModel):
    model_config = ConfigDict(extra="ignore")

    conversation_id: StrictStr
    turns: list[TurnIn]
    skill: StrictStr | None = None
    decision_type: StrictStr | None = None


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


def _encodable(body: ConversationIn) -> None:
    # JSON can spell half a surrogate pair ("\ud800"); gRPC strings must be
    # UTF-8, so such a field is refused here by name instead of failing the call.
    fields = [("conversation_id", body.conversation_id), ("skill", body.skill), ("decision_type", body.decision_type)]
    for index, turn in enumerate(body.turns):
        fields.extend((f"turns[{index}].{name}", getattr(turn, name)) for name in TurnIn.model_fields)
    for field, value in fields:
        try:
            (value or "").encode("utf-8")
        except UnicodeEncodeError:
            raise ApiError(422, "INVALID_ARGUMENT", f"{field} is not valid Unicode text", {"field": field}) from None


@router.post("/internal/conversations", summary="Book a conversation's episode credits (idempotent)")
async def submit_conversation(request: Request, body: ConversationIn, _: None = Depends(internal)) -> dict[str, Any]:
    _encodable(body)
    message = outcomes_pb2.SubmitConversationRequest(
        conversation_id=body.conversation_id,
        turns=[outcomes_pb2.Turn(**turn.model_dump(exclude_none=True)) for turn in body.turns],
        **{k: v for k, v in (("skill", body.skill), ("decision_type", body.decision_type)) if v is not None},
    )
    reply = await _outcomes(request).SubmitConversation(message)
    return {"credits": [_credit_json(c) for c in reply.credits], "deferred": reply.deferred}


@router.get("/admin/ai/conversation-metrics", summary="Outcome metrics over the credit ledger")
async def conversation_metrics(
    request: Request, _: Principal = Depends(staff), model: str | None = Query(None)
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


@router.get("/admin/ai/routing", summary="Per-model evidence, posteriors and the Thompson pick for one key")
async def routing(
    request: Request,
    _: Principal = Depends(staff),
    decision_type: str = Query(""),
    skill: str = Query(""),
    seed: int | None = Query(None, description="same seed and evidence, same pick"),
    candidate: list[str] = Query([], description="models to choose among; default every model with evidence"),
) -> dict[str, Any]:
    if seed is not None and not -(2**63) <= seed < 2**63:
        raise ApiError(422, "INVALID_ARGUMENT", "seed must fit in a signed 64-bit integer", {"field": "seed"})
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
