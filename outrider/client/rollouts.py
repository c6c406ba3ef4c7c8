"""Guarded rollouts as an engine sees them: which arm a subject is in (DESIGN §9).

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
from dataclasses import dataclass
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

    __slots__ = ("_arms", "_prefix", "_threshold", "agent_id", "change", "decision_type", "id", "percent")

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
