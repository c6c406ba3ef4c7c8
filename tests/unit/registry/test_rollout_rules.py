"""Rollout rules as pure functions: steps, guard settings, the change checked by
the direct PATCH's own rules, and the state machine."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import grpc
import pytest

from services.common.errors import PermissionDenied
from services.common.grpc_server import status_of
from services.registry.rollouts.rules import (
    DEFAULT_STEPS,
    ArmEvidence,
    ChangeKind,
    GuardSettings,
    InvalidRollout,
    Judgement,
    Rollout,
    RolloutConflict,
    RolloutState,
    Verdict,
    abort,
    check_decision_type,
    check_guard_caller,
    completion_patch,
    guard_settings,
    judge,
    new_rollout,
    pause,
    plan_change,
    resume,
    rollout_steps,
)
from services.registry.rules import check_audit_entity, plan_agent_patch, plan_skill_patch
from tests.unit.registry.test_rules import CONSOLE, GATED, GATELESS, PINNED, SKILL


def refusal(call: Any, *args: Any, **kwargs: Any) -> InvalidRollout:
    with pytest.raises(InvalidRollout) as caught:
        call(*args, **kwargs)
    return caught.value


# ─── Steps and guard ───────────────────────────────────────────────────────


def test_no_steps_means_the_safe_default():
    assert rollout_steps([]) == DEFAULT_STEPS == (5, 25, 50, 100)


def test_steps_that_increase_to_100_are_kept():
    assert rollout_steps([1, 10, 100]) == (1, 10, 100)
    assert rollout_steps([100]) == (100,)


@pytest.mark.parametrize(
    ("steps", "field"),
    [
        ([5, 5, 100], "steps[1]"),
        ([50, 25, 100], "steps[1]"),
        ([0, 100], "steps[0]"),
        ([5, 101], "steps[1]"),
        ([5, 50], "steps"),
        ([5, True, 100], "steps[1]"),
        ([5.5, 100], "steps[0]"),
    ],
)
def test_steps_out_of_order_or_range_or_short_of_100_are_refused(steps, field):
    assert field in refusal(rollout_steps, steps).fields


def test_the_guard_defaults():
    assert guard_settings(None) == GuardSettings(max_drop=0.05, confidence=0.95, min_judged=50)
    assert guard_settings({}) == GuardSettings()
    assert guard_settings({"min_judged": 200.0, "confidence": 0.99}) == GuardSettings(0.05, 0.99, 200)


@pytest.mark.parametrize(
    ("guard", "field"),
    [
        ({"max_drop": 0}, "guard.max_drop"),
        ({"max_drop": 1}, "guard.max_drop"),
        ({"max_drop": "0.1"}, "guard.max_drop"),
        ({"confidence": 0.5}, "guard.confidence"),
        ({"confidence": 1.0}, "guard.confidence"),
        ({"min_judged": 0}, "guard.min_judged"),
        ({"min_judged": 2.5}, "guard.min_judged"),
        ({"min_judged": True}, "guard.min_judged"),
        ({"min_judged": 1_000_001}, "guard.min_judged"),
        ({"patience": 3}, "guard.patience"),
    ],
)
def test_guard_settings_out_of_bounds_are_refused_by_name(guard, field):
    assert field in refusal(guard_settings, guard).fields


def test_a_decision_type_has_the_decisions_shape():
    assert check_decision_type("stall_response") == "stall_response"
    for bad in ("", "Stall", "a", "x" * 65, "stall-response"):
        assert "decision_type" in refusal(check_decision_type, bad).fields


# ─── The change, through the PATCH's rules ─────────────────────────────────


def test_a_model_change_is_what_the_patch_would_write():
    planned = plan_change({"model": " claude-opus-5-5 "}, agent=GATED, skill=None, allowed_models=None)
    (patched,) = plan_agent_patch(GATED, {"model": " claude-opus-5-5 "})
    assert planned.kind is ChangeKind.MODEL
    assert planned.candidate == {"model": patched.new} == {"model": "claude-opus-5-5"}
    assert planned.baseline == {"model": None}


@pytest.mark.parametrize(
    ("agent", "change", "allowed", "field", "code"),
    [
        (GATED, {"model": "gpt-5"}, None, "change.model", "MODEL_NOT_ALLOWED"),
        (GATED, {"model": "claude-x"}, "claude-opus-*", "change.model", "MODEL_NOT_ALLOWED"),
        (CONSOLE, {"model": "claude-x"}, None, "change.model", "MODEL_NOT_SETTABLE"),
        (GATED, {"model": 7}, None, "change.model", "INVALID_FIELD"),
        (GATED, {"autonomous": True}, None, "change.confirm", "CONFIRMATION_REQUIRED"),
        (GATED, {"autonomous": True, "confirm": "exception_agent"}, None, "change.confirm", "CONFIRMATION_MISMATCH"),
        (GATELESS, {"autonomous": True, "confirm": "JARVIS"}, None, "change.autonomous", "NO_AUTONOMY_GATE"),
        (PINNED, {"model": "claude-opus-5-5"}, None, "change.model", "ROLLOUT_NO_CHANGE"),
    ],
)
def test_an_agent_change_is_refused_as_the_patch_refuses_it(agent, change, allowed, field, code):
    error = refusal(plan_change, change, agent=agent, skill=None, allowed_models=allowed)
    assert field in error.fields and error.code == code


def test_autonomy_on_needs_the_typed_confirmation_and_stores_none():
    planned = plan_change(
        {"autonomous": True, "confirm": "EXCEPTION_AGENT"}, agent=GATED, skill=None, allowed_models=None
    )
    assert planned.candidate == {"autonomous": True} and planned.baseline == {"autonomous": False}


def test_a_skill_change_keeps_the_keys_it_sets_and_their_baseline():
    planned = plan_change(
        {"skill_id": "stall_response", "thresholds": {"stallMinutes": 15}, "enabled": False},
        agent=GATED,
        skill=SKILL,
        allowed_models=None,
    )
    plan_skill_patch(SKILL, {"thresholds": {"stallMinutes": 15}, "enabled": False})
    assert planned.candidate == {"skill_id": "stall_response", "thresholds": {"stallMinutes": 15}, "enabled": False}
    assert planned.baseline == {"skill_id": "stall_response", "thresholds": {"stallMinutes": 10}, "enabled": True}


@pytest.mark.parametrize(
    ("change", "skill", "field"),
    [
        ({"skill_id": "stall_response", "thresholds": {"stallMinutes": 2}}, SKILL, "change.thresholds.stallMinutes"),
        ({"skill_id": "stall_response", "thresholds": {"nope": 2}}, SKILL, "change.thresholds.nope"),
        ({"skill_id": "stall_response", "enabled": "yes"}, SKILL, "change.enabled"),
        ({"skill_id": "stall_response", "thresholds": {"stallMinutes": 10}}, SKILL, "change.skill_id"),
        ({"skill_id": "ghost", "enabled": False}, None, "change.skill_id"),
        ({"skill_id": "stall_response", "enabled": False}, replace(SKILL, agent_id="JARVIS"), "change.skill_id"),
        ({"skill_id": "stall_response"}, SKILL, "change"),
        ({"skill_id": "stall_response", "enabled": False, "version": 1}, SKILL, "change.version"),
    ],
)
def test_a_skill_change_is_refused_by_name(change, skill, field):
    assert field in refusal(plan_change, change, agent=GATED, skill=skill, allowed_models=None).fields


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({}, "change"),
        ({"model": "claude-x", "autonomous": True}, "change.autonomous"),
        ({"temperature": 0.3}, "change"),
    ],
)
def test_one_change_of_one_known_shape(change, field):
    assert field in refusal(plan_change, change, agent=GATED, skill=None, allowed_models=None).fields


def test_a_change_must_be_an_object():
    assert "change" in refusal(plan_change, ["model"], agent=GATED, skill=None, allowed_models=None).fields


def test_completion_writes_the_patch_of_the_change():
    assert completion_patch({"model": "claude-x"}) == (ChangeKind.MODEL, {"model": "claude-x"}, None)
    assert completion_patch({"autonomous": True}) == (ChangeKind.AUTONOMY, {"autonomous": True}, None)
    assert completion_patch({"skill_id": "s", "thresholds": {"a": 1}}) == (
        ChangeKind.SKILL,
        {"thresholds": {"a": 1}},
        "s",
    )


# ─── The state machine ─────────────────────────────────────────────────────


def started(steps: tuple[int, ...] = DEFAULT_STEPS) -> Rollout:
    planned = plan_change({"model": "claude-x"}, agent=GATED, skill=None, allowed_models=None)
    return new_rollout(
        rollout_id="r-1",
        agent_id=GATED.id,
        decision_type="stall_response",
        planned=planned,
        steps=steps,
        guard=GuardSettings(),
    ).rollout


EVIDENCE = ArmEvidence(judged=60, successes=45, failures=15, unknown=2, pending=9, mean=0.74, low=0.62, high=0.84)


def verdict(rollout: Rollout, kind: Verdict, *, step: int | None = None, p_harm: float = 0.1) -> Judgement:
    return Judgement(
        verdict=kind,
        step=rollout.step if step is None else step,
        control=EVIDENCE,
        candidate=EVIDENCE,
        p_harm=p_harm,
        reason=f"{kind.value} because",
    )


def test_a_new_rollout_runs_at_its_first_step_and_audits_what_it_started_with():
    moved = new_rollout(
        rollout_id="r-1",
        agent_id=GATED.id,
        decision_type="stall_response",
        planned=plan_change({"model": "claude-x"}, agent=GATED, skill=None, allowed_models=None),
        steps=(10, 100),
        guard=GuardSettings(),
    )
    assert (moved.rollout.state, moved.rollout.step, moved.rollout.percent) == (RolloutState.RUNNING, 0, 10)
    assert moved.event == "started"
    (created,) = moved.audit
    assert created.field == "created" and created.new["change"] == {"model": "claude-x"}
    assert created.new["baseline"] == {"model": None} and created.new["steps"] == [10, 100]


def test_pause_keeps_the_share_and_resume_runs_it_again():
    rollout = started()
    paused = pause(rollout, "holiday freeze")
    assert paused.rollout.state is RolloutState.PAUSED and paused.rollout.percent == 5
    assert [(c.field, c.old, c.new) for c in paused.audit] == [
        ("state", "running", "paused"),
        ("reason", None, "holiday freeze"),
    ]
    resumed = resume(paused.rollout)
    assert resumed.rollout.state is RolloutState.RUNNING and resumed.event == "resumed"


@pytest.mark.parametrize("action", [pause, resume])
def test_pause_and_resume_only_from_their_state(action):
    rollout = started() if action is resume else replace(started(), state=RolloutState.PAUSED)
    with pytest.raises(RolloutConflict) as caught:
        action(rollout)
    assert status_of(caught.value) is grpc.StatusCode.FAILED_PRECONDITION


def test_abort_sets_the_share_to_zero_from_running_or_paused_and_never_again():
    for state in (RolloutState.RUNNING, RolloutState.PAUSED):
        aborted = abort(replace(started(), state=state), "wrong model")
        assert aborted.rollout.state is RolloutState.ABORTED and aborted.rollout.percent == 0
        assert ("percent", 5, 0) in [(c.field, c.old, c.new) for c in aborted.audit]
    for state in (RolloutState.ABORTED, RolloutState.HALTED, RolloutState.COMPLETED):
        with pytest.raises(RolloutConflict):
            abort(replace(started(), state=state))


def test_advance_moves_one_step_and_stores_the_evidence():
    moved = judge(started(), verdict(started(), Verdict.ADVANCE))
    assert (moved.rollout.step, moved.rollout.percent) == (1, 25)
    assert moved.rollout.control == EVIDENCE and moved.rollout.p_harm == 0.1
    assert moved.event == "advanced" and moved.rollout.reason == "advance because"
    assert {c.field for c in moved.audit} == {"percent", "step", "reason"}


def test_a_verdict_on_a_step_the_rollout_left_is_a_conflict():
    rollout = replace(started(), step=1, percent=25)
    with pytest.raises(RolloutConflict) as caught:
        judge(rollout, verdict(rollout, Verdict.ADVANCE, step=0))
    assert caught.value.code == "ROLLOUT_MOVED"


def test_halt_sets_the_share_to_zero_at_once_even_when_paused():
    for state in (RolloutState.RUNNING, RolloutState.PAUSED):
        rollout = replace(started(), state=state, step=2, percent=50)
        halted = judge(rollout, verdict(rollout, Verdict.HALT, p_harm=0.97))
        assert halted.rollout.state is RolloutState.HALTED and halted.rollout.percent == 0
        assert halted.rollout.reason == "halt because" and halted.rollout.p_harm == 0.97


def test_the_guard_never_advances_or_completes_a_paused_rollout():
    paused = replace(started(), state=RolloutState.PAUSED)
    with pytest.raises(RolloutConflict):
        judge(paused, verdict(paused, Verdict.ADVANCE))
    last = replace(paused, step=3, percent=100)
    with pytest.raises(RolloutConflict):
        judge(last, verdict(last, Verdict.COMPLETE))


def test_complete_only_from_the_last_step_and_advance_never_past_it():
    rollout = started()
    with pytest.raises(RolloutConflict):
        judge(rollout, verdict(rollout, Verdict.COMPLETE))
    last = replace(rollout, step=3, percent=100)
    with pytest.raises(RolloutConflict):
        judge(last, verdict(last, Verdict.ADVANCE))
    completed = judge(last, verdict(last, Verdict.COMPLETE))
    assert completed.rollout.state is RolloutState.COMPLETED and completed.rollout.percent == 100
    assert ("state", "running", "completed") in [(c.field, c.old, c.new) for c in completed.audit]


def test_a_single_step_rollout_completes_at_once():
    rollout = started(steps=(100,))
    assert judge(rollout, verdict(rollout, Verdict.COMPLETE)).rollout.state is RolloutState.COMPLETED


def test_no_verdict_moves_a_finished_rollout():
    for state in (RolloutState.HALTED, RolloutState.ABORTED, RolloutState.COMPLETED):
        rollout = replace(started(), state=state)
        for kind in Verdict:
            with pytest.raises(RolloutConflict):
                judge(rollout, verdict(rollout, kind))


def test_an_observation_leaves_a_history_point_only_when_the_evidence_changed():
    rollout = started()
    first = judge(rollout, verdict(rollout, Verdict.OBSERVE))
    assert first.event == "observed" and first.audit == () and first.rollout.step == 0
    again = judge(first.rollout, verdict(first.rollout, Verdict.OBSERVE))
    assert again.event is None and again.rollout == first.rollout


def test_an_observation_rewrites_the_reason_beside_the_arms_but_never_audits():
    rollout = replace(started(), reason="advanced: the candidate is not worse")
    first = judge(rollout, verdict(rollout, Verdict.OBSERVE))
    assert first.rollout.reason == "observe because" and first.audit == ()
    # The same arms read again with another reason (the wait moved on): a new
    # reason is a new reading, still no audit row and no move.
    reread = judge(first.rollout, replace(verdict(first.rollout, Verdict.OBSERVE), reason="waiting for more"))
    assert reread.event == "observed" and reread.audit == ()
    assert (reread.rollout.reason, reread.rollout.step, reread.rollout.percent) == ("waiting for more", 0, 5)
    blank = judge(reread.rollout, replace(verdict(reread.rollout, Verdict.OBSERVE), reason=""))
    assert blank.event is None and blank.rollout.reason == "waiting for more"


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"p_harm": 1.5}, "p_harm"),
        ({"p_harm": float("nan")}, "p_harm"),
        ({"control": replace(EVIDENCE, judged=-1)}, "control.judged"),
        ({"candidate": replace(EVIDENCE, mean=2)}, "candidate.mean"),
        ({"candidate": replace(EVIDENCE, successes=float("inf"))}, "candidate.successes"),
    ],
)
def test_malformed_evidence_is_refused_by_name(change, field):
    rollout = started()
    assert field in refusal(judge, rollout, replace(verdict(rollout, Verdict.OBSERVE), **change)).fields


def test_only_the_platform_gives_verdicts():
    check_guard_caller(person=False, engine=None)
    for person, engine in ((True, None), (False, "dispatch"), (True, "dispatch")):
        with pytest.raises(PermissionDenied) as caught:
            check_guard_caller(person=person, engine=engine)
        assert caught.value.code == "GUARD_VERDICTS_ONLY"


def test_the_audit_listing_filters_on_rollouts():
    check_audit_entity("rollout")
