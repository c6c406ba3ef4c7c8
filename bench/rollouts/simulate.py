"""Guarded rollouts simulated with delayed outcomes, judged by the guard's own rule.

    .venv/bin/python -m bench.rollouts.simulate                 # every scenario, 1,000 rollouts each
    .venv/bin/python -m bench.rollouts.simulate --rollouts 200  # a quicker look

Each rollout serves one decision type. Decisions arrive at --rate an hour
(a Poisson count per sweep); a subject is in the candidate arm with the
share in force. A decision's outcome is known --facts-share of the time at a
uniform moment inside the outcome window (the facts arrived), else when the
window closes; --unknown of the outcomes are unknown. The sweeper judges
what is known every --sweep-h hours, and the guard looks after every sweep,
with services.outcomes.rules.rollout_guard.decide: the rule the guard runs.
Undecided decisions are pending and count for nothing. A rollout ends when
it is halted or completed, or at --days.

The naive rule, shown for contrast, looks as often but halts on p_harm ≥
confidence alone and advances on 1 − p_harm ≥ confidence with the same
judged counts: the rule that reads a posterior as if it were read once.

Seeded (random.Random(--seed)), so a run is reproducible.
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

from services.outcomes.rules.rollout_guard import ArmCounts, GuardSettings, Verdict, decide, needed, p_harm

STEPS = (5, 25, 50, 100)
Rule = Callable[..., Verdict]


def naive(
    *, control: ArmCounts, candidate: ArmCounts, settings: GuardSettings, steps: tuple[int, ...], step: int
) -> Verdict:
    # A normal screen first, only to keep the contrast fast: p_harm is
    # integrated when the screen puts it within reach of either threshold.
    mc = (1 + control.successes) / (2 + control.judged)
    mt = (1 + candidate.successes) / (2 + candidate.judged)
    sd = math.sqrt(mc * (1 - mc) / (3 + control.judged) + mt * (1 - mt) / (3 + candidate.judged))
    z = (mc - settings.max_drop - mt) / sd
    screen = 0.5 * math.erfc(-z / math.sqrt(2))
    if 0.7 > screen > 0.3:
        return Verdict.OBSERVE
    harm = p_harm(control, candidate, settings.max_drop)
    if harm >= settings.confidence:
        return Verdict.HALT
    enough = control.judged >= settings.min_judged and candidate.judged >= needed(settings, step)
    if enough and 1 - harm >= settings.confidence:
        return Verdict.COMPLETE if step == len(steps) - 1 else Verdict.ADVANCE
    return Verdict.OBSERVE


@dataclass(frozen=True, slots=True)
class World:
    rate: float = 30.0
    sweep_h: float = 1.0
    window_h: float = 24.0
    facts_share: float = 0.7
    unknown: float = 0.1
    days: float = 28.0
    control_rate: float = 0.7


@dataclass(slots=True)
class Run:
    verdict: Verdict
    hours: float
    candidate_decisions: int
    bad_decisions: float


def _poisson(rng: random.Random, mean: float) -> int:
    limit, k, product = math.exp(-mean), 0, rng.random()
    while product > limit:
        k += 1
        product *= rng.random()
    return k


def simulate_one(rng: random.Random, world: World, settings: GuardSettings, lift: float, rule: Rule) -> Run:
    """One rollout; `lift` is the candidate's rate minus control's."""
    sweeps = int(world.days * 24 / world.sweep_h)
    window = max(1, round(world.window_h / world.sweep_h))
    # landing[k]: outcomes the sweep k makes known, per arm: [successes, failures, unknown].
    landing = [[[0, 0, 0], [0, 0, 0]] for _ in range(sweeps + window + 2)]
    judged = [[0, 0, 0], [0, 0, 0]]
    step, served = 0, 0
    per_sweep = world.rate * world.sweep_h
    rates = (world.control_rate, world.control_rate + lift)
    for k in range(sweeps):
        percent = STEPS[step]
        for _ in range(_poisson(rng, per_sweep)):
            arm = 1 if rng.random() * 100 < percent else 0
            served += arm
            # 0 success, 1 failure, 2 unknown
            kind = 2 if rng.random() < world.unknown else 0 if rng.random() < rates[arm] else 1
            lands = k + 1 + (int(rng.random() * window) if rng.random() < world.facts_share else window)
            landing[lands][arm][kind] += 1
        for arm in (0, 1):
            for kind in (0, 1, 2):
                judged[arm][kind] += landing[k + 1][arm][kind]
        verdict = rule(
            control=ArmCounts(judged[0][0], judged[0][1], judged[0][2]),
            candidate=ArmCounts(judged[1][0], judged[1][1], judged[1][2]),
            settings=settings,
            steps=STEPS,
            step=step,
        )
        if verdict is Verdict.ADVANCE:
            step += 1
        elif verdict is not Verdict.OBSERVE:
            hours = (k + 1) * world.sweep_h
            return Run(verdict, hours, served, served * max(-lift, 0.0))
    return Run(Verdict.OBSERVE, sweeps * world.sweep_h, served, served * max(-lift, 0.0))


@dataclass(slots=True)
class Summary:
    halted: float
    completed: float
    open: float
    median_hours: float | None
    median_candidate: float | None
    median_bad: float | None


def scenario(
    seed: int, rollouts: int, world: World, settings: GuardSettings, lift: float, rule: Rule, ended: Verdict
) -> Summary:
    rng = random.Random(seed)
    runs = [simulate_one(rng, world, settings, lift, rule) for _ in range(rollouts)]
    done = [r for r in runs if r.verdict is ended]

    def med(values: list[float]) -> float | None:
        return statistics.median(values) if values else None

    return Summary(
        halted=sum(r.verdict is Verdict.HALT for r in runs) / rollouts,
        completed=sum(r.verdict is Verdict.COMPLETE for r in runs) / rollouts,
        open=sum(r.verdict is Verdict.OBSERVE for r in runs) / rollouts,
        median_hours=med([r.hours for r in done]),
        median_candidate=med([float(r.candidate_decisions) for r in done]),
        median_bad=med([r.bad_decisions for r in done]),
    )


def _fmt(value: float | None, pattern: str = "{:.0f}") -> str:
    return "—" if value is None else pattern.format(value)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rollouts", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=20261202)
    parser.add_argument("--rate", type=float, default=30.0, help="decisions an hour")
    parser.add_argument("--sweep-h", type=float, default=1.0)
    parser.add_argument("--window-h", type=float, default=24.0)
    parser.add_argument("--facts-share", type=float, default=0.7)
    parser.add_argument("--unknown", type=float, default=0.1)
    parser.add_argument("--days", type=float, default=28.0)
    parser.add_argument(
        "--rows",
        type=int,
        nargs="*",
        default=None,
        help="only these rows of the table (0-based); each row is seeded alike",
    )
    args = parser.parse_args()
    world = World(
        rate=args.rate,
        sweep_h=args.sweep_h,
        window_h=args.window_h,
        facts_share=args.facts_share,
        unknown=args.unknown,
        days=args.days,
    )
    print(
        f"{args.rollouts} rollouts a scenario; {world.rate:g} decisions/h, sweep every {world.sweep_h:g} h,"
        f" window {world.window_h:g} h ({100 * world.facts_share:g} % known inside it),"
        f" {100 * world.unknown:g} % unknown, control {100 * world.control_rate:g} %, up to {world.days:g} days;"
        f" steps {list(STEPS)}"
    )
    print()
    print(
        "| rule | max_drop | confidence | min_judged | A/A halted | A/A completed"
        " | −10 pts halted | hours to halt | candidate decisions / bad ones before halt"
        " | +5 pts completed | hours to complete |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    settings_grid = [
        ("guard", GuardSettings(), decide),
        ("naive", GuardSettings(), naive),
        ("guard", GuardSettings(max_drop=0.03), decide),
        ("guard", GuardSettings(max_drop=0.1), decide),
        ("guard", GuardSettings(confidence=0.9), decide),
        ("guard", GuardSettings(confidence=0.99), decide),
        ("guard", GuardSettings(min_judged=100), decide),
    ]
    for row, (name, settings, rule) in enumerate(settings_grid):
        if args.rows is not None and row not in args.rows:
            continue
        started = time.perf_counter()
        same = scenario(args.seed, args.rollouts, world, settings, 0.0, rule, Verdict.COMPLETE)
        worse = scenario(args.seed + 1, args.rollouts, world, settings, -0.10, rule, Verdict.HALT)
        better = scenario(args.seed + 2, args.rollouts, world, settings, 0.05, rule, Verdict.COMPLETE)
        print(
            f"| {name} | {settings.max_drop:g} | {settings.confidence:g} | {settings.min_judged} "
            f"| {100 * same.halted:.1f} % | {100 * same.completed:.1f} % "
            f"| {100 * worse.halted:.1f} % | {_fmt(worse.median_hours)} "
            f"| {_fmt(worse.median_candidate)} / {_fmt(worse.median_bad, '{:.1f}')} "
            f"| {100 * better.completed:.1f} % (halted {100 * better.halted:.1f} %) | {_fmt(better.median_hours)} |",
            flush=True,
        )
        print(f"<!-- {name} {settings}: {time.perf_counter() - started:.0f} s -->", flush=True)


if __name__ == "__main__":
    main()
