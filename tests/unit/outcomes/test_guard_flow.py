"""One guard pass over fakes of the registry's and decisions' APIs and the
ledger's credit: one count for every rollout, episode credit added to each
arm, paused ones never advanced, a stale verdict skipped, and a sweep's
wake-up running a pass without waiting for the timer."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from services.outcomes.guard.clients import ActiveRollout
from services.outcomes.guard.flow import Guard, guard_pass
from services.outcomes.rules.rollout_guard import ArmCounts, ArmCredit, GuardSettings, Judgement
from services.outcomes.rules.routing import Evidence

GOOD = {"control": ArmCounts(7000, 3000), "candidate": ArmCounts(2100, 900)}
WORSE = {"control": ArmCounts(1400, 600), "candidate": ArmCounts(150, 150)}


def active(rollout_id: str, *, running: bool = True, step: int = 1) -> ActiveRollout:
    return ActiveRollout(rollout_id, (5, 25, 50, 100), step, running, GuardSettings())


class Registry:
    def __init__(self, rollouts: list[ActiveRollout], refuse: frozenset[str] = frozenset()) -> None:
        self.rollouts = rollouts
        self.refuse = refuse
        self.verdicts: dict[str, Judgement] = {}

    async def list_rollouts(self, state: str) -> list[ActiveRollout]:
        return [r for r in self.rollouts if r.running == (state == "running")]

    async def judge(self, rollout_id: str, judgement: Judgement) -> bool:
        if rollout_id in self.refuse:
            return False
        self.verdicts[rollout_id] = judgement
        return True


class Arms:
    def __init__(self, arms: dict[str, dict[str, ArmCounts]]) -> None:
        self.arms = arms
        self.calls: list[list[str]] = []

    async def count_rollout_arms(self, rollout_ids: Sequence[str]) -> dict[tuple[str, str], ArmCounts]:
        self.calls.append(list(rollout_ids))
        return {(r, arm): counts for r in rollout_ids for arm, counts in self.arms.get(r, {}).items()}


class Credits:
    def __init__(self, arms: dict[tuple[str, str], ArmCredit] | None = None) -> None:
        self.arms = arms or {}
        self.calls: list[list[str]] = []

    async def tally_rollout_credits(self, rollout_ids: Sequence[str]) -> dict[tuple[str, str], ArmCredit]:
        self.calls.append(list(rollout_ids))
        return {key: credit for key, credit in self.arms.items() if key[0] in rollout_ids}


async def test_one_pass_counts_once_and_judges_each_rollout_paused_ones_never_advanced():
    registry = Registry(
        [active("good"), active("worse"), active("held", running=False), active("stale")], frozenset({"stale"})
    )
    arms = Arms({"good": GOOD, "worse": WORSE, "held": GOOD, "stale": GOOD})

    credits = Credits()

    taken = await guard_pass(registry, arms, credits)

    assert len(arms.calls) == 1 and sorted(arms.calls[0]) == ["good", "held", "stale", "worse"]
    assert credits.calls == arms.calls
    assert {r: j.verdict.value for r, j in registry.verdicts.items()} == {
        "good": "advance",
        "worse": "halt",
        "held": "observe",
    }
    assert taken == {"advance": 1, "halt": 1, "observe": 1, "refused": 1}
    assert registry.verdicts["good"].step == 1


async def test_with_no_rollout_a_pass_counts_nothing():
    arms, credits = Arms({}), Credits()
    assert await guard_pass(Registry([]), arms, credits) == {}
    assert arms.calls == [] and credits.calls == []


async def test_credited_failures_on_the_candidate_halt_a_rollout_its_few_decisions_cannot():
    few = {"control": ArmCounts(18, 2), "candidate": ArmCounts(3, 2)}
    alone = Registry([active("r", step=0)])
    await guard_pass(alone, Arms({"r": few}), Credits())
    assert alone.verdicts["r"].verdict.value == "observe"

    credited = Registry([active("r", step=0)])
    credit = {
        ("r", "candidate"): ArmCredit(Evidence(successes=1.7, failures=34.5), pending=3),
        ("r", "control"): ArmCredit(Evidence(successes=20.4)),
    }
    await guard_pass(credited, Arms({"r": few}), Credits(credit))
    judged = credited.verdicts["r"]
    assert judged.verdict.value == "halt"
    assert judged.candidate.judged == 3 + 2 + 1.7 + 34.5 and judged.candidate.pending == 3
    assert judged.control.successes == 18 + 20.4 and judged.control.failures == 2


async def test_a_wake_up_runs_a_pass_long_before_the_interval():
    registry = Registry([active("good")])
    guard = Guard(registry, Arms({"good": GOOD}), Credits(), interval_s=3600)
    running = asyncio.create_task(guard.run())
    try:
        guard.wake()
        for _ in range(100):
            if registry.verdicts:
                break
            await asyncio.sleep(0.01)
        assert registry.verdicts["good"].verdict.value == "advance"
    finally:
        running.cancel()
