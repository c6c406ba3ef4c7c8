"""Judging rules: who may give a verdict, and who may change one."""

from __future__ import annotations

import uuid
from contextlib import nullcontext

import pytest

from services.common.errors import Conflict, NotFound, PermissionDenied
from services.decisions.rules import (
    JudgedBy,
    Judgement,
    Outcome,
    check_judge,
    decision_not_found,
    rejudges,
    sweep_judge,
    verdict_judge,
)

DECISION = uuid.UUID("7f0c3f4e-8a7c-4b8e-9d7a-1c2b3a4d5e6f")


def verdict(outcome: Outcome, judged_by: str, reason: str | None = None, *, writer: bool = False) -> Judgement:
    return Judgement(decision_id=DECISION, outcome=outcome, judged_by=judged_by, reason=reason, writer=writer)


@pytest.mark.parametrize(
    ("judged_by", "writer", "refused"),
    [
        (JudgedBy.API, False, False),
        (JudgedBy.SWEEPER, False, False),
        (JudgedBy.HUMAN, True, False),
        (JudgedBy.HUMAN, False, True),
    ],
)
def test_only_a_writer_gives_a_human_verdict(judged_by: JudgedBy, writer: bool, refused: bool) -> None:
    expected = pytest.raises(PermissionDenied, match="role-1 person") if refused else nullcontext()
    with expected:
        check_judge(verdict(Outcome.SUCCESS, judged_by, writer=writer))


@pytest.mark.parametrize("judged_by", list(JudgedBy))
def test_anyone_judges_a_pending_decision(judged_by: JudgedBy) -> None:
    assert rejudges(verdict(Outcome.FAILURE, judged_by), outcome=None, reason=None, judged_by=None) is True


@pytest.mark.parametrize("judged_by", list(JudgedBy))
def test_the_same_verdict_again_is_a_retry_not_a_change(judged_by: JudgedBy) -> None:
    again = verdict(Outcome.SUCCESS, judged_by, "delivered")
    assert rejudges(again, outcome="success", reason="delivered", judged_by="sweeper") is False


@pytest.mark.parametrize("judged_by", [JudgedBy.API, JudgedBy.SWEEPER])
def test_a_machine_may_not_change_a_verdict(judged_by: JudgedBy) -> None:
    with pytest.raises(Conflict) as caught:
        rejudges(verdict(Outcome.FAILURE, judged_by), outcome="success", reason=None, judged_by="sweeper")
    assert caught.value.code == "ALREADY_JUDGED"
    assert caught.value.details == {"id": str(DECISION), "outcome": "success", "judged_by": "sweeper"}


def test_a_machine_may_not_change_even_the_reason_alone() -> None:
    with pytest.raises(Conflict):
        rejudges(verdict(Outcome.SUCCESS, JudgedBy.API, "late"), outcome="success", reason=None, judged_by="api")


@pytest.mark.parametrize("current", ["success", "failure", "unknown"])
def test_a_person_may_change_any_verdict(current: str) -> None:
    change = verdict(Outcome.FAILURE, JudgedBy.HUMAN, "customer complained", writer=True)
    assert rejudges(change, outcome=current, reason=None, judged_by="sweeper") is True


def test_a_missing_decision_is_named_by_its_id() -> None:
    error = decision_not_found(DECISION)
    assert isinstance(error, NotFound)
    assert (error.code, error.details) == ("DECISION_NOT_FOUND", {"id": str(DECISION)})
    assert error.message == f"decision {DECISION} does not exist"


# ─── Who judges: the verified caller ───────────────────────────────────────


@pytest.mark.parametrize(
    ("person", "engine", "judge"),
    [(True, None, "human"), (False, "dispatch", "engine:dispatch"), (False, "default", "engine:default")],
)
def test_a_single_verdict_is_signed_by_its_caller(person: bool, engine: str | None, judge: str) -> None:
    assert verdict_judge(person=person, engine=engine) == judge


def test_a_single_verdict_from_nobody_in_particular_names_no_judge_and_is_refused() -> None:
    with pytest.raises(PermissionDenied) as refused:
        verdict_judge(person=False, engine=None)
    assert refused.value.code == "JUDGE_UNKNOWN"


def test_batch_verdicts_are_the_sweepers_alone() -> None:
    assert sweep_judge(person=False, engine=None) is JudgedBy.SWEEPER
    for person, engine in ((True, None), (False, "dispatch")):
        with pytest.raises(PermissionDenied) as refused:
            sweep_judge(person=person, engine=engine)
        assert refused.value.code == "SWEEP_VERDICTS_ONLY"


def test_an_engine_may_not_change_a_verdict_and_a_person_may_change_an_engines() -> None:
    with pytest.raises(Conflict):
        rejudges(verdict(Outcome.FAILURE, "engine:dispatch"), outcome="success", reason=None, judged_by="sweeper")
    change = verdict(Outcome.SUCCESS, JudgedBy.HUMAN, "checked with the customer", writer=True)
    assert rejudges(change, outcome="failure", reason=None, judged_by="engine:dispatch") is True
