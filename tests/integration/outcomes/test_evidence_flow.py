"""The evidence before a switch (DESIGN §10) end to end, with real Postgres:
an engine asks the SDK for a model, records decisions carrying the pick's
propensity and how their action was carried out, and staff read the
off-policy estimate and the autonomy evidence through the gateway."""

from __future__ import annotations

import random
import uuid

import pytest

from outrider.client.decisions import DecisionRecorder
from outrider.client.routing import ModelRouter
from outrider.errors import InvalidArgument
from outrider.v1 import decisions_pb2, decisions_pb2_grpc
from services.outcomes.rules.evaluation import DecisionWeights, snips
from tests.harness import INTERNAL_KEY, bearer, engine_channel, gateway_client, running, service_channel

MODELS = ["m-a", "m-b"]
# The simulated truth: how often each model's decision works.
WORKS = {"m-a": 0.35, "m-b": 0.75}


def local_weights(rows: list[tuple[str, float, bool]], model: str) -> DecisionWeights:
    """The sums the decisions context should answer, computed here from what was recorded."""
    matched = [(1 / p, r) for m, p, r in rows if m == model]
    return DecisionWeights(
        decisions=len(rows),
        judged=len(rows),
        unknown=0,
        pending=0,
        logged_successes=sum(r for _, _, r in rows),
        with_propensity=len(rows),
        matched=len(matched),
        sum_w=sum(w for w, _ in matched),
        sum_w_r=sum(w for w, r in matched if r),
        sum_w2=sum(w * w for w, _ in matched),
        sum_w2_r=sum(w * w for w, r in matched if r),
    )


async def test_routed_decisions_carry_their_propensity_and_give_the_estimate(settings):
    decision_type = f"eval_{uuid.uuid4().hex[:8]}"
    world = random.Random(20261202)
    rows: list[tuple[str, float, bool]] = []
    async with running(settings, ["decisions", "outcomes"]), gateway_client(settings) as client:
        router = ModelRouter(settings.addr("outcomes"), INTERNAL_KEY)
        recorder = DecisionRecorder(settings.addr("decisions"), INTERNAL_KEY)
        async with engine_channel(settings, "decisions") as channel, service_channel(settings, "decisions") as reader:
            decisions = decisions_pb2_grpc.DecisionsStub(channel)
            staff_view = decisions_pb2_grpc.DecisionsStub(reader)
            for n in range(120):
                choice = await router.choose(decision_type, MODELS, seed=n)
                assert choice.model in MODELS
                assert 0 < choice.propensity <= 1
                assert choice.draws == 4000
                decision_id = recorder.record(
                    decision_type=decision_type,
                    agent_id="A1",
                    subject_id=f"BK-{n}",
                    action="reassign",
                    confidence=0.6,
                    route=choice,
                )
                assert await recorder.flush(5.0)
                works = world.random() < WORKS[choice.model]
                await decisions.SetOutcome(
                    decisions_pb2.SetOutcomeRequest(id=decision_id, outcome="success" if works else "failure")
                )
                rows.append((choice.model, choice.propensity, works))
                stored = await staff_view.GetDecision(decisions_pb2.GetDecisionRequest(id=decision_id))
                assert stored.decision.model == choice.model
                assert stored.decision.model_propensity == pytest.approx(choice.propensity)
        await recorder.close()
        with pytest.raises(InvalidArgument) as refused:
            await router.choose("nothing_recorded", [])
        assert refused.value.code == "NO_CANDIDATES"
        await router.close()
        answers = {
            model: await client.get(
                "/admin/ai/evaluate", params={"decision_type": decision_type, "model": model}, headers=bearer(3)
            )
            for model in MODELS
        }
        outsider = await client.get(
            "/admin/ai/evaluate", params={"decision_type": decision_type, "model": "m-a"}, headers=bearer(2)
        )
        missing = await client.get("/admin/ai/evaluate", params={"decision_type": decision_type}, headers=bearer(1))

    assert outsider.status_code == 403
    assert missing.status_code == 422
    for model, reply in answers.items():
        assert reply.status_code == 200, reply.text
        body = reply.json()
        expected = snips(local_weights(rows, model), model=model)
        assert body["method"] == "snips"
        assert body["logged"]["judged"] == len(rows) == body["logged"]["with_propensity"]
        assert body["logged"]["mean"] == pytest.approx(sum(r for *_, r in rows) / len(rows))
        assert body["matched"] == expected.matched == sum(m == model for m, *_ in rows)
        assert body["effective_sample_size"] == pytest.approx(expected.effective_sample_size)
        if expected.estimate is None:
            assert body["estimate"] is None
            assert "at least 30" in body["reason"]
        else:
            assert body["estimate"]["mean"] == pytest.approx(expected.estimate.mean)
            assert body["estimate"]["low"] == pytest.approx(expected.estimate.low)
            assert body["estimate"]["high"] == pytest.approx(expected.estimate.high)
    # The router learned m-b is better, so most picks went there: enough for its estimate.
    assert answers["m-b"].json()["estimate"] is not None


async def test_the_evidence_counts_each_execution_and_recommends_by_the_rule(settings):
    decision_type = f"evidence_{uuid.uuid4().hex[:8]}"
    # (execution, successes, failures, pending)
    plan = [("confirmed", 95, 5, 0), ("overridden", 4, 3, 0), ("autonomous", 3, 2, 0), ("proposed", 0, 0, 2)]
    async with running(settings, ["decisions", "outcomes"]), gateway_client(settings) as client:
        async with engine_channel(settings, "decisions") as channel:
            decisions = decisions_pb2_grpc.DecisionsStub(channel)
            for execution, successes, failures, pending in plan:
                outcomes = ["success"] * successes + ["failure"] * failures + [""] * pending
                requests = [
                    decisions_pb2.RecordDecisionRequest(
                        id=str(uuid.uuid4()),
                        decision_type=decision_type,
                        agent_id="A-ev",
                        subject_id=f"BK-{execution}-{n}",
                        action="reassign",
                        confidence=0.7,
                        execution=execution,
                    )
                    for n in range(len(outcomes))
                ]
                await decisions.RecordDecisions(decisions_pb2.RecordDecisionsRequest(decisions=requests))
                for request, outcome in zip(requests, outcomes, strict=True):
                    if outcome:
                        await decisions.SetOutcome(decisions_pb2.SetOutcomeRequest(id=request.id, outcome=outcome))
        path = "/admin/ai/agents/A-ev/evidence"
        typed = await client.get(path, params={"decision_type": decision_type}, headers=bearer(4))
        every_type = await client.get(path, headers=bearer(1))
        other_type = await client.get(path, params={"decision_type": "nothing_recorded"}, headers=bearer(3))
        outsider = await client.get(path, headers=bearer(1, tenant=7))

    assert outsider.status_code == 403
    assert typed.status_code == 200, typed.text
    body = typed.json()
    assert body["decision_type"] == decision_type
    for execution, successes, failures, pending in plan:
        entry = body["by_execution"][execution]
        assert (entry["successes"], entry["failures"], entry["pending"]) == (successes, failures, pending)
        assert entry["judged"] == successes + failures
    assert body["by_execution"]["proposed"]["mean"] is None
    assert body["by_execution"]["confirmed"]["mean"] == pytest.approx(0.95)
    assert body["agreement_rate"] == pytest.approx(100 / 107)
    assert body["recommendation"] == "ready"
    assert every_type.json()["by_execution"] == body["by_execution"]
    assert every_type.json()["decision_type"] is None
    assert other_type.json()["recommendation"] == "not_enough_evidence"
    assert other_type.json()["by_execution"]["confirmed"]["judged"] == 0
