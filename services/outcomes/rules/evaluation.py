"""The off-policy estimate of a model pin (DESIGN §10): self-normalised
inverse-propensity scoring (SNIPS) over one decision type's judged decisions.

Each judged decision that went to `model` and carries its propensity p
(the chance the router had of picking that model) is weighed by w = 1/p;
the estimate of the success rate had every decision gone to `model` is
Σ w·r / Σ w, r being 1 for a success. Reweighing undoes the router's
preference: a model picked mostly where it was likely to succeed counts
less there and more where it was rarely tried.

The 95 % interval is the delta method's: the estimate is a ratio of two
sums over decisions, so its variance is about Σ w²(r − μ)² / (Σ w)², which
needs only the sums the decisions context computes where they are kept
(Σw, Σw·r, Σw², Σw²·r, with r² = r). A bootstrap would need every
decision's weight here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

# Fewer matched decisions than this and the normal interval the delta method
# gives cannot be trusted; no estimate is better than a confident wrong one.
MIN_MATCHED = 30
Z_95 = 1.959963984540054


@dataclass(frozen=True, slots=True)
class DecisionWeights:
    """The sums over one decision type's decisions, as WeighDecisions answers."""

    decisions: int
    judged: int
    unknown: int
    pending: int
    logged_successes: int
    with_propensity: int
    matched: int
    sum_w: float
    sum_w_r: float
    sum_w2: float
    sum_w2_r: float


@dataclass(frozen=True, slots=True)
class Estimate:
    mean: float
    low: float
    high: float


@dataclass(frozen=True, slots=True)
class Evaluation:
    estimate: Estimate | None
    # The logged policy's own judged success rate; None without judged decisions.
    logged_mean: float | None
    matched: int
    effective_sample_size: float
    reason: str


INTERVAL_METHOD = "delta method"


def _clamped(value: float) -> float:
    return min(1.0, max(0.0, value))


def snips(weights: DecisionWeights, *, model: str) -> Evaluation:
    """The estimate of `model`'s success rate over every judged decision of the type."""
    logged_mean = weights.logged_successes / weights.judged if weights.judged else None
    ess = weights.sum_w**2 / weights.sum_w2 if weights.sum_w2 > 0 else 0.0
    if weights.matched < MIN_MATCHED or weights.sum_w <= 0:
        reason = (
            f"{weights.matched} judged decisions with a propensity went to {model}; "
            f"an estimate needs at least {MIN_MATCHED}"
        )
        return Evaluation(None, logged_mean, weights.matched, ess, reason)
    mean = weights.sum_w_r / weights.sum_w
    # Σ w²(r − μ)² expanded with r² = r; never below 0 but for rounding.
    spread = max(0.0, weights.sum_w2_r * (1 - 2 * mean) + mean**2 * weights.sum_w2)
    half = Z_95 * math.sqrt(spread) / weights.sum_w
    reason = (
        f"{weights.matched} of {weights.with_propensity} judged decisions with a propensity went to {model}, "
        f"weighing as {ess:.1f} decisions"
    )
    return Evaluation(
        Estimate(mean=mean, low=_clamped(mean - half), high=_clamped(mean + half)),
        logged_mean,
        weights.matched,
        ess,
        reason,
    )
