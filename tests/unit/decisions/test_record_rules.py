"""Recording rules: a request's draft into a decision, and a retried id."""

from __future__ import annotations

import uuid
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from services.common.callers import EVERY_AGENT, AgentScope
from services.common.errors import Conflict, InvalidArgument, PermissionDenied
from services.decisions import rules
from services.decisions.rules import (
    DecisionDraft,
    InvalidDecision,
    check_batch,
    decision_to_record,
    id_reuse,
    identity,
)

NOW = datetime(2026, 9, 29, 15, 27, tzinfo=UTC)
DRAFT = DecisionDraft(
    id="",
    decision_type="stall_response",
    agent_id="EXCEPTION_AGENT",
    subject_id="booking-4411",
    action="reassign",
    confidence=0.82,
    reasoning="",
    model="",
    context=None,
    embedding=(),
    decided_at=None,
)


def recorded(**changes: object):
    return decision_to_record(replace(DRAFT, **changes), now=NOW, embedding_dimension=3)


def test_empty_text_of_a_draft_is_absent_as_proto3_sends_it() -> None:
    decision = recorded()
    assert (decision.id, decision.reasoning, decision.model, decision.embedding) == (None, None, None, None)
    assert decision.decided_at == NOW and decision.context == {}


def test_a_draft_keeps_what_was_sent() -> None:
    key = uuid.uuid4()
    decision = recorded(
        id=str(key),
        reasoning="idle 12 min",
        model="m-1",
        context={"zone": "north"},
        embedding=(0.5, 0.5, 0.5),
        decided_at=NOW - timedelta(hours=1),
    )
    assert decision.id == key and (decision.reasoning, decision.model) == ("idle 12 min", "m-1")
    assert decision.context == {"zone": "north"} and decision.embedding == (0.5, 0.5, 0.5)
    assert decision.decided_at == NOW - timedelta(hours=1)


def test_a_clock_running_ahead_within_the_skew_is_stored_as_made_now() -> None:
    assert recorded(decided_at=NOW + timedelta(seconds=30)).decided_at == NOW


def test_a_draft_breaking_a_rule_is_refused_naming_the_field() -> None:
    with pytest.raises(InvalidDecision) as caught:
        recorded(confidence=None)
    assert caught.value.field == "confidence"
    with pytest.raises(InvalidDecision) as ahead:
        recorded(decided_at=NOW + timedelta(minutes=5))
    assert ahead.value.field == "decided_at"


def test_a_retry_of_the_same_decision_is_no_conflict() -> None:
    decision = recorded(reasoning="first try")
    again = replace(decision, reasoning="second try", confidence=0.5)
    assert id_reuse("d-1", again, identity(decision)) is None


def test_nothing_recorded_under_the_id_is_no_conflict() -> None:
    assert id_reuse("d-1", recorded(), None) is None


@pytest.mark.parametrize("field", ["decision_type", "agent_id", "subject_id", "action"])
def test_the_same_id_on_a_different_decision_is_refused(field: str) -> None:
    decision = recorded()
    other = replace(decision, **{field: "something_else"})
    conflict = id_reuse("d-1", other, identity(decision))
    assert isinstance(conflict, Conflict)
    assert (conflict.code, conflict.details) == ("DECISION_ID_REUSED", {"id": "d-1"})
    assert "d-1" in conflict.message


def test_a_batch_past_its_cap_is_refused_whole_naming_the_field() -> None:
    check_batch("decisions", 500, 500)
    with pytest.raises(InvalidArgument) as caught:
        check_batch("decisions", 501, 500)
    assert caught.value.message == "decisions: at most 500 per call, got 501"
    assert caught.value.fields == {"decisions": caught.value.message}


def test_a_decision_for_an_agent_outside_the_engines_list_is_refused_naming_both() -> None:
    held = AgentScope(engine="dispatch", agents=frozenset({"DISPATCH_AGENT"}))
    assert rules.agent_refusal(held, "DISPATCH_AGENT") is None
    refusal = rules.agent_refusal(held, "EXCEPTION_AGENT")
    assert isinstance(refusal, PermissionDenied) and refusal.code == rules.AGENT_NOT_PERMITTED
    assert refusal.details == {"agent_id": "EXCEPTION_AGENT", "engine": "dispatch"}
    assert "EXCEPTION_AGENT" in refusal.message
    assert rules.agent_refusal(AgentScope(engine="support"), "EXCEPTION_AGENT") is None
    assert rules.agent_refusal(EVERY_AGENT, "EXCEPTION_AGENT") is None
