"""The evidence routes' JSON, built from the outcomes context's answers, fits
the contracts the OpenAPI document publishes."""

import pytest

from gateway.codec import outcomes as codec
from gateway.contracts.outcomes import AutonomyEvidence, Evaluation
from services.outcomes import codec as context_codec
from services.outcomes.rules.autonomy import ExecutionCount, weigh
from services.outcomes.rules.evaluation import DecisionWeights, snips


def _weights(matched: int) -> DecisionWeights:
    return DecisionWeights(
        decisions=500,
        judged=400,
        unknown=60,
        pending=40,
        logged_successes=300,
        with_propensity=350,
        matched=matched,
        sum_w=2.0 * matched,
        sum_w_r=1.5 * matched,
        sum_w2=4.0 * matched,
        sum_w2_r=3.0 * matched,
    )


@pytest.mark.parametrize("matched", [10, 200])
def test_an_evaluation_fits_its_contract(matched):
    weights = _weights(matched)
    reply = context_codec.evaluation_to_proto(
        decision_type="stall_response", model="m", weights=weights, evaluation=snips(weights, model="m")
    )
    body = Evaluation.model_validate(codec.evaluation_json(reply))
    assert body.logged.mean == pytest.approx(0.75)
    if matched < 30:
        assert body.estimate is None
    else:
        assert body.estimate is not None
        assert body.estimate.mean == pytest.approx(0.75)
        assert body.estimate.low < 0.75 < body.estimate.high


def test_autonomy_evidence_fits_its_contract_and_all_types_read_as_null():
    counts = [
        ExecutionCount("stall_response", "confirmed", 170, 10, 2, 3),
        ExecutionCount("stall_response", "overridden", 10, 5, 0, 0),
    ]
    reply = context_codec.evidence_to_proto(agent_id="a1", decision_type="", evidence=weigh(counts))
    body = AutonomyEvidence.model_validate(codec.evidence_json(reply))
    assert body.decision_type is None
    assert body.recommendation == "ready"
    assert set(body.by_execution) == {"autonomous", "confirmed", "overridden", "proposed"}
    assert body.by_execution["autonomous"].mean is None
    assert body.by_execution["confirmed"].judged == 180
    assert body.agreement_rate == pytest.approx(185 / 200)
