"""Guarded rollouts as an engine sees them: which arm a subject is in, and
the settings that arm must obey (DESIGN §9).

Assignment is a pure function of the rollout id, the subject id and the
share, the same in every language, so every engine process (and the
outcome guard counting afterwards) puts a subject in the same arm without
asking anyone:

    bucket = int.from_bytes(sha256(f"{rollout_id}:{subject_id}".encode()).digest()[:8], "big") % 10000
    candidate  iff  bucket < percent * 100

Raising the share only moves subjects from control to candidate, never
back: a subject's bucket does not change, and the threshold only grows.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any, Final, Literal

Number = int | float
ArmName = Literal["control", "candidate"]

BUCKETS: Final = 10_000


def bucket(rollout_id: str, subject_id: str) -> int:
    """The subject's bucket in the rollout, 0 to 9,999."""
    digest = hashlib.sha256(f"{rollout_id}:{subject_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % BUCKETS


def in_candidate(rollout_id: str, subject_id: str, percent: Number) -> bool:
    """Does the subject get the candidate at this share (0–100 %)?"""
    return bucket(rollout_id, subject_id) < percent * 100


@dataclass(frozen=True, slots=True)
class Assignment:
    """The arm of one rollout a subject is in; a decision carries it as its `rollout`."""

    rollout_id: str
    arm: ArmName


class RolloutSettings:
    """A running or paused rollout, as the snapshot carries it.

    Built once per snapshot and asked once per decision, so what does not
    depend on the subject is worked out here: the hash state of the id's
    prefix, the bucket threshold, and the two answers `assign` gives. The
    arithmetic is `bucket`'s (tests/unit/client/test_rollout_vectors.py
    checks both against the published vectors).
    """

    __slots__ = ("_arms", "_prefix", "_threshold", "agent_id", "change", "decision_type", "id", "percent", "views")

    def __init__(self, *, id: str, agent_id: str, decision_type: str, percent: Number, change: Mapping[str, Any]):
        self.id = id
        self.agent_id = agent_id
        self.decision_type = decision_type
        self.percent = percent
        # {model}, {autonomous} or {skill_id, thresholds?, enabled?}.
        self.change = change
        self._prefix = hashlib.sha256(f"{id}:".encode())
        self._threshold = percent * 100
        self._arms = (Assignment(id, "control"), Assignment(id, "candidate"))
        # Each arm's settings, built by the snapshot the first time a subject asks.
        self.views: list[SubjectSettings | None] = [None, None]

    def __repr__(self) -> str:
        return f"RolloutSettings(id={self.id!r}, agent_id={self.agent_id!r}, percent={self.percent!r})"

    def bucket(self, subject_id: str) -> int:
        digest = self._prefix.copy()
        digest.update(subject_id.encode())
        return int.from_bytes(digest.digest()[:8], "big") % BUCKETS

    def arm_index(self, subject_id: str) -> int:
        """0 for control, 1 for candidate."""
        return self.bucket(subject_id) < self._threshold

    def assign(self, subject_id: str) -> Assignment:
        return self._arms[self.bucket(subject_id) < self._threshold]


@dataclass(frozen=True, slots=True)
class SkillView:
    """One skill's switch and thresholds as a subject's arm sees them."""

    enabled: bool
    thresholds: Mapping[str, Number]


@dataclass(frozen=True, slots=True)
class SubjectSettings:
    """What an engine obeys for one decision about one subject: the agent's
    model and autonomy, its skills' switches and thresholds, and which tools
    wait for a human, with the candidate's change applied when the subject
    is in a rollout's candidate arm. `assignment` is None outside a rollout.
    """

    agent_id: str
    model: str | None
    autonomous: bool
    skills: Mapping[str, SkillView]
    # Per tool name: must a human confirm its use? A tool not listed must.
    confirmations: Mapping[str, bool]
    assignment: Assignment | None = None

    def skill_enabled(self, skill_id: str) -> bool:
        skill = self.skills.get(skill_id)
        return skill is not None and skill.enabled

    def threshold(self, skill_id: str, key: str) -> Number:
        skill = self.skills.get(skill_id)
        if skill is None or key not in skill.thresholds:
            raise LookupError(f"no threshold {key!r} for skill {skill_id!r} of {self.agent_id}")
        return skill.thresholds[key]

    def requires_confirmation(self, tool_name: str) -> bool:
        return self.confirmations.get(tool_name, True)

    def assigned(self, assignment: Assignment | None) -> SubjectSettings:
        return replace(self, assignment=assignment)


def with_change(
    base: SubjectSettings, change: Mapping[str, Any], tool_kinds: Mapping[str, str], assignment: Assignment
) -> SubjectSettings:
    """The candidate arm's settings: `base` with the rollout's change applied.

    Autonomy decides which tools wait for a human, so a change of autonomy
    recomputes that for the agent's tools (a read never waits).
    """
    settings = base.assigned(assignment)
    if "skill_id" in change:
        skill_id = str(change["skill_id"])
        skill = settings.skills.get(skill_id)
        if skill is None:
            return settings
        changed = SkillView(
            enabled=bool(change.get("enabled", skill.enabled)),
            thresholds=MappingProxyType({**skill.thresholds, **change.get("thresholds", {})}),
        )
        return replace(settings, skills=MappingProxyType({**settings.skills, skill_id: changed}))
    if "model" in change:
        model = change["model"]
        return replace(settings, model=model if isinstance(model, str) and model else None)
    if "autonomous" in change:
        autonomous = bool(change["autonomous"])
        confirmations = {name: tool_kinds.get(name) != "read" and not autonomous for name in settings.confirmations}
        return replace(settings, autonomous=autonomous, confirmations=MappingProxyType(confirmations))
    return settings
