"""What the engine pays per decision for a rollout: the arm and the settings, from memory.

    .venv/bin/python -m bench.rollouts.bench_assign                   # 200,000 subjects, 7 rounds
    .venv/bin/python -m bench.rollouts.bench_assign --subjects 20000 --rounds 3   # smoke run

Builds the seed registry's snapshot with --rollouts running rollouts (one of
them on the agent and decision type asked for, at 25 %), parses it as the
engine client does, and times, over --subjects distinct subject ids, each
call per decision:

  bucket        outrider.client.rollouts.bucket: the hash rule alone
  assignment    RegistryClient.assignment: the arm, as the recorder stamps it
  for_subject   RegistryClient.for_subject: the arm and the settings to obey
  outside       RegistryClient.for_subject for a decision type with no rollout

Each figure is the median over --rounds of the mean CPU time per call, the
loop that makes the calls included; no
network is involved: the client loads the snapshot from its disk copy, as
one restarting while the registry is away does, and every call is answered
from memory.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

from outrider.client import RegistryClient
from outrider.client.rollouts import bucket
from services.registry.inventory import load_inventory
from services.registry.rollouts.rules import GuardSettings, Rollout, RolloutState
from services.registry.snapshot import build_document, encode

AGENT, DECISION_TYPE = "EXCEPTION_AGENT", "stall_response"


def client_with_rollouts(count: int, workdir: Path) -> tuple[RegistryClient, str]:
    inventory = load_inventory()
    rollouts = [
        Rollout(
            id=str(uuid.uuid4()),
            agent_id=AGENT,
            decision_type=DECISION_TYPE if index == 0 else f"bench_type_{index}",
            change={"skill_id": "stall_response", "thresholds": {"stallMinutes": 15}},
            baseline={},
            steps=(5, 25, 50, 100),
            step=1,
            percent=25,
            state=RolloutState.RUNNING,
            guard=GuardSettings(),
        )
        for index in range(count)
    ]
    encoded = encode(build_document(inventory.agents, inventory.skills, inventory.tools, rollouts))
    # The client reads the snapshot from its disk copy, as one restarting
    # with the registry away would: the same parse, no network.
    cache = workdir / "registry.json"
    cache.write_text(
        json.dumps({"cache_version": 1, "etag": encoded.etag, "document": encoded.document.decode()}), "utf-8"
    )
    return RegistryClient("127.0.0.1:1", "bench-key-0123456789abcdef0123456789", cache_path=cache), rollouts[0].id


def per_call_ns(call: Callable[[str], object], subjects: list[str], rounds: int) -> float:
    means = []
    for _ in range(rounds):
        # CPU time of this thread, not the wall clock: on shared cores the
        # time another process holds the core is not the call's cost.
        started = time.thread_time_ns()
        for subject in subjects:
            call(subject)
        means.append((time.thread_time_ns() - started) / len(subjects))
    return statistics.median(means)


async def run(args: argparse.Namespace) -> dict[str, object]:
    with tempfile.TemporaryDirectory(prefix="outrider-bench-assign-") as workdir:
        client, rollout_id = client_with_rollouts(args.rollouts, Path(workdir))
        # start() loads the disk copy before it returns; the watch it starts
        # runs only when this loop next waits, which the timing never does.
        await client.start()
    try:
        if client.snapshot is None or len(client.snapshot.rollouts) != args.rollouts:
            raise SystemExit("the snapshot did not load with its rollouts")
        return measure(client, rollout_id, args)
    finally:
        await client.close()


def measure(client: RegistryClient, rollout_id: str, args: argparse.Namespace) -> dict[str, object]:
    subjects = [f"BK-{n}" for n in range(args.subjects)]
    candidates = sum(client.for_subject(AGENT, DECISION_TYPE, s).assignment.arm == "candidate" for s in subjects)
    figures = {
        "bucket": per_call_ns(lambda s: bucket(rollout_id, s), subjects, args.rounds),
        "assignment": per_call_ns(lambda s: client.assignment(AGENT, DECISION_TYPE, s), subjects, args.rounds),
        "for_subject": per_call_ns(lambda s: client.for_subject(AGENT, DECISION_TYPE, s), subjects, args.rounds),
        "outside": per_call_ns(lambda s: client.for_subject(AGENT, "no_rollout_here", s), subjects, args.rounds),
    }
    return {
        "subjects": args.subjects,
        "rounds": args.rounds,
        "rollouts_in_snapshot": args.rollouts,
        "candidate_share": round(candidates / len(subjects), 4),
        "us_per_call": {name: round(ns / 1000, 3) for name, ns in figures.items()},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--subjects", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--rollouts", type=int, default=200)
    print(json.dumps(asyncio.run(run(parser.parse_args())), indent=2))


if __name__ == "__main__":
    main()
