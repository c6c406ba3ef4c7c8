from datetime import UTC, datetime, timedelta

import pytest

from services.outcomes.rules.judging import (
    MIN_DECISION_AGE,
    SWEEP_BATCH,
    BookingFacts,
    Outcome,
    RuleBook,
    Timing,
    judge,
    registered_types,
    rule,
)

DECIDED = datetime(2024, 5, 1, 10, 0, tzinfo=UTC)
WINDOW = timedelta(hours=48)
SLA = DECIDED + timedelta(hours=6)
SECOND = timedelta(seconds=1)


def at(offset: timedelta) -> datetime:
    return DECIDED + offset


def test_constants_carry_the_specified_numbers():
    assert timedelta(minutes=30) == MIN_DECISION_AGE
    assert SWEEP_BATCH == 500


def test_outcome_vocabulary_is_the_stored_strings():
    assert [outcome.value for outcome in Outcome] == ["success", "failure", "unknown"]
    assert Outcome.SUCCESS == "success"


def test_each_rule_module_registers_its_type():
    assert registered_types() == frozenset({"stall_response", "assignment_failure"})


STALL_CASES = [
    # (case, facts, age of the decision, expected)
    (
        "too young even if delivered",
        BookingFacts(delivered_at=at(timedelta(minutes=10))),
        MIN_DECISION_AGE - SECOND,
        None,
    ),
    (
        "judged at exactly the minimum age",
        BookingFacts(delivered_at=at(timedelta(minutes=10))),
        MIN_DECISION_AGE,
        Outcome.SUCCESS,
    ),
    ("cancelled", BookingFacts(cancelled=True), timedelta(hours=1), Outcome.FAILURE),
    (
        "cancelled beats an on-time delivery",
        BookingFacts(cancelled=True, delivered_at=at(timedelta(hours=1)), sla_due_at=SLA),
        timedelta(hours=2),
        Outcome.FAILURE,
    ),
    ("delivered on time", BookingFacts(delivered_at=SLA - SECOND, sla_due_at=SLA), timedelta(hours=7), Outcome.SUCCESS),
    (
        "delivered exactly at the SLA",
        BookingFacts(delivered_at=SLA, sla_due_at=SLA),
        timedelta(hours=7),
        Outcome.SUCCESS,
    ),
    (
        "delivered one second late",
        BookingFacts(delivered_at=SLA + SECOND, sla_due_at=SLA),
        timedelta(hours=7),
        Outcome.FAILURE,
    ),
    (
        "delivered with no SLA known",
        BookingFacts(delivered_at=at(timedelta(hours=30))),
        timedelta(hours=31),
        Outcome.SUCCESS,
    ),
    (
        "not cancelled, not delivered, window open",
        BookingFacts(cancelled=False, status="in_transit"),
        WINDOW - SECOND,
        None,
    ),
    ("not delivered at exactly the window", BookingFacts(cancelled=False), WINDOW, Outcome.FAILURE),
    ("not delivered long after the window", BookingFacts(), WINDOW * 3, Outcome.FAILURE),
    (
        "late delivery judged before the window closes",
        BookingFacts(delivered_at=SLA + timedelta(hours=1), sla_due_at=SLA),
        timedelta(hours=8),
        Outcome.FAILURE,
    ),
]


@pytest.mark.parametrize(
    ("facts", "age", "expected"),
    [case[1:] for case in STALL_CASES],
    ids=[case[0] for case in STALL_CASES],
)
def test_stall_response(facts, age, expected):
    verdict = judge("stall_response", facts, decided_at=DECIDED, now=at(age), window=WINDOW)
    assert verdict == expected


ASSIGNMENT_CASES = [
    ("too young even if assigned", BookingFacts(assigned_at=at(timedelta(minutes=5))), MIN_DECISION_AGE - SECOND, None),
    (
        "assigned after the decision, at exactly the minimum age",
        BookingFacts(assigned_at=at(SECOND)),
        MIN_DECISION_AGE,
        Outcome.SUCCESS,
    ),
    (
        "assigned after the decision",
        BookingFacts(assigned_at=at(timedelta(hours=3)), status="assigned"),
        timedelta(hours=4),
        Outcome.SUCCESS,
    ),
    (
        "assigned at the very instant of the decision, window open",
        BookingFacts(assigned_at=DECIDED),
        timedelta(hours=4),
        None,
    ),
    (
        "assigned at the very instant of the decision, window closed",
        BookingFacts(assigned_at=DECIDED),
        WINDOW,
        Outcome.FAILURE,
    ),
    (
        "assigned before the decision, window open",
        BookingFacts(assigned_at=at(-timedelta(hours=1))),
        timedelta(hours=4),
        None,
    ),
    (
        "assigned before the decision, window closed",
        BookingFacts(assigned_at=at(-timedelta(hours=1))),
        WINDOW + timedelta(hours=1),
        Outcome.FAILURE,
    ),
    (
        "cancelled beats a later assignment",
        BookingFacts(cancelled=True, assigned_at=at(timedelta(hours=1))),
        timedelta(hours=2),
        Outcome.FAILURE,
    ),
    ("never assigned, window open", BookingFacts(), WINDOW - SECOND, None),
    ("never assigned, window closed", BookingFacts(), WINDOW, Outcome.FAILURE),
]


@pytest.mark.parametrize(
    ("facts", "age", "expected"),
    [case[1:] for case in ASSIGNMENT_CASES],
    ids=[case[0] for case in ASSIGNMENT_CASES],
)
def test_assignment_failure(facts, age, expected):
    verdict = judge("assignment_failure", facts, decided_at=DECIDED, now=at(age), window=WINDOW)
    assert verdict == expected


@pytest.mark.parametrize(
    ("age", "expected"),
    [
        (MIN_DECISION_AGE - SECOND, None),
        (MIN_DECISION_AGE, None),
        (WINDOW - SECOND, None),
        (WINDOW, Outcome.UNKNOWN),
        (WINDOW * 10, Outcome.UNKNOWN),
    ],
)
def test_a_type_without_a_rule_is_only_ever_unknown(age, expected):
    # Facts that would read as a clear success for a stall are still no
    # evidence for a type nobody defined.
    facts = BookingFacts(delivered_at=at(timedelta(minutes=40)), sla_due_at=SLA, assigned_at=at(SECOND))
    verdict = judge("reroute_suggestion", facts, decided_at=DECIDED, now=at(age), window=WINDOW)
    assert verdict == expected


def test_the_window_is_the_callers():
    facts = BookingFacts()
    short = timedelta(hours=2)
    assert judge("stall_response", facts, decided_at=DECIDED, now=at(short), window=short) == Outcome.FAILURE
    assert judge("stall_response", facts, decided_at=DECIDED, now=at(short), window=WINDOW) is None


def test_a_new_type_needs_only_its_rule():
    book = RuleBook()
    seen: list[Timing] = []

    @book.register("eta_promise")
    def judge_eta_promise(facts: BookingFacts, timing: Timing) -> Outcome | None:
        seen.append(timing)
        return Outcome.SUCCESS if facts.status == "on_time" else None

    facts = BookingFacts(status="on_time")
    assert book.decision_types == frozenset({"eta_promise"})
    verdict = book.judge("eta_promise", facts, decided_at=DECIDED, now=at(timedelta(hours=1)), window=WINDOW)
    assert verdict == Outcome.SUCCESS
    assert seen == [Timing(decided_at=DECIDED, now=at(timedelta(hours=1)), window=WINDOW)]


def test_a_rule_is_not_consulted_before_the_minimum_age():
    book = RuleBook()
    calls = []

    @book.register("eta_promise")
    def judge_eta_promise(facts: BookingFacts, timing: Timing) -> Outcome | None:
        calls.append(facts)
        return Outcome.SUCCESS

    verdict = book.judge(
        "eta_promise", BookingFacts(), decided_at=DECIDED, now=at(timedelta(minutes=29)), window=WINDOW
    )
    assert verdict is None
    assert calls == []


def test_a_type_cannot_have_two_rules():
    with pytest.raises(ValueError, match="stall_response"):
        rule("stall_response")(lambda facts, timing: Outcome.SUCCESS)
    assert registered_types() == frozenset({"stall_response", "assignment_failure"})


@pytest.mark.parametrize("name", ["", " stall", "stall "])
def test_a_type_name_must_be_trimmed_and_non_blank(name):
    with pytest.raises(ValueError, match="non-blank, trimmed"):
        RuleBook().register(name)


def test_timing_reports_age_and_window():
    timing = Timing(decided_at=DECIDED, now=at(WINDOW), window=WINDOW)
    assert timing.age == WINDOW
    assert timing.window_closed
    assert not Timing(decided_at=DECIDED, now=at(WINDOW - SECOND), window=WINDOW).window_closed


@pytest.mark.parametrize("window", [timedelta(0), -timedelta(hours=1)])
def test_a_non_positive_window_is_refused(window):
    with pytest.raises(ValueError, match="window"):
        judge("stall_response", BookingFacts(), decided_at=DECIDED, now=at(WINDOW), window=window)


def test_naive_instants_are_refused():
    naive = datetime(2024, 5, 3, 10, 0)
    with pytest.raises(ValueError, match="now"):
        judge("stall_response", BookingFacts(), decided_at=DECIDED, now=naive, window=WINDOW)
    with pytest.raises(ValueError, match="decided_at"):
        judge("stall_response", BookingFacts(), decided_at=naive, now=at(WINDOW), window=WINDOW)


@pytest.mark.parametrize("field", ["assigned_at", "delivered_at", "sla_due_at"])
def test_booking_facts_refuse_naive_timestamps(field):
    with pytest.raises(ValueError, match=field):
        BookingFacts(**{field: datetime(2024, 5, 1, 12, 0)})


def test_booking_facts_are_frozen():
    facts = BookingFacts(status="assigned")
    with pytest.raises(AttributeError):
        facts.status = "cancelled"
