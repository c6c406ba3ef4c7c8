import math
import uuid
from datetime import UTC, datetime, timedelta, timezone

import pytest

from services.decisions.rules import (
    DECIDED_AT_SKEW,
    DEFAULT_K,
    InvalidDecision,
    JudgedBy,
    NewDecision,
    Outcome,
    SimilarSummary,
    clamp_k,
    may_rejudge,
    new_decision,
    parse_outcome,
    similar_summary,
)

IST = timezone(timedelta(hours=5, minutes=30))
NOW = datetime(2026, 9, 29, 15, 27, tzinfo=UTC)
DIMENSION = 4


def record(**overrides):
    fields = {
        "decision_type": "stall_response",
        "agent_id": "EXCEPTION_AGENT",
        "subject_id": "booking-4411",
        "action": "reassign",
        "confidence": 0.82,
        "now": NOW,
        "embedding_dimension": DIMENSION,
    }
    fields.update(overrides)
    return new_decision(**fields)


def refused_field(**overrides):
    with pytest.raises(InvalidDecision) as caught:
        record(**overrides)
    return caught.value.field


def test_minimal_request_becomes_a_decision_stamped_now():
    decision = record()

    assert decision == NewDecision(
        decision_type="stall_response",
        agent_id="EXCEPTION_AGENT",
        subject_id="booking-4411",
        action="reassign",
        confidence=0.82,
        decided_at=NOW,
        context={},
        reasoning=None,
        model=None,
        embedding=None,
        id=None,
    )


def test_full_request_keeps_every_field():
    key = uuid.uuid4()
    decided = NOW - timedelta(hours=3)

    decision = record(
        id=str(key),
        context={"booking": {"status": "stalled", "minutes": 25}},
        reasoning="Rider has not moved for 25 minutes.\nNearest free rider is 1.2 km away.",
        model="claude-opus-4-8",
        embedding=[0.5, 0.5, 0.5, 0.5],
        decided_at=decided,
    )

    assert decision.id == key
    assert decision.context == {"booking": {"status": "stalled", "minutes": 25}}
    assert decision.reasoning == "Rider has not moved for 25 minutes.\nNearest free rider is 1.2 km away."
    assert decision.model == "claude-opus-4-8"
    assert decision.embedding == (0.5, 0.5, 0.5, 0.5)
    assert decision.decided_at == decided


def test_invalid_decision_is_a_value_error_naming_the_field():
    with pytest.raises(ValueError) as caught:  # noqa: PT011 - the type of the error is the claim
        record(agent_id="")

    error = caught.value
    assert isinstance(error, InvalidDecision)
    assert error.field == "agent_id"
    assert error.problem == "is required"
    assert error.fields == {"agent_id": "is required"}
    assert str(error) == "agent_id: is required"


@pytest.mark.parametrize(
    "decision_type",
    ["stall_response", "assignment_failure", "ab", "a1", "triage_v2", "x" * 64],
)
def test_decision_type_accepts_lowercase_snake(decision_type):
    assert record(decision_type=decision_type).decision_type == decision_type


@pytest.mark.parametrize(
    "decision_type",
    [
        "",
        None,
        "a",
        "x" * 65,
        "Stall_response",
        "stall-response",
        "stall response",
        "1stall",
        "_stall",
        "stall_",
        "stall__response",
        "stallé",
        42,
    ],
)
def test_decision_type_refuses_anything_else(decision_type):
    assert refused_field(decision_type=decision_type) == "decision_type"


@pytest.mark.parametrize("field", ["agent_id", "subject_id", "action"])
@pytest.mark.parametrize("value", [None, "", "   ", 7])
def test_required_text_fields_must_be_present(field, value):
    assert refused_field(**{field: value}) == field


def test_required_text_is_trimmed():
    decision = record(agent_id="  DISPATCH_AGENT ", subject_id="\tbooking-1\n", action=" escalate ")

    assert (decision.agent_id, decision.subject_id, decision.action) == (
        "DISPATCH_AGENT",
        "booking-1",
        "escalate",
    )


@pytest.mark.parametrize("confidence", [0, 1, 0.0, 1.0, 0.7])
def test_confidence_in_unit_interval_is_accepted_as_float(confidence):
    decision = record(confidence=confidence)

    assert decision.confidence == confidence
    assert isinstance(decision.confidence, float)


@pytest.mark.parametrize("confidence", [None, -0.01, 1.0001, 2, 10**400, math.nan, math.inf, True, "0.9"])
def test_confidence_outside_unit_interval_or_not_a_number_is_refused(confidence):
    assert refused_field(confidence=confidence) == "confidence"


@pytest.mark.parametrize("reasoning", [None, "", "   "])
def test_blank_reasoning_counts_as_absent(reasoning):
    assert record(reasoning=reasoning).reasoning is None


def test_reasoning_is_kept_verbatim():
    assert record(reasoning="  two spaces first").reasoning == "  two spaces first"


@pytest.mark.parametrize("field", ["reasoning", "model"])
def test_optional_text_must_be_text(field):
    assert refused_field(**{field: ["not", "text"]}) == field


def test_blank_model_counts_as_absent():
    assert record(model="").model is None


def test_id_accepts_uuid_objects_and_strings():
    key = uuid.UUID("7d0f1c3e-2b4a-4f6e-9a8b-1c2d3e4f5a6b")

    assert record(id=key).id == key
    assert record(id="7D0F1C3E-2B4A-4F6E-9A8B-1C2D3E4F5A6B").id == key


def test_empty_id_counts_as_absent():
    assert record(id="").id is None


@pytest.mark.parametrize("key", ["not-a-uuid", "1234", 1234])
def test_id_that_is_not_a_uuid_is_refused(key):
    assert refused_field(id=key) == "id"


def test_decided_at_is_normalised_to_utc_as_the_same_instant():
    decided = datetime(2026, 9, 29, 20, 57, tzinfo=IST)

    stored = record(decided_at=decided).decided_at

    assert stored == decided
    assert stored.utcoffset() == timedelta(0)
    assert stored.hour == 15


def test_decided_at_may_be_slightly_ahead_within_clock_skew():
    assert record(decided_at=NOW + DECIDED_AT_SKEW).decided_at == NOW + DECIDED_AT_SKEW


def test_decided_at_beyond_clock_skew_is_refused():
    assert refused_field(decided_at=NOW + DECIDED_AT_SKEW + timedelta(seconds=1)) == "decided_at"


def test_skew_is_two_minutes():
    assert timedelta(minutes=2) == DECIDED_AT_SKEW


@pytest.mark.parametrize("decided_at", [datetime(2026, 9, 29, 10, 0), "2026-09-29T10:00:00Z", 1759140000])
def test_decided_at_must_be_an_aware_timestamp(decided_at):
    assert refused_field(decided_at=decided_at) == "decided_at"


def test_now_must_be_aware():
    with pytest.raises(ValueError, match="now"):
        record(now=datetime(2026, 9, 29, 15, 27))


def test_default_decided_at_is_now_in_utc():
    assert record(now=NOW.astimezone(IST)).decided_at.utcoffset() == timedelta(0)


def nested(depth: int) -> dict:
    value: dict = {"leaf": 1}
    for _ in range(depth):
        value = {"inner": value}
    return value


@pytest.mark.parametrize(
    ("context", "detail"),
    [
        (["a", "list"], "must be an object"),
        ("text", "must be an object"),
        ({"facts": {"eta": math.nan}}, "context.facts.eta"),
        ({"facts": [1, math.inf]}, "context.facts[1]"),
        ({"count": 10**400}, "context.count is not a finite number"),
        ({"facts": {1: "numeric key"}}, "key JSON or Postgres cannot hold"),
        ({"at": datetime(2026, 9, 29, tzinfo=UTC)}, "context.at"),
        ({"note": "bad\x00byte"}, "context.note contains a NUL"),
        ({"facts": ["ok", "\x00"]}, "context.facts[1] contains a NUL"),
        ({"bad\x00key": 1}, "key JSON or Postgres cannot hold"),
        (nested(17), "nests deeper than 16 levels"),
    ],
)
def test_context_must_be_json_that_jsonb_can_hold(context, detail):
    with pytest.raises(InvalidDecision) as caught:
        record(context=context)

    assert caught.value.field == "context"
    assert detail in caught.value.message


@pytest.mark.parametrize("field", ["agent_id", "subject_id", "action", "reasoning", "model"])
def test_text_postgres_cannot_store_is_refused_by_name(field):
    # Decisions are stored many to a statement: one the database would
    # refuse must be refused before it fails the others.
    assert refused_field(**{field: "BK\x00-1"}) == field


def test_context_is_copied_not_shared():
    context = {"status": "stalled"}

    decision = record(context=context)
    context["status"] = "delivered"

    assert decision.context == {"status": "stalled"}


def test_embedding_of_exact_dimension_is_kept_as_floats():
    assert record(embedding=[1, 0, 0, 0]).embedding == (1.0, 0.0, 0.0, 0.0)


def test_empty_embedding_counts_as_absent():
    assert record(embedding=[]).embedding is None


@pytest.mark.parametrize(
    ("embedding", "detail"),
    [
        ([0.1, 0.2, 0.3], "exactly 4 dimensions, got 3"),
        ([0.1] * 5, "exactly 4 dimensions, got 5"),
        ([0.1, 0.2, math.nan, 0.4], "finite"),
        ([0.1, 0.2, 10**400, 0.4], "finite"),
        ([0.1, 0.2, "0.3", 0.4], "finite"),
        ([True, 0.2, 0.3, 0.4], "finite"),
        ([0, 0, 0, 0], "all zeros"),
        ("0.1,0.2,0.3,0.4", "list of numbers"),
        (42, "list of numbers"),
    ],
)
def test_embedding_is_refused_unless_a_usable_vector(embedding, detail):
    with pytest.raises(InvalidDecision) as caught:
        record(embedding=embedding)

    assert caught.value.field == "embedding"
    assert detail in caught.value.message


@pytest.mark.parametrize("word", ["success", "failure", "unknown"])
def test_parse_outcome_accepts_the_vocabulary(word):
    assert parse_outcome(word) == Outcome(word)
    assert parse_outcome(word).value == word


@pytest.mark.parametrize("word", ["Success", " success", "pending", "", "ok", None, 1])
def test_parse_outcome_refuses_anything_else(word):
    with pytest.raises(InvalidDecision) as caught:
        parse_outcome(word)

    assert caught.value.field == "outcome"
    assert "success, failure, unknown" in caught.value.message


@pytest.mark.parametrize(
    ("current", "judged_by", "allowed"),
    [
        (None, JudgedBy.SWEEPER, True),
        (None, JudgedBy.API, True),
        (None, JudgedBy.HUMAN, True),
        (Outcome.SUCCESS, JudgedBy.SWEEPER, False),
        (Outcome.FAILURE, JudgedBy.API, False),
        (Outcome.UNKNOWN, JudgedBy.SWEEPER, False),
        (Outcome.UNKNOWN, JudgedBy.API, False),
        (Outcome.SUCCESS, JudgedBy.HUMAN, True),
        (Outcome.FAILURE, JudgedBy.HUMAN, True),
        (Outcome.UNKNOWN, JudgedBy.HUMAN, True),
    ],
)
def test_may_rejudge_lets_anyone_judge_pending_and_only_a_human_overrule(current, judged_by, allowed):
    assert may_rejudge(current, judged_by) is allowed


def test_similar_summary_counts_successes_and_failures():
    outcomes = [Outcome.SUCCESS, Outcome.FAILURE, Outcome.SUCCESS, Outcome.SUCCESS]

    assert similar_summary(outcomes) == SimilarSummary(successes=3, failures=1, success_rate=0.75)


def test_similar_summary_leaves_unknown_out_of_the_rate():
    outcomes = [Outcome.SUCCESS, Outcome.UNKNOWN, Outcome.UNKNOWN, Outcome.FAILURE]

    assert similar_summary(outcomes) == SimilarSummary(successes=1, failures=1, success_rate=0.5)


def test_similar_summary_accepts_stored_words():
    assert similar_summary(["failure", "failure"]) == SimilarSummary(0, 2, 0.0)


@pytest.mark.parametrize("outcomes", [[], [Outcome.UNKNOWN], iter(())])
def test_similar_summary_without_evidence_has_no_rate(outcomes):
    assert similar_summary(outcomes) == SimilarSummary(successes=0, failures=0, success_rate=None)


def test_clamp_k_defaults_to_ten():
    assert clamp_k() == DEFAULT_K == 10
    assert clamp_k(None) == 10


@pytest.mark.parametrize("k", [1, 10, 57, 100])
def test_clamp_k_accepts_one_to_a_hundred(k):
    assert clamp_k(k) == k


@pytest.mark.parametrize("k", [0, -1, 101, 1000, True, 2.0, "5"])
def test_clamp_k_refuses_the_rest(k):
    with pytest.raises(InvalidDecision) as caught:
        clamp_k(k)

    assert caught.value.field == "k"


@pytest.mark.parametrize("scale", [1e-9, 1e-30, 1e20, 3e38])
def test_an_embedding_too_short_or_too_long_for_single_precision_is_refused(scale):
    vector = [scale] * 8
    with pytest.raises(InvalidDecision) as caught:
        record(embedding=vector, embedding_dimension=8)
    assert caught.value.field == "embedding" and "length" in caught.value.problem
