"""A confounded router and a known truth, for checking the SNIPS estimate.

Decisions come in two kinds of situation, easy (70 %) and hard. The router
knows which and sends easy ones to `fast` with probability 0.8 and hard
ones with 0.2; `careful` gets the rest. `fast` succeeds in 0.9 of easy and
0.3 of hard situations, so its plain success rate over what it was sent is
inflated by the easy work it was handed: the truth, had every decision gone
to it, is 0.7·0.9 + 0.3·0.3 = 0.72, while its naive rate is about 0.83.

Run as a script, it reports how often the 95 % interval covers the truth
over many seeds: `python -m bench.evidence.confounded [seeds] [decisions]`.
"""

from __future__ import annotations

import random
import sys

from services.outcomes.rules.evaluation import DecisionWeights, Evaluation, snips

EASY_SHARE = 0.7
TO_FAST = {"easy": 0.8, "hard": 0.2}
SUCCESS = {("fast", "easy"): 0.9, ("fast", "hard"): 0.3, ("careful", "easy"): 0.85, ("careful", "hard"): 0.6}
TRUTH = {
    model: EASY_SHARE * SUCCESS[(model, "easy")] + (1 - EASY_SHARE) * SUCCESS[(model, "hard")]
    for model in ("fast", "careful")
}


def simulate(seed: int, decisions: int, *, model: str = "fast") -> tuple[DecisionWeights, float]:
    """The sums WeighDecisions would answer for `model`, and its naive rate."""
    rng = random.Random(seed)
    successes = matched = matched_successes = 0
    sum_w = sum_w_r = sum_w2 = sum_w2_r = 0.0
    for _ in range(decisions):
        situation = "easy" if rng.random() < EASY_SHARE else "hard"
        to_fast = TO_FAST[situation]
        picked = "fast" if rng.random() < to_fast else "careful"
        propensity = to_fast if picked == "fast" else 1 - to_fast
        success = rng.random() < SUCCESS[(picked, situation)]
        successes += success
        if picked != model:
            continue
        w = 1 / propensity
        matched += 1
        matched_successes += success
        sum_w += w
        sum_w2 += w * w
        if success:
            sum_w_r += w
            sum_w2_r += w * w
    weights = DecisionWeights(
        decisions=decisions,
        judged=decisions,
        unknown=0,
        pending=0,
        logged_successes=successes,
        with_propensity=decisions,
        matched=matched,
        sum_w=sum_w,
        sum_w_r=sum_w_r,
        sum_w2=sum_w2,
        sum_w2_r=sum_w2_r,
    )
    return weights, matched_successes / matched


def covered(evaluation: Evaluation, truth: float) -> bool:
    estimate = evaluation.estimate
    return estimate is not None and estimate.low <= truth <= estimate.high


def coverage(seeds: int, decisions: int, *, model: str = "fast") -> tuple[float, float]:
    """Share of seeds whose interval covers the truth, and whose excludes the naive rate."""
    hits = naive_out = 0
    for seed in range(seeds):
        weights, naive = simulate(seed, decisions, model=model)
        evaluation = snips(weights, model=model)
        hits += covered(evaluation, TRUTH[model])
        naive_out += not covered(evaluation, naive)
    return hits / seeds, naive_out / seeds


if __name__ == "__main__":
    seeds = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    decisions = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    for model in ("fast", "careful"):
        hit, out = coverage(seeds, decisions, model=model)
        print(
            f"{model}: truth {TRUTH[model]:.3f}, {seeds} seeds x {decisions} decisions: "
            f"coverage {hit:.3f}, naive rate outside the interval {out:.3f}"
        )
