import json
from datetime import UTC, datetime

import pytest

from outrider.v1 import outcomes_pb2
from services.common.errors import InvalidArgument
from services.common.guards import Refused
from services.outcomes import codec
from services.outcomes.rules.advice import CreditTally, RouteKey, advise
from services.outcomes.rules.credit import Credit, Resolution, Role, TurnCredit
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
