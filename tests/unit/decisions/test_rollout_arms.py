"""A decision's rollout arm and the counts per arm, as pure rules."""

from __future__ import annotations

import uuid
from dataclasses import replace

import pytest

from services.decisions.rules import (
    Arm,
    ArmCount,
    InvalidDecision,
    RolloutTag,
    arm_counts,
    checked_rollout,
    counted_rollouts,
    decision_to_record,
)
from tests.unit.decisions.test_record_rules import DRAFT, NOW

ROLLOUT = uuid.UUID("6f1c8e0a-3b7d-4c2e-9a51-0d4b2f7e8c13")
OTHER = uuid.UUID("0b7ec0de-0000-4000-8000-000000000000")


def test_a_decision_keeps_the_arm_it_was_sent_with():
    recorded = decision_to_record(replace(DRAFT, rollout=(str(ROLLOUT), "candidate")), now=NOW, embedding_dimension=3)
    assert recorded.rollout == RolloutTag(rollout_id=ROLLOUT, arm=Arm.CANDIDATE)
    assert decision_to_record(DRAFT, now=NOW, embedding_dimension=3).rollout is None


@pytest.mark.parametrize(
    ("rollout", "field"),
    [
        (("not-a-uuid", "control"), "rollout.id"),
        (("", "control"), "rollout.id"),
        ((str(ROLLOUT), "treatment"), "rollout.arm"),
        ((str(ROLLOUT), ""), "rollout.arm"),
    ],
)
def test_a_malformed_arm_is_refused_by_name(rollout, field):
    with pytest.raises(InvalidDecision) as caught:
        checked_rollout(rollout)
    assert caught.value.field == field


def test_both_arms_of_every_rollout_asked_for_are_counted_zeros_included():
    rows = [
        (ROLLOUT, "control", "success", 7),
        (ROLLOUT, "control", "failure", 2),
        (ROLLOUT, "control", None, 4),
        (ROLLOUT, "candidate", "unknown", 1),
        (ROLLOUT, "candidate", "success", 3),
        (uuid.uuid4(), "control", "success", 99),
    ]
    assert arm_counts([OTHER, ROLLOUT], rows) == [
        ArmCount(OTHER, Arm.CONTROL),
        ArmCount(OTHER, Arm.CANDIDATE),
        ArmCount(ROLLOUT, Arm.CONTROL, successes=7, failures=2, pending=4),
        ArmCount(ROLLOUT, Arm.CANDIDATE, successes=3, unknown=1),
    ]


def test_the_rollouts_asked_for_are_uuids_each_once_and_bounded():
    assert counted_rollouts([str(ROLLOUT), str(ROLLOUT).upper(), str(OTHER)]) == [ROLLOUT, OTHER]
    with pytest.raises(InvalidDecision) as caught:
        counted_rollouts([str(ROLLOUT), "r-2"])
    assert caught.value.field == "rollout_ids[1]"
    with pytest.raises(ValueError, match="rollout_ids"):
        counted_rollouts([str(uuid.uuid4()) for _ in range(1001)])
