"""Alerts: one evaluation pass over 100 agents × 5 decision types, and the
delivery of 1,000 transitions to a receiver that fails 30 % of its calls.

    python -m bench.alerts.bench_alerts              # 5 rounds of the pass, 1,000 transitions
    python -m bench.alerts.bench_alerts --rounds 1 --transitions 100   # smoke

Runs on an embedded Postgres (migrated as the suite's template). The pass is
timed twice: the rules alone (500 windows, every one compared under the Beta
posteriors), and the whole pass through the database with a third of the
keys dropping, so the firing rows and their outbox rows are written too. The
delivery part queues the transitions, then drains them with backoff through
a local HTTP receiver answering 500 to a random 30 % of calls, and counts the
transitions the receiver accepted, the repeats of one delivery id it was
sent after a 2xx, and the failed attempts.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import tempfile
import threading
import time
from collections import Counter
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx

from services.common.db import context_engine
from services.outcomes.alerting.delivery import Deliverer
from services.outcomes.alerting.job import Alerter
from services.outcomes.alerting.signals import Reading
from services.outcomes.rules import alerts
from services.outcomes.rules.alerts import JudgedWindow, Signals, Thresholds
from tests.harness import build_template, embedded_stack, fresh_database

SECRET = "b" * 40


def windows(agents: int, types: int, *, seed: int) -> list[JudgedWindow]:
    rng = random.Random(seed)
    items = []
    for a in range(agents):
        for t in range(types):
            previous = sum(rng.random() < 0.8 for _ in range(100))
            rate = 0.55 if (a * types + t) % 3 == 0 else 0.8
            latest = sum(rng.random() < rate for _ in range(100))
            items.append(JudgedWindow(f"agent-{a:03d}", f"type-{t}", 100, latest, 100, previous))
    return items


class Fixed:
    def __init__(self, items: list[JudgedWindow]) -> None:
        self.items = items

    async def read(self) -> Reading:
        return Reading(Signals(windows=self.items), frozenset({alerts.JUDGED_SUCCESS_DROP}))


def receiver(fail_share: float, seed: int) -> tuple[ThreadingHTTPServer, Counter[str], list[int]]:
    accepted: Counter[str] = Counter()
    calls = [0]
    rng = random.Random(seed)
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers["Content-Length"]))
            with lock:
                calls[0] += 1
                fail = rng.random() < fail_share
                if not fail:
                    accepted[self.headers["X-Outrider-Delivery"]] += 1
            self.send_response(500 if fail else 204)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    return ThreadingHTTPServer(("127.0.0.1", 0), Handler), accepted, calls


async def main(args: argparse.Namespace) -> None:
    items = windows(100, 5, seed=1)
    rule_times = []
    for _ in range(args.rounds):
        start = time.perf_counter()
        firing = alerts.evaluate(Signals(windows=items), now=datetime.now(UTC), thresholds=Thresholds())
        rule_times.append(time.perf_counter() - start)
    with tempfile.TemporaryDirectory() as tmp, embedded_stack(Path(tmp)) as stack:
        await build_template(stack)
        pass_times = []
        for _ in range(args.rounds):
            async with fresh_database(stack) as name:
                engine = context_engine(stack.database_url(name), "outcomes")
                try:
                    alerter = Alerter(engine=engine, sources=Fixed(items), thresholds=Thresholds())
                    # A running replica's pool is warm: the first connection is not the pass's cost.
                    async with engine.connect() as conn:
                        await conn.exec_driver_sql("select 1")
                    start = time.perf_counter()
                    moves = await alerter.evaluate()
                    pass_times.append(time.perf_counter() - start)
                finally:
                    await engine.dispose()
        async with fresh_database(stack) as name:
            engine = context_engine(stack.database_url(name), "outcomes")
            server, accepted, calls = receiver(0.3, seed=2)
            thread = threading.Thread(target=server.serve_forever, daemon=True)
            thread.start()
            try:
                # Each pass fires the whole set and the next resolves it: two transitions per key.
                keys = [JudgedWindow(f"agent-{i:04d}", "t", 100, 40, 100, 90) for i in range(args.transitions // 2)]
                source = Fixed(keys)
                alerter = Alerter(engine=engine, sources=source, thresholds=Thresholds())
                await alerter.evaluate()
                source.items = []
                await alerter.evaluate()
                url = f"http://127.0.0.1:{server.server_port}/hook"
                async with httpx.AsyncClient() as client:
                    deliverer = Deliverer(engine=engine, url=url, secret=SECRET, client=client, backoff_base_s=0.01)
                    start = time.perf_counter()
                    while len(accepted) < args.transitions and time.perf_counter() - start < 300:
                        await deliverer.deliver_due()
                        await asyncio.sleep(0.01)
                    drained = time.perf_counter() - start
            finally:
                server.shutdown()
                await engine.dispose()
    print(f"rules alone, 500 windows: median {statistics.median(rule_times) * 1000:.1f} ms, firing {len(firing)}")
    print(f"whole pass with its writes: median {statistics.median(pass_times) * 1000:.1f} ms, transitions {len(moves)}")
    print(
        f"delivery of {args.transitions} transitions, 30 % of calls failing: {len(accepted)} delivered, "
        f"{sum(n - 1 for n in accepted.values())} duplicates, {calls[0]} calls, "
        f"{deliverer.failures} failed attempts, {drained:.1f} s"
    )


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--transitions", type=int, default=1000)
    return parser.parse_args(argv)


if __name__ == "__main__":
    asyncio.run(main(parse()))
