import asyncio
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from services.decisions.human.rules import (
    Classification,
    HumanDecision,
    HumanDecisionKind,
    HumanInput,
    HumanInputSource,
    ImportPlan,
    InvalidHumanInput,
    SourceCursor,
    Subject,
    classify,
    human_decision,
    next_cursor,
    plan_import,
    source_matches,
)

OPS = "gitea:git.example.in/ops"
BILLING = "gitea:git.example.in/billing"
PLAN = "plan-7f3a"
WRITTEN = datetime(2026, 9, 29, 15, 27, tzinfo=UTC)
OBSERVED = datetime(2026, 9, 29, 15, 30, tzinfo=UTC)

INSTRUCTION = Classification(HumanDecisionKind.OPERATOR_INSTRUCTION)


def utterance(external_id, body="hold the parcel at the hub", *, provider=OPS, minutes=0, subject_id="booking-4411"):
    return HumanInput(
        provider=provider,
        external_id=external_id,
        subject_id=subject_id,
        author="priya",
        written_at=WRITTEN + timedelta(minutes=minutes),
        body=body,
    )


@pytest.mark.parametrize(
    ("body", "step"),
    [
        ("outrider verify step-2", "step-2"),
        ("Outrider Verify step-2", "step-2"),
        ("OUTRIDER VERIFY Step-2", "Step-2"),
        ("  outrider verify   step-2  ", "step-2"),
        ("outrider verify step-2\r\nchecked the rider's route myself", "step-2"),
        ("outrider verify 3: handover at the hub", "3: handover at the hub"),
    ],
)
def test_verify_first_line_approves_that_step_of_the_current_plan(body, step):
    assert classify(body, PLAN) == Classification(HumanDecisionKind.PLAN_STEP_APPROVAL, step=step, plan_ref=PLAN)


@pytest.mark.parametrize(
    "body",
    [
        "looks good",
        "LGTM, go ahead",
        "verify step-2",
        "please outrider verify step-2",
        "outrider verify",
        "outrider verify   ",
        "outrider verify\nstep-2",
        "outriderverify step-2",
        "\noutrider verify step-2",
        "thanks\noutrider verify step-2",
        "",
    ],
)
def test_anything_but_the_keyed_form_is_an_operator_instruction(body):
    assert classify(body, PLAN) == INSTRUCTION


@pytest.mark.parametrize("plan_ref", [None, ""])
def test_verify_without_an_accepted_plan_is_an_operator_instruction(plan_ref):
    assert classify("outrider verify step-2", plan_ref) == INSTRUCTION


def test_approval_binds_to_the_plan_given_not_one_named_in_the_comment():
    classification = classify("outrider verify step-2 of plan-old", PLAN)

    assert classification.plan_ref == PLAN
    assert classification.step == "step-2 of plan-old"


def test_human_decision_keeps_the_body_verbatim():
    body = "  Looks good — but call the customer first.\n\nAlso: no cash.  "

    decision = human_decision(utterance("c-1", body), plan_ref=PLAN, observed_at=OBSERVED)

    assert decision == HumanDecision(
        subject_id="booking-4411",
        kind=HumanDecisionKind.OPERATOR_INSTRUCTION,
        body=body,
        author="priya",
        provider=OPS,
        external_id="c-1",
        written_at=WRITTEN,
        observed_at=OBSERVED,
        plan_ref=None,
        step=None,
    )


def test_human_decision_for_an_approval_carries_plan_and_step():
    approval = utterance("c-2", "outrider verify step-2\nall clear")

    decision = human_decision(approval, plan_ref=PLAN, observed_at=OBSERVED)

    assert (decision.kind, decision.plan_ref, decision.step) == (HumanDecisionKind.PLAN_STEP_APPROVAL, PLAN, "step-2")
    assert decision.body == "outrider verify step-2\nall clear"


def test_human_decision_prefers_when_the_source_first_observed_the_input():
    earlier = OBSERVED - timedelta(minutes=2)
    seen = replace(utterance("c-3"), observed_at=earlier)

    assert human_decision(seen, plan_ref=None, observed_at=OBSERVED).observed_at == earlier


def test_plan_import_records_new_inputs_in_written_order():
    inputs = [utterance("c-9", minutes=0), utterance("c-2", minutes=1), utterance("c-5", minutes=2)]

    plan = plan_import(inputs, known_external_ids=set())

    assert plan == ImportPlan(to_record=tuple(inputs), skipped_empty=(), duplicates=())


def test_plan_import_keeps_source_order_even_when_clocks_disagree():
    inputs = [utterance("c-1", minutes=5), utterance("c-2", minutes=1)]

    assert plan_import(inputs, known_external_ids=()).to_record == tuple(inputs)


@pytest.mark.parametrize("body", ["", "   ", "\n\t\n"])
def test_plan_import_skips_empty_bodies(body):
    empty = utterance("c-2", body)
    inputs = [utterance("c-1"), empty, utterance("c-3")]

    plan = plan_import(inputs, known_external_ids=set())

    assert plan.skipped_empty == (empty,)
    assert [i.external_id for i in plan.to_record] == ["c-1", "c-3"]


def test_plan_import_drops_known_ids():
    inputs = [utterance("c-1"), utterance("c-2"), utterance("c-3")]

    plan = plan_import(inputs, known_external_ids={"c-2", "c-0"})

    assert [i.external_id for i in plan.to_record] == ["c-1", "c-3"]
    assert [i.external_id for i in plan.duplicates] == ["c-2"]


def test_plan_import_drops_a_repeat_within_the_same_range():
    first, again = utterance("c-1", "call me"), utterance("c-1", "call me", minutes=1)

    plan = plan_import([first, again], known_external_ids=set())

    assert plan.to_record == (first,)
    assert plan.duplicates == (again,)


@pytest.mark.parametrize("external_id", ["", "  "])
def test_plan_import_refuses_an_input_without_external_id(external_id):
    inputs = [utterance("c-1"), utterance(external_id, minutes=3)]

    with pytest.raises(InvalidHumanInput) as caught:
        plan_import(inputs, known_external_ids=set())

    assert isinstance(caught.value, ValueError)
    assert caught.value.field == "external_id"
    assert "input 1" in caught.value.message
    assert "priya" in caught.value.message
    assert "2026-09-29T15:30:00+00:00" in caught.value.message


def test_plan_import_refuses_before_recording_anything_even_if_the_body_is_empty():
    with pytest.raises(InvalidHumanInput):
        plan_import([utterance("", body="")], known_external_ids=set())


def test_plan_import_accepts_a_generator():
    plan = plan_import((utterance(f"c-{n}") for n in range(3)), known_external_ids=set())

    assert len(plan.to_record) == 3


def test_source_matches_only_the_source_the_subject_came_from():
    assert source_matches(OPS, [BILLING, OPS]) == OPS
    assert source_matches(BILLING, [BILLING, OPS]) == BILLING


@pytest.mark.parametrize(
    ("subject_source", "configured"),
    [
        (None, [OPS]),
        ("", [OPS, ""]),
        (OPS, []),
        (OPS, [BILLING]),
        (OPS, ["gitea:git.example.in/ops-archive", "gitea", "gitea:git.example.in"]),
        (OPS, ["GITEA:git.example.in/ops"]),
    ],
)
def test_source_matches_nothing_when_no_configured_source_is_the_subjects(subject_source, configured):
    assert source_matches(subject_source, configured) is None


def test_a_second_source_with_the_same_external_ids_never_reaches_another_subjects_inputs():
    # Both projects number their comments from 1, so "c-1" exists in each.
    subjects = {
        "booking-4411": Subject(id="booking-4411", source=OPS, plan_ref=PLAN),
        "proposal-88": Subject(id="proposal-88", source=BILLING),
    }
    per_source = {
        OPS: [utterance("c-1", "outrider verify step-2", subject_id="booking-4411")],
        BILLING: [utterance("c-1", "refund the customer", provider=BILLING, subject_id="proposal-88")],
    }

    imported = {}
    for subject in subjects.values():
        source = source_matches(subject.source, per_source)
        imported[subject.id] = [
            human_decision(i, plan_ref=subject.plan_ref, observed_at=OBSERVED)
            for i in plan_import(per_source[source], known_external_ids=set()).to_record
        ]

    assert [(d.provider, d.body) for d in imported["booking-4411"]] == [(OPS, "outrider verify step-2")]
    assert [(d.provider, d.body) for d in imported["proposal-88"]] == [(BILLING, "refund the customer")]
    assert imported["booking-4411"][0].kind is HumanDecisionKind.PLAN_STEP_APPROVAL
    assert imported["proposal-88"][0].kind is HumanDecisionKind.OPERATOR_INSTRUCTION


def test_next_cursor_moves_only_when_the_position_moved():
    current = SourceCursor(subject_id="booking-4411", source=OPS, position="c-3")

    assert next_cursor(current, replace(current, position="c-7")) == replace(current, position="c-7")
    assert next_cursor(current, replace(current, position="c-3")) is None
    assert next_cursor(current, replace(current, position="")) is None


def test_next_cursor_stays_bound_to_the_subject_and_source_being_reconciled():
    current = SourceCursor(subject_id="booking-4411", source=OPS)
    confused = SourceCursor(subject_id="proposal-88", source=BILLING, position="c-9")

    assert next_cursor(current, confused) == SourceCursor(subject_id="booking-4411", source=OPS, position="c-9")


class ThreadSource:
    """A source over an in-memory thread whose position is the count read."""

    def __init__(self, thread: Sequence[HumanInput]) -> None:
        self.thread = list(thread)

    async def fetch_after(self, subject: Subject, cursor: SourceCursor) -> tuple[Sequence[HumanInput], SourceCursor]:
        start = int(cursor.position or 0)
        return self.thread[start:], replace(cursor, position=str(len(self.thread)))


def test_a_range_fetched_twice_after_a_lost_cursor_records_nothing_twice():
    source: HumanInputSource = ThreadSource(
        [utterance("c-1", "hold it"), utterance("c-2", " "), utterance("c-3", "outrider verify step-1")]
    )
    subject = Subject(id="booking-4411", source=OPS, plan_ref=PLAN)
    stored_cursor = SourceCursor(subject_id=subject.id, source=OPS)
    recorded: list[HumanDecision] = []

    def reconcile(*, keep_cursor: bool) -> None:
        nonlocal stored_cursor
        inputs, returned = asyncio.run(source.fetch_after(subject, stored_cursor))
        plan = plan_import(inputs, known_external_ids={d.external_id for d in recorded})
        recorded.extend(human_decision(i, plan_ref=subject.plan_ref, observed_at=OBSERVED) for i in plan.to_record)
        moved = next_cursor(stored_cursor, returned)
        if keep_cursor and moved is not None:
            stored_cursor = moved

    reconcile(keep_cursor=False)
    reconcile(keep_cursor=True)
    reconcile(keep_cursor=True)

    assert [(d.external_id, d.kind) for d in recorded] == [
        ("c-1", HumanDecisionKind.OPERATOR_INSTRUCTION),
        ("c-3", HumanDecisionKind.PLAN_STEP_APPROVAL),
    ]
    assert stored_cursor.position == "3"
