"""The outcomes context SIGKILLed while an alert webhook POST is in flight,
then started again, several times over, against a receiver slow to answer:
every transition reaches the receiver; one received twice came under the
same X-Outrider-Delivery id both times, so a receiver that drops repeated
ids acts on each once; and only the transitions in flight at a kill came
twice, the ones whose 2xx was recorded never."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from services.common.db import context_engine
from services.common.settings import CONTEXTS, Settings
from services.outcomes.alerting.job import Alerter
from services.outcomes.rules.alerts import JudgedWindow, Thresholds
from tests.harness import INTERNAL_KEY, JWT_SECRET, NATS_SERVICE, SERVICE_KEY, eventually
from tests.integration.outcomes.test_alerts import SECRET, Windows
from tests.integration.telemetry.test_crash import serving

ROOT = Path(__file__).resolve().parents[3]
AGENTS = 8  # each fires and resolves: 16 transitions
# The receiver takes this long over each answer, so a kill finds POSTs in flight.
ANSWER_S = 0.2
# The calls held unanswered until the process that sent them is killed.
HELD_CALLS = (3, 8, 12)


@dataclass
class Receiver:
    """Acts on each body as it arrives, then answers 204 after ANSWER_S; a
    held call is answered only once the test releases it, by which time its
    sender is dead."""

    calls: int = 0
    received: list[tuple[str, str, str]] = field(default_factory=list)  # (delivery id, alert id, transition)
    held: dict[int, threading.Event] = field(default_factory=lambda: {n: threading.Event() for n in HELD_CALLS})
    release: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)


@pytest.fixture
def receiver() -> Iterator[tuple[Receiver, str]]:
    state = Receiver()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            with state.lock:
                state.calls += 1
                n = state.calls
                state.received.append((self.headers["X-Outrider-Delivery"], body["alert"]["id"], body["transition"]))
            if n in state.held:
                state.held[n].set()
                state.release.wait(30)
            else:
                time.sleep(ANSWER_S)
            try:
                self.send_response(204)
                self.end_headers()
            except OSError:
                pass  # the sender was killed while it waited

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state, f"http://127.0.0.1:{server.server_port}/hook"
    finally:
        state.release.set()
        server.shutdown()


def outcomes_env(settings: Settings, url: str) -> dict[str, str]:
    return {
        **os.environ,
        "DATABASE_URL": settings.database_url or "",
        "NATS_URL": settings.nats_url or "",
        "OUTRIDER_NATS_PASSWORD": NATS_SERVICE.password,
        "OUTRIDER_INTERNAL_KEY": INTERNAL_KEY,
        "OUTRIDER_SERVICE_KEY": SERVICE_KEY,
        "OUTRIDER_JWT_SECRET": JWT_SECRET,
        "OUTRIDER_DATA_DIR": str(settings.data_dir),
        **{f"OUTRIDER_{context.upper()}_ADDR": settings.addr(context) for context in CONTEXTS},
        "OUTRIDER_ALERT_WEBHOOK_URL": url,
        "OUTRIDER_ALERT_WEBHOOK_SECRET": SECRET,
        # No pass of its own during the test: the transitions are the test's.
        "OUTRIDER_ALERT_INTERVAL_S": "86400",
    }


async def start_outcomes(settings: Settings, url: str, log: Path) -> asyncio.subprocess.Process:
    with log.open("ab") as sink:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "launcher.cli",
            "serve",
            "outcomes",
            cwd=ROOT,
            env=outcomes_env(settings, url),
            stdout=sink,
            stderr=sink,
        )
    await eventually(
        lambda: serving(settings.addr("outcomes")), timeout=30, what=f"outcomes subprocess serving (log: {log})"
    )
    return process


async def outbox(settings: Settings) -> dict[str, tuple[int, bool]]:
    """Each outbox row's attempts, and whether it is marked delivered."""
    engine = context_engine(settings.database_url, "outcomes")
    try:
        async with engine.connect() as conn:
            rows = await conn.exec_driver_sql(
                "select cast(id as text), attempts, delivered_at is not null from alert_outbox"
            )
            return {row[0]: (row[1], row[2]) for row in rows}
    finally:
        await engine.dispose()


async def test_sigkill_mid_delivery_repeats_only_the_transitions_in_flight_under_their_ids(
    settings, receiver, tmp_path
):
    state, url = receiver
    engine = context_engine(settings.database_url, "outcomes")
    windows = Windows()
    alerter = Alerter(engine=engine, sources=windows, thresholds=Thresholds())
    try:
        windows.items = [JudgedWindow(f"agent-{i}", "refund", 100, 50, 100, 85) for i in range(AGENTS)]
        await alerter.evaluate()
        windows.items = []
        await alerter.evaluate()
    finally:
        await engine.dispose()
    queued = await outbox(settings)
    assert len(queued) == 2 * AGENTS

    log = tmp_path / "outcomes.log"
    process = await start_outcomes(settings, url, log)
    try:
        for n in HELD_CALLS:
            await asyncio.to_thread(state.held[n].wait, 60)
            assert state.held[n].is_set(), f"call {n} never came (log: {log})"
            process.send_signal(signal.SIGKILL)
            assert await process.wait() == -signal.SIGKILL
            process = await start_outcomes(settings, url, log)

        async def all_delivered() -> bool:
            return all(delivered for _, delivered in (await outbox(settings)).values())

        await eventually(all_delivered, timeout=60, what=f"every transition marked delivered (log: {log})")
    finally:
        state.release.set()
        if process.returncode is None:
            process.terminate()
            await process.wait()

    times = Counter(delivery for delivery, _, _ in state.received)
    assert set(times) == set(queued)
    # A transition came under one id however often it came.
    ids_per_transition: dict[tuple[str, str], set[str]] = {}
    for delivery, alert, transition in state.received:
        ids_per_transition.setdefault((alert, transition), set()).add(delivery)
    assert len(ids_per_transition) == 2 * AGENTS
    assert all(len(ids) == 1 for ids in ids_per_transition.values())
    # What came twice is exactly what each killed process had in flight:
    # its 2xx was never recorded. Nothing whose 2xx was recorded came again.
    in_flight = {state.received[n - 1][0] for n in HELD_CALLS}
    redelivered = {delivery for delivery, count in times.items() if count > 1}
    assert redelivered == in_flight and len(redelivered) == len(HELD_CALLS)
    assert set(times.values()) == {1, 2}
    assert state.calls == 2 * AGENTS + len(HELD_CALLS)
    # The killed attempts died with their transactions: each row records the one POST it was marked by.
    assert set((await outbox(settings)).values()) == {(1, True)}
