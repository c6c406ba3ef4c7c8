import json
import uuid
from datetime import UTC, datetime

import pytest

from outrider.v1 import decisions_pb2, outcomes_pb2
from services.common.errors import InvalidArgument
from services.common.guards import Refused
from services.outcomes import codec
from services.outcomes.rules.advice import CreditTally, RouteKey, advise
from services.outcomes.rules.autonomy import weigh
from services.outcomes.rules.credit import Arm, Credit, Resolution, Role, RolloutArm, TurnCredit
from services.outcomes.rules.evaluation import snips
from services.outcomes.rules.facts import BookingFactsEvent, SubjectFacts
from services.outcomes.rules.submission import Route

AT = datetime(2024, 5, 1, 10, 0, tzinfo=UTC)


def request(*turns: outcomes_pb2.Turn, **fields) -> outcomes_pb2.SubmitConversationRequest:
    return outcomes_pb2.SubmitConversationRequest(conversation_id="c-1", turns=list(turns), **fields)


def test_a_conversation_reads_absent_and_blank_optionals_as_none():
    conversation, route = codec.conversation_from_proto(
        request(
            outcomes_pb2.Turn(role="user", text="hi", ref="u1"),
            outcomes_pb2.Turn(role="assistant", text="hello", ref="a1", model="m1", trace_id="  "),
            skill="triage",
        )
    )
    assert route == Route(skill="triage", decision_type=None)
    user, reply = conversation.turns
    assert (user.role, user.model, user.trace_id) == (Role.USER, None, None)
    assert (reply.model, reply.trace_id) == ("m1", None)


@pytest.mark.parametrize(
    ("message", "field"),
    [
        (request(outcomes_pb2.Turn(role="robot", text="x", ref="r1")), "turns[0].role"),
        (request(outcomes_pb2.Turn(role="user", text="x", ref="r\x00")), "turns[0].ref"),
        (request(outcomes_pb2.Turn(role="user", text="x", ref="r1", trace_id="t\x00")), "turns[0].trace_id"),
        (request(skill="a\x00b"), "skill"),
        (outcomes_pb2.SubmitConversationRequest(conversation_id=""), "conversation_id"),
    ],
)
def test_a_bad_conversation_names_its_field(message, field):
    with pytest.raises(InvalidArgument) as caught:
        codec.conversation_from_proto(message)
    assert list(caught.value.fields) == [field]
    assert caught.value.code == "MALFORMED_CONVERSATION"


ROLLOUT = "2b0c8f2e-0a43-4a4e-9b52-1d8f1f7a3c11"


def test_an_assistant_turn_carries_its_rollout_arm_and_one_without_carries_none():
    conversation, _ = codec.conversation_from_proto(
        request(
            outcomes_pb2.Turn(role="user", text="hi", ref="u1"),
            outcomes_pb2.Turn(role="assistant", text="hello", ref="a1", rollout={"id": ROLLOUT, "arm": "candidate"}),
            outcomes_pb2.Turn(role="user", text="thanks", ref="u2"),
            outcomes_pb2.Turn(role="assistant", text="bye", ref="a2"),
        )
    )
    stamped, plain = conversation.turns[1], conversation.turns[3]
    assert stamped.rollout == RolloutArm(uuid.UUID(ROLLOUT), Arm.CANDIDATE)
    assert plain.rollout is None


@pytest.mark.parametrize(
    ("turn", "field"),
    [
        (outcomes_pb2.Turn(role="assistant", text="x", ref="a1", rollout={"id": ROLLOUT, "arm": "treatment"}), "arm"),
        (outcomes_pb2.Turn(role="assistant", text="x", ref="a1", rollout={"id": ROLLOUT}), "arm"),
        (outcomes_pb2.Turn(role="assistant", text="x", ref="a1", rollout={"id": "r-1", "arm": "control"}), "id"),
        (outcomes_pb2.Turn(role="assistant", text="x", ref="a1", rollout={}), "id"),
    ],
)
def test_a_turn_arm_that_is_not_a_rollout_arm_is_refused_by_name(turn, field):
    with pytest.raises(InvalidArgument) as caught:
        codec.conversation_from_proto(request(outcomes_pb2.Turn(role="user", text="hi", ref="u1"), turn))
    assert list(caught.value.fields) == [f"turns[1].rollout.{field}"]
    assert caught.value.code == "MALFORMED_CONVERSATION"


def test_an_arm_on_a_user_turn_is_refused():
    turn = outcomes_pb2.Turn(role="user", text="hi", ref="u1", rollout={"id": ROLLOUT, "arm": "control"})
    with pytest.raises(InvalidArgument) as caught:
        codec.conversation_from_proto(request(turn))
    assert list(caught.value.fields) == ["turns[0].rollout"]


def test_a_credit_without_model_or_trace_leaves_them_unset():
    credit = TurnCredit(
        conversation_id="c",
        turn_ref="a1",
        model=None,
        trace_id=None,
        credit=Credit.FAILURE,
        confidence=0.5,
        episode_id=2,
        resolution=Resolution.ONGOING,
    )
    message = codec.credit_to_proto(credit)
    assert not message.HasField("model") and not message.HasField("trace_id")
    assert (message.credit, message.episode_id, message.resolution) == ("failure", 2, "ongoing")


def test_facts_travel_as_their_stored_json():
    facts = SubjectFacts("b-1").merge(BookingFactsEvent(subject_id="b-1", at=AT, status="assigned"))
    reply = codec.facts_response(facts, changed=True)
    assert json.loads(reply.facts) == {"status": {"value": "assigned", "at": "2024-05-01T10:00:00+00:00"}}
    assert reply.changed and reply.subject_id == "b-1"


def test_routing_carries_both_kinds_of_evidence_and_the_seed():
    result = advise(RouteKey("skill", "triage"), credits=[CreditTally("m1", 2.0, 1.0)], outcomes=[], seed=42)
    message = codec.routing_to_proto(result)
    assert (message.key, message.pick, message.seed) == ("skill:triage", "m1", 42)
    (arm,) = message.arms
    assert (arm.alpha, arm.beta, arm.credit_successes, arm.decision_successes) == (3.0, 2.0, 2.0, 0.0)
    assert arm.pick_probability == 1.0


def test_a_seed_is_read_only_when_set():
    assert codec.seed_of(outcomes_pb2.GetRoutingRequest(skill="s")) is None
    assert codec.seed_of(outcomes_pb2.GetRoutingRequest(skill="s", seed=0)) == 0


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"skill": "\x00"}, "skill"),
        ({"decision_type": "stall\x00response"}, "decision_type"),
        ({"candidates": ["claude-sonnet-4-5", "m\x00"]}, "candidates[1]"),
        ({"skill": "s" * 257}, "skill"),
    ],
)
@pytest.mark.parametrize("kind", [outcomes_pb2.RecommendModelRequest, outcomes_pb2.GetRoutingRequest])
def test_a_routing_name_postgres_cannot_hold_is_refused_by_name(kind, fields, field):
    with pytest.raises(Refused) as refused:
        codec.route_request(kind(**{"decision_type": "stall_response", **fields}))
    assert refused.value.field == field


# ─── Evidence before a switch ────────────────────────────────────────────────


def test_an_evaluation_needs_a_decision_type_and_a_model():
    assert codec.evaluate_query(outcomes_pb2.EvaluateRequest(decision_type=" stall ", model="m")) == ("stall", "m")
    with pytest.raises(InvalidArgument, match="model is required"):
        codec.evaluate_query(outcomes_pb2.EvaluateRequest(decision_type="stall", model="  "))
    with pytest.raises(Refused):
        codec.evaluate_query(outcomes_pb2.EvaluateRequest(decision_type="st\x00all", model="m"))


def test_an_evaluation_without_enough_matches_carries_no_estimate_but_the_logged_rate():
    reply = decisions_pb2.DecisionWeights(
        decisions=50, judged=40, unknown=5, pending=5, logged_successes=30, with_propensity=20, matched=10, sum_w=20
    )
    weights = codec.weights_from_proto(reply)
    message = codec.evaluation_to_proto(
        decision_type="stall", model="m", weights=weights, evaluation=snips(weights, model="m")
    )
    assert not message.HasField("estimate")
    assert message.logged.mean == pytest.approx(0.75)
    assert (message.logged.decisions, message.logged.unknown, message.logged.pending) == (50, 5, 5)
    assert message.method == "snips" and message.matched == 10 and "at least 30" in message.reason


def test_autonomy_evidence_answers_every_execution_and_leaves_absent_rates_unset():
    reply = decisions_pb2.CountExecutionsResponse(
        items=[decisions_pb2.ExecutionCount(decision_type="stall", execution="confirmed", successes=3, failures=1)]
    )
    evidence = weigh(codec.execution_counts_from_proto(reply))
    message = codec.evidence_to_proto(agent_id="a1", decision_type="", evidence=evidence)
    assert set(message.by_execution) == {"autonomous", "confirmed", "overridden", "proposed"}
    assert message.by_execution["confirmed"].mean == pytest.approx(0.75)
    assert not message.by_execution["autonomous"].HasField("mean")
    assert message.agreement_rate == pytest.approx(1.0)
    assert message.recommendation == "not_enough_evidence"
