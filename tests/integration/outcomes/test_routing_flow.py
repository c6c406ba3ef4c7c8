"""Routing over gRPC and the gateway: Thompson picks fed by the ledger's credits."""

from __future__ import annotations

import random

import grpc
import pytest

from outrider.v1 import outcomes_pb2, outcomes_pb2_grpc
from tests.harness import bearer, gateway_client, running, service_channel

CANDIDATES = ["model-a", "model-b"]
# The simulated truth: how often each model's answer serves the user.
SERVES = {"model-a": 0.35, "model-b": 0.8}


def served(n: int, model: str) -> list[outcomes_pb2.Turn]:
    return [
        outcomes_pb2.Turn(role="user", text=f"where is parcel {n}", ref="u1"),
        outcomes_pb2.Turn(role="assistant", text="it is out for delivery", ref="a1", model=model, trace_id=f"t{n}"),
        outcomes_pb2.Turn(role="user", text="thanks", ref="u2"),
    ]


def failed(n: int, model: str) -> list[outcomes_pb2.Turn]:
    return [
        outcomes_pb2.Turn(role="user", text=f"where is parcel {n}", ref="u1"),
        outcomes_pb2.Turn(role="assistant", text="which parcel", ref="a1", model=model, trace_id=f"t{n}"),
        outcomes_pb2.Turn(role="user", text="forget it, this is useless", ref="u2"),
    ]


async def test_routing_converges_to_the_better_model_on_a_simulated_stream(settings):
    world = random.Random(20240501)
    picks: list[str] = []
    async with running(settings, ["outcomes"]):
        async with service_channel(settings, "outcomes") as ch:
            outcomes = outcomes_pb2_grpc.OutcomesStub(ch)
            for n in range(160):
                advice = await outcomes.RecommendModel(
                    outcomes_pb2.RecommendModelRequest(skill="parcel-status", candidates=CANDIDATES, seed=n)
                )
                picks.append(advice.model)
                turns = served(n, advice.model) if world.random() < SERVES[advice.model] else failed(n, advice.model)
                await outcomes.SubmitConversation(
                    outcomes_pb2.SubmitConversationRequest(conversation_id=f"c{n}", turns=turns, skill="parcel-status")
                )
            final = await outcomes.GetRouting(outcomes_pb2.GetRoutingRequest(skill="parcel-status", seed=99))
            replay = await outcomes.GetRouting(outcomes_pb2.GetRoutingRequest(skill="parcel-status", seed=99))

    arms = {arm.model: arm for arm in final.arms}
    assert final.key == "skill:parcel-status"
    assert arms["model-b"].posterior_mean > arms["model-a"].posterior_mean
    assert arms["model-b"].pick_probability > 0.9
    assert sum(arm.pick_probability for arm in final.arms) == pytest.approx(1.0)
    # Exploration moved to exploitation: the better model took most late picks.
    assert picks[-60:].count("model-b") >= 50
    # Fractional credit: a served turn adds its confidence, not a whole trial.
    b = arms["model-b"]
    assert b.credit_successes == pytest.approx(b.successes)
    assert 0 < b.successes < picks.count("model-b")
    assert (b.alpha, b.beta) == pytest.approx((1 + b.successes, 1 + b.failures))
    # Same seed, same evidence: the same pick and the same probabilities.
    assert replay == final


async def test_routing_over_the_gateway_is_gated_and_validated(settings):
    async with running(settings, ["outcomes"]), gateway_client(settings) as client:
        empty = await client.get("/admin/ai/routing", params={"skill": "nobody-uses-this"}, headers=bearer(4))
        both = await client.get("/admin/ai/routing", params={"skill": "s", "decision_type": "d"}, headers=bearer(1))
        neither = await client.get("/admin/ai/routing", headers=bearer(1))
        tenant = await client.get("/admin/ai/routing", params={"skill": "s"}, headers=bearer(1, tenant=7))
        anonymous = await client.get("/admin/ai/routing", params={"skill": "s"})
        fresh = await client.get(
            "/admin/ai/routing",
            params={"skill": "s", "candidate": ["m-new", "m-other"], "seed": 5},
            headers=bearer(3),
        )
    assert empty.status_code == 200
    assert empty.json()["arms"] == [] and empty.json()["pick"] is None
    assert both.status_code == 422 and next(iter(both.json()["error"]["details"]["fields"])) == "skill"
    assert neither.status_code == 422 and next(iter(neither.json()["error"]["details"]["fields"])) == "decision_type"
    assert tenant.status_code == 403
    assert anonymous.status_code == 401
    body = fresh.json()
    # Candidates without evidence compete on the uniform prior.
    assert [(a["model"], a["alpha"], a["beta"]) for a in body["arms"]] == [("m-new", 1.0, 1.0), ("m-other", 1.0, 1.0)]
    assert body["pick"] in {"m-new", "m-other"} and body["seed"] == 5


async def test_recommend_without_evidence_or_candidates_is_refused(settings):
    async with running(settings, ["outcomes"]):
        async with service_channel(settings, "outcomes") as ch:
            outcomes = outcomes_pb2_grpc.OutcomesStub(ch)
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await outcomes.RecommendModel(outcomes_pb2.RecommendModelRequest(skill="unheard-of"))
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert dict(caught.value.trailing_metadata())["outrider-error-code"] == "NO_CANDIDATES"
