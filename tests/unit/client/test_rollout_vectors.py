"""The assignment rule against the table of vectors the README publishes for
engines in other languages: the very rows, parsed from the README."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from outrider.client.rollouts import RolloutSettings, bucket, in_candidate

README = Path(__file__).resolve().parents[3] / "README.md"
ROW = re.compile(r"^\| `(?P<rollout>[0-9a-f-]{36})` \| `(?P<subject>[^`]*)` \| (?P<bucket>\d+) \|")


def published_vectors() -> list[tuple[str, str, int]]:
    rows = [ROW.match(line) for line in README.read_text(encoding="utf-8").splitlines()]
    return [(m["rollout"], m["subject"], int(m["bucket"])) for m in rows if m is not None]


def test_the_readme_publishes_twenty_vectors_with_the_edge_buckets() -> None:
    vectors = published_vectors()
    assert len(vectors) == 20
    assert {0, 9999, 499, 500, 2499, 2500, 4999, 5000} <= {found for _, _, found in vectors}
    assert any(not subject.isascii() for _, subject, _ in vectors)


@pytest.mark.parametrize(("rollout_id", "subject_id", "expected"), published_vectors())
def test_each_published_vector_is_the_clients_bucket(rollout_id: str, subject_id: str, expected: int) -> None:
    assert bucket(rollout_id, subject_id) == expected
    # The snapshot's rollouts compute it their own faster way: the same number.
    rollout = RolloutSettings(id=rollout_id, agent_id="A", decision_type="t", percent=expected / 100, change={})
    assert rollout.bucket(subject_id) == expected
    assert rollout.assign(subject_id).arm == "control"
    assert rollout_at(rollout_id, (expected + 1) / 100).assign(subject_id).arm == "candidate"


def rollout_at(rollout_id: str, percent: float) -> RolloutSettings:
    return RolloutSettings(id=rollout_id, agent_id="A", decision_type="t", percent=percent, change={})


def test_a_bucket_is_in_the_candidate_arm_below_percent_times_100() -> None:
    by_bucket = {found: (rollout, subject) for rollout, subject, found in published_vectors()}
    for share, last_in in ((5, 499), (25, 2499), (50, 4999)):
        assert in_candidate(*by_bucket[last_in], share)
        assert not in_candidate(*by_bucket[last_in + 1], share)
    assert not in_candidate(*by_bucket[0], 0)
    assert in_candidate(*by_bucket[0], 1)
    assert not in_candidate(*by_bucket[9999], 99.99)
    assert in_candidate(*by_bucket[9999], 100)
