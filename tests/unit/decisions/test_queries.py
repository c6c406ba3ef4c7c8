from datetime import UTC, datetime, timedelta, timezone

import pytest

from services.decisions import retention
from services.decisions.queries import (
    EF_SEARCH_FLOOR,
    EF_SEARCH_MAX,
    EXACT_SEARCH_ROWS,
    SearchPlan,
    graph_came_short,
    outcome_filter,
    plan_search,
    similar_query,
)
from services.decisions.rules import InvalidDecision

IST = timezone(timedelta(hours=5, minutes=30))


def test_outcome_filter_takes_the_vocabulary_and_pending():
    assert outcome_filter("") is None
    assert [outcome_filter(w) for w in ("success", "failure", "unknown", "pending")] == [
        "success",
        "failure",
        "unknown",
        "pending",
    ]
    with pytest.raises(InvalidDecision) as caught:
        outcome_filter("Success")
    assert caught.value.field == "outcome" and "pending" in caught.value.message


def test_similar_query_needs_a_vector_of_the_schema_size_or_a_context():
    vector = similar_query(decision_type="stall_response", k=None, embedding=[0.0, 1.0, 0.5], context=None, dimension=3)
    assert vector.embedding == (0.0, 1.0, 0.5) and vector.k == 10 and vector.context is None
    facts = similar_query(decision_type="stall_response", k=3, embedding=[], context={"zone": "n"}, dimension=3)
    assert facts.embedding is None and facts.context == {"zone": "n"} and facts.k == 3
    cases = {
        "embedding": {"embedding": [1.0, 2.0], "context": None},
        "context": {"embedding": [], "context": None},
        "decision_type": {"decision_type": "Stall", "embedding": [1.0, 0.0, 0.0], "context": None},
        "k": {"k": 0, "embedding": [1.0, 0.0, 0.0], "context": None},
    }
    for field, overrides in cases.items():
        arguments = {"decision_type": "stall_response", "k": None, "dimension": 3, **overrides}
        with pytest.raises(InvalidDecision) as caught:
            similar_query(**arguments)
        assert caught.value.field == field
    with pytest.raises(InvalidDecision) as zero:
        similar_query(decision_type="stall_response", k=None, embedding=[0.0, 0.0, 0.0], context=None, dimension=3)
    assert "zeros" in zero.value.message


def test_a_type_holding_every_judged_row_walks_the_graph_at_the_floor():
    assert plan_search(k=10, type_rows=200_000, judged_rows=200_000) == SearchPlan(False, EF_SEARCH_FLOOR)


def test_the_walk_widens_as_the_type_share_shrinks():
    tenth = plan_search(k=10, type_rows=20_000, judged_rows=200_000)
    fiftieth = plan_search(k=10, type_rows=4_000, judged_rows=200_000)
    many = plan_search(k=100, type_rows=100_000, judged_rows=200_000)
    assert not tenth.exact and not fiftieth.exact and not many.exact
    assert EF_SEARCH_FLOOR < tenth.ef_search < fiftieth.ef_search <= EF_SEARCH_MAX
    assert (tenth.ef_search, fiftieth.ef_search, many.ef_search) == (200, 1000, 400)


def test_small_or_very_rare_types_are_read_exactly():
    assert plan_search(k=10, type_rows=EXACT_SEARCH_ROWS, judged_rows=10**6).exact
    assert plan_search(k=10, type_rows=0, judged_rows=0).exact
    # 1% of a million judged rows: no walk within pgvector's ceiling holds
    # enough of them, so the type's 10,000 rows are read instead.
    assert plan_search(k=10, type_rows=10_000, judged_rows=1_000_000).exact
    assert not plan_search(k=10, type_rows=10_000, judged_rows=10_000, exact_rows=0).exact


def test_a_short_walk_is_rerun_only_when_the_type_could_give_more():
    assert graph_came_short(found=3, k=10, type_rows=5000)
    assert not graph_came_short(found=10, k=10, type_rows=5000)
    assert not graph_came_short(found=4, k=10, type_rows=4)


def test_retention_cutoff_counts_whole_days_back_and_refuses_nonsense():
    at = datetime(2026, 9, 29, 12, 0, tzinfo=UTC)
    assert retention.cutoff(at, 180) == datetime(2026, 4, 2, 12, 0, tzinfo=UTC)
    with pytest.raises(ValueError, match="retention_days"):
        retention.cutoff(at, 0)


@pytest.mark.parametrize("bad", [[1.0, float("nan"), 0.0], [float("inf"), 1.0, 0.0], [1.0, "x", 0.0]])
def test_a_query_vector_with_anything_but_finite_numbers_is_refused(bad):
    with pytest.raises(InvalidDecision) as caught:
        similar_query(decision_type="stall_response", k=None, embedding=bad, context=None, dimension=3)
    assert caught.value.field == "embedding" and "finite" in caught.value.message


@pytest.mark.parametrize("scale", [1e-9, 1e20])
def test_a_query_vector_too_short_or_too_long_for_single_precision_is_refused(scale):
    with pytest.raises(InvalidDecision) as caught:
        similar_query(decision_type="stall_response", k=None, embedding=[scale] * 8, context=None, dimension=8)
    assert caught.value.field == "embedding"
