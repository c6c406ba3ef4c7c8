from datetime import UTC, datetime, timedelta

from services.decisions.human.rules import PlanChange, plan_in_force

T0 = datetime(2026, 9, 29, 15, 0, tzinfo=UTC)


def at(minutes: float) -> datetime:
    return T0 + timedelta(minutes=minutes)


HISTORY = [
    PlanChange("plan-a", at(0)),
    PlanChange("plan-b", at(10)),
    PlanChange(None, at(20)),
    PlanChange("plan-c", at(30)),
]


def test_an_input_binds_to_the_plan_accepted_last_before_it_was_written():
    assert plan_in_force(HISTORY, at(5)) == "plan-a"
    assert plan_in_force(HISTORY, at(10)) == "plan-b"
    assert plan_in_force(HISTORY, at(29)) is None
    assert plan_in_force(HISTORY, at(31)) == "plan-c"


def test_an_input_written_before_any_plan_has_none():
    assert plan_in_force(HISTORY, at(-1)) is None
    assert plan_in_force([], at(5)) is None


def test_changes_recorded_out_of_instant_order_are_judged_by_instant():
    # Two registrations whose transactions started in one order and
    # committed in the other.
    history = [PlanChange("plan-late", at(10)), PlanChange("plan-early", at(5))]
    assert plan_in_force(history, at(7)) == "plan-early"
    assert plan_in_force(history, at(12)) == "plan-late"


def test_on_the_same_instant_the_later_change_wins():
    history = [PlanChange("plan-a", at(5)), PlanChange("plan-b", at(5))]
    assert plan_in_force(history, at(5)) == "plan-b"
