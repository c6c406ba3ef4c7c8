"""A context replica killed under load: the gateway's and an engine's
idempotent calls go on succeeding on the other replica, and no write is lost
or doubled.

Both replicas are `outrider serve <context>` processes, and one is killed
with SIGKILL mid-load: its connections die without a goodbye, calls in
flight on it fail UNAVAILABLE, and the balanced channel must retry the
idempotent ones on the other replica and send no new call to the dead one.
A write is not retried by the channel (the dead replica may have committed
it); the engine's recorder retries it with the decision's own id, which the
context stores once.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import time
from collections import Counter

import asyncpg
import pytest

from outrider.client import DecisionRecorder, PrecedentClient
from outrider.rpc import keyed_channel
from outrider.v1 import registry_pb2, registry_pb2_grpc
from tests.harness import INTERNAL_KEY, bearer, gateway_client, make_settings, reserved_port
from tests.integration.cluster.support import connected_ports, replica, serving

pytestmark = pytest.mark.cluster

WORKERS = 4
BEFORE_KILL_S = 2.0
AFTER_KILL_S = 3.0


async def test_idempotent_calls_survive_a_replica_killed_under_load(template, database, tmp_path):
    ports = [reserved_port(), reserved_port()]
    settings = make_settings(template, database, OUTRIDER_REGISTRY_ADDR=",".join(f"127.0.0.1:{port}" for port in ports))
    with (
        replica("registry", template, database, ports[0], tmp_path) as victim,
        replica("registry", template, database, ports[1], tmp_path),
    ):
        for port in ports:
            await serving(port)
        engine_channel = keyed_channel(settings.addr("registry"), INTERNAL_KEY)
        snapshots = registry_pb2_grpc.RegistryStub(engine_channel)
        calls: Counter[str] = Counter()
        failures: list[str] = []
        stop = asyncio.Event()
        killed_at: list[float] = []
        async with gateway_client(settings) as client:

            async def through_gateway() -> None:
                while not stop.is_set():
                    reply = await client.get("/admin/ai/agents", headers=bearer(role=3))
                    calls["gateway" + ("_after_kill" if killed_at else "")] += 1
                    if reply.status_code != 200:
                        failures.append(f"gateway {reply.status_code} {reply.text[:120]}")

            async def from_engine() -> None:
                while not stop.is_set():
                    try:
                        await snapshots.GetSnapshot(registry_pb2.GetSnapshotRequest(), timeout=5)
                    except Exception as error:  # noqa: BLE001 - counted: the test fails on any
                        failures.append(f"engine {type(error).__name__}: {error}"[:200])
                    calls["engine" + ("_after_kill" if killed_at else "")] += 1

            load = [asyncio.create_task(work()) for work in (through_gateway, from_engine) for _ in range(WORKERS)]
            await asyncio.sleep(BEFORE_KILL_S)
            # Round robin holds a connection to every replica; the default
            # policy (pick first) would hold one.
            balanced = connected_ports(set(ports))
            os.kill(victim.pid, signal.SIGKILL)
            killed_at.append(time.monotonic())
            await asyncio.sleep(AFTER_KILL_S)
            stop.set()
            await asyncio.gather(*load)
        await engine_channel.close()

    figures = {"calls": dict(calls), "failed_to_caller": len(failures), "replicas_connected": len(balanced)}
    print("replica loss figures:", json.dumps(figures))
    assert balanced == set(ports), figures
    assert failures == [], failures[:5]
    assert calls["gateway_after_kill"] > 0 and calls["engine_after_kill"] > 0, figures


async def test_decisions_recorded_through_a_replica_kill_are_stored_once(template, database, tmp_path):
    ports = [reserved_port(), reserved_port()]
    address = ",".join(f"127.0.0.1:{port}" for port in ports)
    decided: list[str] = []
    searches: Counter[str] = Counter()
    with (
        replica("decisions", template, database, ports[0], tmp_path) as victim,
        replica("decisions", template, database, ports[1], tmp_path),
    ):
        for port in ports:
            await serving(port)
        recorder = DecisionRecorder(address, INTERNAL_KEY, call_timeout_s=2.0)
        precedents = PrecedentClient(address, INTERNAL_KEY, timeout_s=5.0)
        stop = asyncio.Event()

        async def record() -> None:
            n = 0
            while not stop.is_set():
                decided.append(
                    recorder.record(
                        decision_type="stall_response",
                        agent_id="EXCEPTION_AGENT",
                        subject_id=f"BK-{n}",
                        context={"stall_minutes": n % 30, "zone": f"z{n % 4}"},
                        action="reassign",
                        confidence=0.8,
                    )
                )
                n += 1
                await asyncio.sleep(0.01)

        async def search() -> None:
            while not stop.is_set():
                answer = await precedents.precedents("stall_response", {"stall_minutes": 12, "zone": "z1"})
                searches["answered" if answer.available else "failed"] += 1

        load = [asyncio.create_task(record()), *(asyncio.create_task(search()) for _ in range(WORKERS))]
        await asyncio.sleep(BEFORE_KILL_S)
        os.kill(victim.pid, signal.SIGKILL)
        await asyncio.sleep(AFTER_KILL_S)
        stop.set()
        await asyncio.gather(*load)
        assert await recorder.flush(30.0)
        counters = recorder.counters
        await recorder.close()
        await precedents.close()

    db = await asyncpg.connect(template.raw_dsn(database))
    try:
        stored = await db.fetch(
            "select id::text as id from decisions.decisions where id::text = any($1::text[])", decided
        )
    finally:
        await db.close()
    ids = [row["id"] for row in stored]
    # Stored twice cannot happen (the id is the key); what counts is that a
    # retried record was stored, and nothing more than what was recorded.
    figures = {
        "decisions_recorded": len(decided),
        "stored": len(ids),
        "retried_by_recorder": counters.retried,
        "dropped": dict(counters.dropped),
        "searches": dict(searches),
    }
    print("decisions replica loss figures:", json.dumps(figures))
    assert counters.dropped == Counter(), figures
    assert sorted(ids) == sorted(decided), figures
    assert searches["failed"] == 0 and searches["answered"] > 0, figures
