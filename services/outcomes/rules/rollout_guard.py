"""The rollout guard's rule: from the two arms' counts, halt, advance, complete or observe.

Rule: halt when the candidate is shown worse than control by an always-valid
test AND the posterior puts at least `confidence` on harm beyond `max_drop`;
advance (complete at the last step) when both arms have judged enough, the
always-valid test shows the candidate no worse than control by more than
`max_drop`, AND the posterior puts at least `confidence` on that too.
Otherwise observe. A paused rollout may be halted but is never advanced.

Why not the obvious rule, a threshold on p_harm alone: the guard looks after
every sweep, dozens of times a day. A posterior probability read as if it
were read once crosses 0.95 by chance far more often than one time in twenty
when it is read at every look, so an identical candidate would be halted (or a
bad one advanced) on noise. The always-valid test is a normal-mixture
sequential probability ratio test on the difference of the two success
rates (the mixture over effect sizes, of spread `max_drop`, makes its error
bound hold at every look at once, not at one planned look); its bound widens
with the log of the evidence, so reading it after every sweep costs nothing.
p_harm stays the quantity an operator reads, and keeps a small arm from being
halted on a normal approximation it cannot yet support.

Each step needs `min_judged` more judged candidate decisions than the step
before (the counts are cumulative over the rollout): without that, evidence
gathered at 5 % would carry the candidate through every later step in
consecutive passes, and the steps would expose it without looking again.

Each arm's evidence is its judged decisions, whole trials, plus the episode
credit of the conversation turns that answered under it, fractional trials
weighted by their confidence exactly as routing weighs them (with_credit).
The counts may therefore be fractional; the posterior, p_harm's grid and the
mixture bound read them as real numbers throughout.

unknown and pending are carried for the operator and never judged.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum

from services.outcomes.rules.routing import NO_EVIDENCE, Evidence

# Points of the grid each posterior is integrated on; p_harm is within
# about 1e-3 of the exact value at this size (tests/unit check it).
GRID_POINTS = 400
# Standard deviations either side of a posterior's mean the grid spans.
GRID_SPAN_SD = 9.0
INTERVAL = 0.95


class Verdict(StrEnum):
    OBSERVE = "observe"
    ADVANCE = "advance"
    HALT = "halt"
    COMPLETE = "complete"


@dataclass(frozen=True, slots=True)
class ArmCounts:
    # Fractional once episode credit is added (with_credit).
    successes: float = 0
    failures: float = 0
    unknown: int = 0
    pending: int = 0

    @property
    def judged(self) -> float:
        return self.successes + self.failures


@dataclass(frozen=True, slots=True)
class ArmCredit:
    """One arm's episode credit: confidence-weighted successes and failures,
    and the arm's turns whose credit waits for the conversation to go on."""

    credit: Evidence = NO_EVIDENCE
    pending: int = 0


def with_credit(decided: ArmCounts, credited: ArmCredit) -> ArmCounts:
    """An arm's judged decisions and its credited turns as one body of evidence.

    A credited turn counts as routing counts it: its confidence on its side,
    so a turn credited at 0.85 weighs 0.85 of a judged decision. A deferred
    turn is pending, as an unjudged decision is.
    """
    return ArmCounts(
        successes=decided.successes + credited.credit.successes,
        failures=decided.failures + credited.credit.failures,
        unknown=decided.unknown,
        pending=decided.pending + credited.pending,
    )


@dataclass(frozen=True, slots=True)
class GuardSettings:
    max_drop: float = 0.05
    confidence: float = 0.95
    min_judged: int = 50


@dataclass(frozen=True, slots=True)
class ArmEvidence:
    """One arm as the guard reports it: counts and its Beta(1+s, 1+f) posterior."""

    judged: float
    successes: float
    failures: float
    unknown: int
    pending: int
    mean: float
    low: float
    high: float


@dataclass(frozen=True, slots=True)
class Judgement:
    verdict: Verdict
    step: int
    control: ArmEvidence
    candidate: ArmEvidence
    p_harm: float
    reason: str


def _log_beta(a: float, b: float) -> float:
    return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)


def _moments(counts: ArmCounts) -> tuple[float, float, float, float]:
    a, b = 1.0 + counts.successes, 1.0 + counts.failures
    mean = a / (a + b)
    sd = math.sqrt(a * b / ((a + b) ** 2 * (a + b + 1)))
    return a, b, mean, sd


def _density(a: float, b: float, lo: float, hi: float, points: int) -> tuple[list[float], list[float], float]:
    """The Beta(a, b) density at the midpoints of `points` equal cells of [lo, hi], and the cell width."""
    width = (hi - lo) / points
    log_norm = _log_beta(a, b)
    xs = [lo + (i + 0.5) * width for i in range(points)]
    ys = [math.exp((a - 1) * math.log(x) + (b - 1) * math.log1p(-x) - log_norm) for x in xs]
    return xs, ys, width


def _span(mean: float, sd: float) -> tuple[float, float]:
    return max(mean - GRID_SPAN_SD * sd, 0.0), min(mean + GRID_SPAN_SD * sd, 1.0)


def posterior(counts: ArmCounts) -> ArmEvidence:
    """Posterior mean and central 95 % interval of one arm's success rate."""
    a, b, mean, sd = _moments(counts)
    xs, ys, width = _density(a, b, *_span(mean, sd), GRID_POINTS)
    total = sum(ys) * width
    tail = (1 - INTERVAL) / 2
    low = high = mean
    running = 0.0
    found_low = False
    for x, y in zip(xs, ys, strict=True):
        running += y * width / total
        if not found_low and running >= tail:
            low, found_low = x, True
        if running >= 1 - tail:
            high = x
            break
    return ArmEvidence(
        judged=counts.judged,
        successes=counts.successes,
        failures=counts.failures,
        unknown=counts.unknown,
        pending=counts.pending,
        mean=mean,
        low=low,
        high=high,
    )


def p_harm(control: ArmCounts, candidate: ArmCounts, max_drop: float) -> float:
    """P(candidate < control − max_drop) under independent Beta(1+s, 1+f) posteriors.

    = ∫ f_candidate(y) · P(control > y + max_drop) dy: the midpoint rule over
    the candidate's posterior, control's survival read off its own grid
    (cumulative mass at the cell edges, linear between them).
    """
    ac, bc, mc, sdc = _moments(control)
    at, bt, mt, sdt = _moments(candidate)
    lo_c, hi_c = _span(mc, sdc)
    _, fc, width_c = _density(ac, bc, lo_c, hi_c, GRID_POINTS)
    # survival[k]: control's mass above the k-th cell edge.
    survival = [0.0] * (GRID_POINTS + 1)
    for k in range(GRID_POINTS - 1, -1, -1):
        survival[k] = survival[k + 1] + fc[k]
    total_c = survival[0]
    ys, ft, _ = _density(at, bt, *_span(mt, sdt), GRID_POINTS)
    harm = 0.0
    for y, f in zip(ys, ft, strict=True):
        z = y + max_drop
        if z <= lo_c:
            harm += f
        elif z < hi_c:
            at_edge = (z - lo_c) / width_c
            k = min(int(at_edge), GRID_POINTS - 1)
            harm += f * (survival[k] - (at_edge - k) * fc[k]) / total_c
    return min(max(harm / sum(ft), 0.0), 1.0)


def mixture_bound(control: ArmCounts, candidate: ArmCounts, *, spread: float, alpha: float) -> tuple[float, float]:
    """The always-valid (1 − alpha) interval of candidate − control after this look.

    Normal-mixture boundary on the difference of the posterior means, with
    mixing variance spread² (Robbins): it holds at every look at once.
    """
    _, _, mc, _ = _moments(control)
    _, _, mt, _ = _moments(candidate)
    variance = mc * (1 - mc) / (control.judged + 1) + mt * (1 - mt) / (candidate.judged + 1)
    mixing = spread * spread
    spread_term = math.log((variance + mixing) / variance) - 2 * math.log(alpha)
    half = math.sqrt(variance * (variance + mixing) / mixing * spread_term)
    difference = mt - mc
    # A difference of two rates lies in [-1, 1] whatever the bound says.
    return max(difference - half, -1.0), min(difference + half, 1.0)


def needed(settings: GuardSettings, step: int) -> int:
    """Judged candidate decisions the rollout must hold to leave `step`."""
    return settings.min_judged * (step + 1)


def decide(
    *,
    control: ArmCounts,
    candidate: ArmCounts,
    settings: GuardSettings,
    steps: tuple[int, ...],
    step: int,
    running: bool = True,
    harm: float | None = None,
) -> Verdict:
    """The verdict alone. Without `harm` given, p_harm is integrated only when
    the always-valid bound already allows a move, so a simulation can look
    after every sweep."""
    alpha = 1 - settings.confidence
    low, high = mixture_bound(control, candidate, spread=settings.max_drop, alpha=alpha)

    def harmed() -> float:
        return p_harm(control, candidate, settings.max_drop) if harm is None else harm

    if high < 0 and harmed() >= settings.confidence:
        return Verdict.HALT
    enough = control.judged >= settings.min_judged and candidate.judged >= needed(settings, step)
    if running and enough and low > -settings.max_drop and 1 - harmed() >= settings.confidence:
        return Verdict.COMPLETE if step == len(steps) - 1 else Verdict.ADVANCE
    return Verdict.OBSERVE


def judge(
    *,
    control: ArmCounts,
    candidate: ArmCounts,
    settings: GuardSettings,
    steps: tuple[int, ...],
    step: int,
    running: bool = True,
) -> Judgement:
    """The verdict on one rollout at `step` of `steps`, with the evidence behind it."""
    harm = p_harm(control, candidate, settings.max_drop)
    verdict = decide(
        control=control, candidate=candidate, settings=settings, steps=steps, step=step, running=running, harm=harm
    )
    bounds = mixture_bound(control, candidate, spread=settings.max_drop, alpha=1 - settings.confidence)
    enough = control.judged >= settings.min_judged and candidate.judged >= needed(settings, step)
    control_evidence, candidate_evidence = posterior(control), posterior(candidate)
    reason = _reason(
        verdict,
        settings=settings,
        control=control_evidence,
        candidate=candidate_evidence,
        harm=harm,
        bounds=bounds,
        enough=enough,
        running=running,
        need=needed(settings, step),
    )
    return Judgement(verdict, step, control_evidence, candidate_evidence, harm, reason)


def _pct(value: float) -> str:
    return f"{100 * value:.1f} %"


def _count(value: float) -> str:
    """A judged count: whole when it is, else to one decimal (credit is fractional)."""
    return f"{value:.0f}" if float(value).is_integer() else f"{value:.1f}"


def _reason(
    verdict: Verdict,
    *,
    settings: GuardSettings,
    control: ArmEvidence,
    candidate: ArmEvidence,
    harm: float,
    bounds: tuple[float, float],
    enough: bool,
    running: bool,
    need: int,
) -> str:
    figures = (
        f"candidate {_pct(candidate.mean)} ({_pct(candidate.low)}–{_pct(candidate.high)},"
        f" {_count(candidate.judged)} judged)"
        f" vs control {_pct(control.mean)} ({_pct(control.low)}–{_pct(control.high)},"
        f" {_count(control.judged)} judged);"
        f" P(candidate more than {100 * settings.max_drop:g} points worse) = {harm:.3f};"
        f" difference always-valid {100 * settings.confidence:g} % bound"
        f" {100 * bounds[0]:+.1f} to {100 * bounds[1]:+.1f} points"
    )
    if verdict is Verdict.HALT:
        return f"halted: the candidate is worse — {figures}"
    if verdict is Verdict.ADVANCE:
        return f"advanced: the candidate is not worse by more than {100 * settings.max_drop:g} points — {figures}"
    if verdict is Verdict.COMPLETE:
        return f"completed: the candidate is not worse by more than {100 * settings.max_drop:g} points — {figures}"
    if not running:
        why = "paused; observed, not advanced"
    elif not enough:
        why = f"waiting for {settings.min_judged} judged control and {need} judged candidate decisions"
    else:
        why = "not enough evidence either way yet"
    return f"{why} — {figures}"
