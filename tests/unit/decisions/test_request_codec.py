"""Decision-memory requests decoded into the plain values the flows take."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime

import pytest

from outrider.v1 import common_pb2, decisions_pb2
from outrider.wire import timestamp
from services.common import callers
from services.common.errors import InvalidArgument, PermissionDenied
from services.decisions import codec
from services.decisions.queries import MAX_RECORD_BATCH
from services.decisions.rules import DecisionDraft, JudgedBy, Outcome, UnreadableDecision, Verdict

DECIDED = datetime(2026, 9, 29, 15, 27, tzinfo=UTC)
IDS = [uuid.UUID(int=n) for n in range(1, 4)]


@contextmanager
def calling_as(caller: callers.Caller | None) -> Iterator[None]:
    token = callers.current.set(caller)
    try:
        yield
    finally:
        callers.current.reset(token)


def test_a_record_request_decodes_as_sent_with_unset_fields_absent() -> None:
    bare = codec.draft_from_proto(
        decisions_pb2.RecordDecisionRequest(decision_type="stall_response", agent_id="A", subject_id="S", action="x")
    )
    assert bare == DecisionDraft(
        id="",
        decision_type="stall_response",
        agent_id="A",
        subject_id="S",
        action="x",
        confidence=None,
        reasoning="",
        model="",
        context=None,
        embedding=(),
        decided_at=None,
    )
    full = codec.draft_from_proto(
        decisions_pb2.RecordDecisionRequest(
            id="d-1",
            confidence=0.0,
            context_json=b'{"zone": "north"}',
            embedding=[0.5, 0.25],
            decided_at=timestamp(DECIDED),
        )
    )
    assert (full.id, full.confidence, full.context) == ("d-1", 0.0, {"zone": "north"})
    assert (full.embedding, full.decided_at) == ((0.5, 0.25), DECIDED)


def test_a_batch_refuses_an_unreadable_decision_alone_under_its_own_id() -> None:
    drafts = codec.drafts_from_proto(
        decisions_pb2.RecordDecisionsRequest(
            decisions=[
                decisions_pb2.RecordDecisionRequest(id="good", decision_type="t"),
                decisions_pb2.RecordDecisionRequest(id="bad", context_json=b"[1, 2]"),
            ]
        )
    )
    good, bad = drafts
    assert isinstance(good, DecisionDraft) and good.id == "good"
    assert isinstance(bad, UnreadableDecision) and bad.id == "bad"
    assert "context" in bad.error.fields


def test_a_batch_past_its_cap_is_refused_whole() -> None:
    request = decisions_pb2.RecordDecisionsRequest(
        decisions=[decisions_pb2.RecordDecisionRequest(context_json=b"not json")] * (MAX_RECORD_BATCH + 1)
    )
    with pytest.raises(InvalidArgument) as caught:
        codec.drafts_from_proto(request)
    assert caught.value.fields.keys() == {"decisions"}


def test_a_stream_message_gives_each_search_with_its_tag() -> None:
    message = decisions_pb2.PrecedentQueries(
        queries=[
            decisions_pb2.PrecedentQuery(tag=7, search=decisions_pb2.FindSimilarRequest(decision_type="a")),
            decisions_pb2.PrecedentQuery(tag=9, search=decisions_pb2.FindSimilarRequest(decision_type="b")),
        ]
    )
    assert [(tag, search.decision_type) for tag, search in codec.searches_from_proto(message)] == [(7, "a"), (9, "b")]


@pytest.mark.parametrize("claimed", ["", "sweeper", "human", "api"])
def test_an_engines_verdict_is_signed_by_its_key_whatever_it_claims_and_names_no_person(claimed: str) -> None:
    request = decisions_pb2.SetOutcomeRequest(
        id=str(IDS[0]), outcome="success", reason="  delivered  ", judged_by=claimed
    )
    with calling_as(callers.Caller(kind="engine", engine="default")):
        judgement = codec.judgement_from_proto(request)
    assert (judgement.decision_id, judgement.outcome) == (IDS[0], Outcome.SUCCESS)
    assert judgement.judged_by == "engine:default"
    assert (judgement.reason, judgement.changed_by, judgement.changed_by_email, judgement.writer) == (
        "delivered",
        "",
        "",
        False,
    )


@pytest.mark.parametrize(("role", "writer"), [(1, True), (3, False)])
def test_a_verdict_carries_the_verified_person(role: int, writer: bool) -> None:
    person = callers.Principal(sub="u-1", email="a@example.com", role=role, tenant_id=0)
    request = decisions_pb2.SetOutcomeRequest(id=str(IDS[0]), outcome="failure", judged_by="human")
    with calling_as(callers.Caller(kind="service", principal=person)):
        judgement = codec.judgement_from_proto(request)
    assert (judgement.judged_by, judgement.reason) == (JudgedBy.HUMAN, None)
    assert (judgement.changed_by, judgement.changed_by_email, judgement.writer) == ("u-1", "a@example.com", writer)


def test_an_engine_the_gateway_vouches_for_signs_its_verdict_with_its_own_name() -> None:
    request = decisions_pb2.SetOutcomeRequest(id=str(IDS[0]), outcome="failure", judged_by="human")
    with calling_as(callers.Caller(kind="service", engine="dispatch")):
        assert codec.judgement_from_proto(request).judged_by == "engine:dispatch"


def test_a_single_verdict_from_the_platform_acting_for_nobody_is_refused() -> None:
    request = decisions_pb2.SetOutcomeRequest(id=str(IDS[0]), outcome="failure", judged_by="sweeper")
    with calling_as(callers.Caller(kind="service")), pytest.raises(PermissionDenied) as refused:
        codec.judgement_from_proto(request)
    assert refused.value.code == "JUDGE_UNKNOWN"


@pytest.mark.parametrize(
    "caller",
    [
        callers.Caller(kind="service", engine="dispatch"),
        callers.Caller(kind="service", principal=callers.Principal(sub="u-1", email="", role=1, tenant_id=0)),
    ],
)
def test_a_batch_of_verdicts_from_anyone_but_the_platform_itself_is_refused(caller: callers.Caller) -> None:
    request = decisions_pb2.SetOutcomesRequest(
        judged_by="sweeper", verdicts=[decisions_pb2.OutcomeVerdict(id=str(IDS[0]), outcome="success")]
    )
    with calling_as(caller), pytest.raises(PermissionDenied) as refused:
        codec.pending_verdicts_from_proto(request)
    assert refused.value.code == "SWEEP_VERDICTS_ONLY"


def test_a_verdict_on_no_uuid_is_refused_naming_the_id() -> None:
    with pytest.raises(InvalidArgument) as caught:
        codec.judgement_from_proto(decisions_pb2.SetOutcomeRequest(id="nope", outcome="success"))
    assert caught.value.fields.keys() == {"id"}


def test_a_batch_of_verdicts_decodes_in_order() -> None:
    request = decisions_pb2.SetOutcomesRequest(
        judged_by="sweeper",
        verdicts=[
            decisions_pb2.OutcomeVerdict(id=str(IDS[0]), outcome="success", reason=" on time "),
            decisions_pb2.OutcomeVerdict(id=str(IDS[1]), outcome="unknown"),
        ],
    )
    batch = codec.pending_verdicts_from_proto(request)
    assert batch.judged_by is JudgedBy.SWEEPER
    assert batch.verdicts == (Verdict(IDS[0], "success", "on time"), Verdict(IDS[1], "unknown", None))


def test_a_decision_twice_in_one_batch_is_refused_before_its_outcome_is_read() -> None:
    request = decisions_pb2.SetOutcomesRequest(
        judged_by="sweeper",
        verdicts=[
            decisions_pb2.OutcomeVerdict(id=str(IDS[0]), outcome="success"),
            decisions_pb2.OutcomeVerdict(id=str(IDS[0]), outcome="maybe"),
        ],
    )
    with pytest.raises(InvalidArgument) as caught:
        codec.pending_verdicts_from_proto(request)
    assert caught.value.fields.keys() == {"verdicts[1].id"}


def test_a_listing_with_no_filters_filters_nothing() -> None:
    listing = codec.listing_from_proto(decisions_pb2.ListDecisionsRequest())
    assert (listing.decision_type, listing.outcome, listing.agent_id, listing.model) == (None, None, None, None)
    assert (listing.decided_from, listing.decided_to, listing.after) == (None, None, None)
    assert listing.limit > 0


def test_a_listing_refuses_its_outcome_before_its_cursor() -> None:
    request = decisions_pb2.ListDecisionsRequest(outcome="maybe", page=common_pb2.PageRequest(cursor="garbage"))
    with pytest.raises(InvalidArgument) as caught:
        codec.listing_from_proto(request)
    assert caught.value.fields.keys() == {"outcome"}


def test_a_detail_without_a_count_carries_the_default_precedents() -> None:
    query = codec.detail_query_from_proto(decisions_pb2.GetDecisionRequest(id=str(IDS[2])))
    assert query.decision_id == IDS[2] and query.precedents == 5
    assert codec.detail_query_from_proto(decisions_pb2.GetDecisionRequest(id=str(IDS[2]), precedents=0)).precedents == 0
