from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest

from services.common.errors import InvalidArgument
from services.outcomes.rules.judging import SWEEP_BATCH, Outcome
from services.outcomes.rules.sweep import (
    MAX_BATCH,
    FactValues,
    PendingDecision,
    SweepReport,
    Verdict,
    batch_size,
    judge_batch,
)

NOW = datetime(2024, 5, 3, 12, 0, tzinfo=UTC)
WINDOW = timedelta(hours=48)


def pending(n: int, decision_type: str, age: timedelta) -> PendingDecision:
    return PendingDecision(
        id=f"d{n}", decision_type=decision_type, subject_id=f"s{n}", decided_at=NOW - age, model="m1"
    )


def facts(n: int, **values) -> FactValues:
    fields = {"status": None, "assigned_at": None, "delivered_at": None, "sla_due_at": None, "cancelled": None}
    fields.update(values)
    return FactValues(subject_id=f"s{n}", **fields)


def test_only_judgeable_decisions_get_a_verdict_with_the_rules_outcome():
    decisions = [
        pending(1, "stall_response", timedelta(hours=3)),
        pending(2, "stall_response", timedelta(hours=3)),
        pending(3, "assignment_failure", timedelta(hours=49)),
        pending(4, "novel", timedelta(hours=3)),
        pending(5, "novel", timedelta(hours=49)),
        pending(6, "stall_response", timedelta(minutes=10)),
    ]
    known = {
        "s1": facts(1, delivered_at=NOW - timedelta(hours=1), sla_due_at=NOW),
        "s4": facts(4, cancelled=True),
        "s6": facts(6, delivered_at=NOW - timedelta(minutes=5)),
    }
    verdicts = judge_batch(decisions, known, now=NOW, window=WINDOW)
    assert [(v.decision_id, v.outcome) for v in verdicts] == [
        ("d1", Outcome.SUCCESS),
        # No facts about s3 and the window closed: never assigned.
        ("d3", Outcome.FAILURE),
        ("d5", Outcome.UNKNOWN),
    ]


def test_a_verdict_names_the_facts_it_was_drawn_from():
    decisions = [
        pending(1, "stall_response", timedelta(hours=3)),
        pending(2, "assignment_failure", timedelta(hours=50)),
    ]
    known = {"s1": facts(1, cancelled=True, status="cancelled")}
    first, second = judge_batch(decisions, known, now=NOW, window=WINDOW)
    assert first.reason == "failure by the sweeper's rule from cancelled, status"
    assert second.reason == "failure by the sweeper's rule from no facts"


def test_an_unknown_type_is_never_success_or_failure_whatever_the_facts():
    rich = facts(
        1,
        delivered_at=NOW - timedelta(days=3),
        sla_due_at=NOW,
        assigned_at=NOW - timedelta(days=3),
        cancelled=True,
        status="delivered",
    )
    outcomes = {
        v.outcome
        for age in (timedelta(hours=1), timedelta(hours=47), timedelta(hours=48), timedelta(days=30))
        for v in judge_batch([pending(1, "reroute_advice", age)], {"s1": rich}, now=NOW, window=WINDOW)
    }
    assert outcomes == {Outcome.UNKNOWN}


@pytest.mark.parametrize(("requested", "expected"), [(0, SWEEP_BATCH), (1, 1), (MAX_BATCH, MAX_BATCH)])
def test_batch_size_defaults_to_the_seeds_500(requested, expected):
    assert batch_size(requested) == expected


@pytest.mark.parametrize("requested", [-1, MAX_BATCH + 1])
def test_a_batch_size_out_of_range_is_refused_by_name(requested):
    with pytest.raises(InvalidArgument) as caught:
        batch_size(requested)
    assert list(caught.value.fields) == ["batch_size"]


def test_a_report_always_lists_every_outcome():
    report = SweepReport(judged=2, scanned=5, by_outcome=Counter([Outcome.FAILURE, Outcome.FAILURE]))
    assert report.as_counts() == {"success": 0, "failure": 2, "unknown": 0}
    assert Verdict("d1", Outcome.SUCCESS, "r") == Verdict("d1", Outcome.SUCCESS, "r")
