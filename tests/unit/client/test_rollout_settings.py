"""What an engine obeys per subject during a rollout: the arm from the
snapshot alone, and the candidate's change applied (the recorder's stamp is
tested against a real registry, tests/integration/client/test_rollouts.py)."""

from __future__ import annotations

from outrider.client import RegistryDefaults, RegistrySnapshot
from outrider.client.rollouts import Assignment, bucket
from services.registry.inventory import load_inventory
from services.registry.rollouts.rules import GuardSettings, Rollout, RolloutState
from services.registry.snapshot import build_document, encode

ROLLOUT_ID = "6f1c8e0a-3b7d-4c2e-9a51-0d4b2f7e8c13"
# From the README's vectors: bucket 499 (in at 5 %) and 500 (out at 5 %).
IN_AT_5, OUT_AT_5 = "BK-14496", "BK-12766"


def snapshot_with(change: dict, *, percent: int = 5, agent_id: str = "EXCEPTION_AGENT") -> RegistrySnapshot:
    inventory = load_inventory()
    rollout = Rollout(
        id=ROLLOUT_ID,
        agent_id=agent_id,
        decision_type="stall_response",
        change=change,
        baseline={},
        steps=(5, 25, 50, 100),
        step=0,
        percent=percent,
        state=RolloutState.RUNNING,
        guard=GuardSettings(),
    )
    encoded = encode(build_document(inventory.agents, inventory.skills, inventory.tools, [rollout]))
    return RegistrySnapshot.parse(encoded.etag, encoded.document)


def test_the_arm_comes_from_the_published_rule() -> None:
    assert (bucket(ROLLOUT_ID, IN_AT_5), bucket(ROLLOUT_ID, OUT_AT_5)) == (499, 500)
    snapshot = snapshot_with({"model": "claude-opus-5-5"})
    assert snapshot.assignment("EXCEPTION_AGENT", "stall_response", IN_AT_5) == Assignment(ROLLOUT_ID, "candidate")
    assert snapshot.assignment("EXCEPTION_AGENT", "stall_response", OUT_AT_5) == Assignment(ROLLOUT_ID, "control")
    assert snapshot.assignment("EXCEPTION_AGENT", "stall_escalation", IN_AT_5) is None
    assert snapshot.assignment("DISPATCH_AGENT", "stall_response", IN_AT_5) is None


def test_a_model_pin_reaches_the_candidate_arm_only() -> None:
    snapshot = snapshot_with({"model": "claude-opus-5-5"})
    candidate = snapshot.for_subject("EXCEPTION_AGENT", "stall_response", IN_AT_5)
    control = snapshot.for_subject("EXCEPTION_AGENT", "stall_response", OUT_AT_5)
    assert (candidate.model, candidate.assignment) == ("claude-opus-5-5", Assignment(ROLLOUT_ID, "candidate"))
    assert (control.model, control.assignment) == (None, Assignment(ROLLOUT_ID, "control"))
    outside = snapshot.for_subject("EXCEPTION_AGENT", "assignment_failure", IN_AT_5)
    assert outside.model is None and outside.assignment is None
    assert outside.threshold("stall_response", "stallMinutes") == snapshot.threshold("stall_response", "stallMinutes")


def test_a_skill_change_sets_only_its_keys_for_the_candidate() -> None:
    snapshot = snapshot_with({"skill_id": "stall_response", "thresholds": {"stallMinutes": 15}, "enabled": False})
    candidate = snapshot.for_subject("EXCEPTION_AGENT", "stall_response", IN_AT_5)
    control = snapshot.for_subject("EXCEPTION_AGENT", "stall_response", OUT_AT_5)
    assert candidate.threshold("stall_response", "stallMinutes") == 15
    assert candidate.threshold("stall_response", "reassignConfidence") == 0.7
    assert candidate.skill_enabled("stall_response") is False
    assert control.threshold("stall_response", "stallMinutes") == 10 and control.skill_enabled("stall_response")


def test_autonomy_for_the_candidate_lets_its_writes_go_without_a_human() -> None:
    snapshot = snapshot_with({"autonomous": True})
    candidate = snapshot.for_subject("EXCEPTION_AGENT", "stall_response", IN_AT_5)
    control = snapshot.for_subject("EXCEPTION_AGENT", "stall_response", OUT_AT_5)
    assert candidate.autonomous and not control.autonomous
    assert not candidate.requires_confirmation("reassign_booking") and control.requires_confirmation("reassign_booking")
    assert not candidate.requires_confirmation("nearby_milers") and not control.requires_confirmation("nearby_milers")
    assert candidate.requires_confirmation("no_such_tool")


def test_raising_the_share_only_moves_subjects_into_the_candidate_arm() -> None:
    subjects = [f"BK-{n}" for n in range(2000)]
    arms = {}
    for percent in (5, 25, 50, 100):
        snapshot = snapshot_with({"autonomous": True}, percent=percent)
        arms[percent] = {s for s in subjects if snapshot.for_subject("EXCEPTION_AGENT", "stall_response", s).autonomous}
    assert arms[5] <= arms[25] <= arms[50] <= arms[100] == set(subjects)
    assert 0.03 < len(arms[5]) / len(subjects) < 0.07 and 0.45 < len(arms[50]) / len(subjects) < 0.55


def test_a_snapshot_without_rollouts_and_the_defaults_have_no_arm() -> None:
    inventory = load_inventory()
    encoded = encode(build_document(inventory.agents, inventory.skills, inventory.tools))
    plain = RegistrySnapshot.parse(encoded.etag, encoded.document)
    assert plain.rollouts == {} and plain.for_subject("EXCEPTION_AGENT", "stall_response", IN_AT_5).assignment is None
    defaults = RegistryDefaults(thresholds={"stall_response": {"stallMinutes": 8}}, models={"EXCEPTION_AGENT": "m"})
    settings = defaults.for_subject("EXCEPTION_AGENT", "stall_response", IN_AT_5)
    assert settings.threshold("stall_response", "stallMinutes") == 8 and settings.model == "m"
    assert settings.assignment is None and settings.requires_confirmation("nearby_milers")
