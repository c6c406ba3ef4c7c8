"""The demo's rollout plan against the guard's own rule, by simulation.

The demo claims the guard halts the worse model and completes the better one
within MAX_BATCHES batches of BATCH decisions. Played here with the pure
rule at the demo's steps, guard and success rates, one look per batch and at
most one step per look, as the guard moves a rollout.
"""

from __future__ import annotations

import random

from launcher.demo.fleet import ROLLOUTS, SUCCESS_RATE
from launcher.demo.rollouts import BATCH, MAX_BATCHES, MIN_JUDGED, STEPS, RolloutPlan
from services.outcomes.rules.rollout_guard import ArmCounts, GuardSettings, Verdict, decide

RUNS = 300
DEMO_GUARD = GuardSettings(min_judged=MIN_JUDGED)


def play(
    plan: RolloutPlan, rng: random.Random, *, settings: GuardSettings = DEMO_GUARD, steps: tuple[int, ...] = STEPS
) -> tuple[Verdict, int]:
    """The verdict the rollout ends with, and the batches it took."""
    arms = {"control": [0, 0], "candidate": [0, 0]}
    rates = {"control": SUCCESS_RATE[plan.baseline], "candidate": SUCCESS_RATE[plan.candidate]}
    step = 0
    for batch in range(1, MAX_BATCHES + 1):
        for _ in range(BATCH):
            arm = "candidate" if rng.random() * 100 < steps[step] else "control"
            arms[arm][0 if rng.random() < rates[arm] else 1] += 1
        verdict = decide(
            control=ArmCounts(*arms["control"]),
            candidate=ArmCounts(*arms["candidate"]),
            settings=settings,
            steps=steps,
            step=step,
        )
        if verdict in (Verdict.HALT, Verdict.COMPLETE):
            return verdict, batch
        if verdict is Verdict.ADVANCE:
            step += 1
    return Verdict.OBSERVE, MAX_BATCHES


def test_the_guard_halts_the_worse_model_and_completes_the_better_within_the_demo_s_batches():
    rng = random.Random(20)
    expected = {"halted": Verdict.HALT, "completed": Verdict.COMPLETE}
    for plan in ROLLOUTS:
        ends = [play(plan, rng) for _ in range(RUNS)]
        assert {verdict for verdict, _ in ends} == {expected[plan.expected]}, plan.claim
        # With room to spare: the demo's bound is not what ends it.
        assert max(batches for _, batches in ends) <= MAX_BATCHES * 2 // 3, plan.claim


def test_at_the_platform_s_default_guard_the_demo_s_batches_would_not_do():
    # Why the demo sets its own steps and min_judged: at the defaults the
    # better model is rarely through its steps within the same batches.
    rng = random.Random(21)
    better = next(plan for plan in ROLLOUTS if plan.expected == "completed")
    ends = [play(better, rng, settings=GuardSettings(), steps=(5, 25, 50, 100))[0] for _ in range(50)]
    assert sum(verdict is Verdict.COMPLETE for verdict in ends) < 25
