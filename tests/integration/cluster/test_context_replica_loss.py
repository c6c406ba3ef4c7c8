"""One of two replicas of outcomes, telemetry and the playground killed under
load through the gateway: the idempotent calls go on answering, every write
lands once in Postgres, and a playground run caught on the lost replica is
reported failed to its caller, never run a second time.

Each replica is an `outrider serve <context>` process killed with SIGKILL,
as in test_replica_loss: its connections die without a goodbye.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
from collections import Counter
from contextlib import AsyncExitStack
from datetime import UTC, datetime, timedelta

import asyncpg
import pytest

from outrider.client.telemetry import TelemetryPublisher
from outrider.v1 import telemetry_pb2, telemetry_pb2_grpc
from tests.harness import (
    NATS_ENGINE,
    NATS_SERVICE,
    bearer,
    eventually,
    gateway_client,
    internal_headers,
    make_settings,
    reserved_port,
    reset_nats,
    running,
    service_channel,
)
from tests.integration.cluster.support import connected_ports, replica, serving
from tests.integration.playground.scripted import Say, ScriptedModel
from tests.integration.playground.scripted import serving as served
from tests.integration.playground.support import RUN

pytestmark = pytest.mark.cluster

WORKERS = 4
BEFORE_KILL_S = 2.0
AFTER_KILL_S = 3.0
RUNS_IN_FLIGHT = 4
IN_FLIGHT_MODEL_S = 3.0


def nats_env(template) -> dict[str, str]:
    return {
        "NATS_URL": template.nats_url,
        "OUTRIDER_NATS_PASSWORD": NATS_SERVICE.password,
        "OUTRIDER_NATS_ENGINE_PASSWORD": NATS_ENGINE.password,
    }


async def fetch(template, database: str, sql: str, *args) -> list[asyncpg.Record]:
    db = await asyncpg.connect(template.raw_dsn(database))
    try:
        return await db.fetch(sql, *args)
    finally:
        await db.close()


async def test_facts_recorded_through_an_outcomes_replica_kill_land_once(template, database, tmp_path):
    await reset_nats(template.nats_url)
    ports = [reserved_port(), reserved_port()]
    settings = make_settings(template, database, OUTRIDER_OUTCOMES_ADDR=",".join(f"127.0.0.1:{port}" for port in ports))
    calls: Counter[str] = Counter()
    failures: list[str] = []
    recorded: list[str] = []
    with (
        replica("outcomes", template, database, ports[0], tmp_path, **nats_env(template)) as victim,
        replica("outcomes", template, database, ports[1], tmp_path, **nats_env(template)),
    ):
        for port in ports:
            await serving(port)
        stop = asyncio.Event()
        async with gateway_client(settings) as client:

            async def record(worker: int) -> None:
                n = 0
                while not stop.is_set():
                    subject = f"BK-{worker}-{n}"
                    # Two events of one booking: a lost second one leaves it "created".
                    for event in (
                        {"status": "created", "at": "2026-09-29T10:00:00Z", "sla_due_at": "2026-09-29T14:00:00Z"},
                        {"status": "assigned", "at": "2026-09-29T10:05:00Z"},
                    ):
                        reply = await client.post(
                            "/internal/facts",
                            headers=internal_headers(),
                            content=json.dumps({"subject_id": subject, **event}).encode(),
                        )
                        calls["facts"] += 1
                        if reply.status_code != 200:
                            failures.append(f"facts {reply.status_code} {reply.text[:120]}")
                        elif not reply.json()["changed"]:
                            # Stored by the lost replica before it went, and sent again.
                            calls["facts_repeated"] += 1
                    recorded.append(subject)
                    n += 1

            async def read() -> None:
                while not stop.is_set():
                    reply = await client.get("/admin/ai/conversation-metrics", headers=bearer(role=3))
                    calls["metrics"] += 1
                    if reply.status_code != 200:
                        failures.append(f"metrics {reply.status_code} {reply.text[:120]}")

            load = [
                *(asyncio.create_task(record(w)) for w in range(WORKERS)),
                *(asyncio.create_task(read()) for _ in range(WORKERS)),
            ]
            await asyncio.sleep(BEFORE_KILL_S)
            balanced = connected_ports(set(ports))
            os.kill(victim.pid, signal.SIGKILL)
            await asyncio.sleep(AFTER_KILL_S)
            stop.set()
            await asyncio.gather(*load)

    stored = await fetch(
        template,
        database,
        "select subject_id, facts from outcomes.subject_facts where subject_id = any($1::text[])",
        recorded,
    )
    complete = [
        row["subject_id"]
        for row in stored
        if json.loads(row["facts"])["status"]["value"] == "assigned" and "sla_due_at" in json.loads(row["facts"])
    ]
    figures = {
        "calls": dict(calls),
        "failed_to_caller": len(failures),
        "bookings": len(recorded),
        "landed": len(complete),
        "duplicated": len(stored) - len({row["subject_id"] for row in stored}),
    }
    print("outcomes replica loss figures:", json.dumps(figures))
    assert balanced == set(ports), figures
    assert failures == [], failures[:5]
    assert sorted(complete) == sorted(recorded), figures
    assert figures["duplicated"] == 0, figures


async def test_runs_ingested_through_a_telemetry_replica_kill_land_once(template, database, tmp_path):
    await reset_nats(template.nats_url)
    ports = [reserved_port(), reserved_port()]
    settings = make_settings(
        template, database, OUTRIDER_TELEMETRY_ADDR=",".join(f"127.0.0.1:{port}" for port in ports)
    )
    # A run held unacked by the lost replica is redelivered to the other
    # after the ack wait: short here, so the test sees it.
    ingest = {
        **nats_env(template),
        "OUTRIDER_TELEMETRY_ACK_WAIT_S": "2",
        "OUTRIDER_TELEMETRY_BATCH_WAIT_MS": "100",
        "OUTRIDER_TELEMETRY_BATCH_SIZE": "20",
    }
    calls: Counter[str] = Counter()
    failures: list[str] = []
    published: list[str] = []
    with (
        replica("telemetry", template, database, ports[0], tmp_path, **ingest) as victim,
        replica("telemetry", template, database, ports[1], tmp_path, **ingest),
    ):
        for port in ports:
            await serving(port)
        publisher = await TelemetryPublisher.connect(
            template.nats_url, user=NATS_ENGINE.name, password=NATS_ENGINE.password, timeout_s=10
        )
        stop = asyncio.Event()
        async with gateway_client(settings) as client:

            async def run_tasks() -> None:
                started = datetime.now(UTC)
                n = 0
                while not stop.is_set():
                    task_id = f"t-{n}"
                    await publisher.task_run(
                        agent_id="EXCEPTION_AGENT",
                        task_id=task_id,
                        task_type="stall_check",
                        status="succeeded",
                        started_at=started,
                        finished_at=started + timedelta(milliseconds=200),
                    )
                    published.append(task_id)
                    n += 1
                    await asyncio.sleep(0.005)

            async def read() -> None:
                while not stop.is_set():
                    reply = await client.get("/admin/ai/insights/series", headers=bearer(role=3))
                    calls["series"] += 1
                    if reply.status_code != 200:
                        failures.append(f"series {reply.status_code} {reply.text[:120]}")

            load = [asyncio.create_task(run_tasks()), *(asyncio.create_task(read()) for _ in range(WORKERS))]
            await asyncio.sleep(BEFORE_KILL_S)
            balanced = connected_ports(set(ports))
            os.kill(victim.pid, signal.SIGKILL)
            await asyncio.sleep(AFTER_KILL_S)
            stop.set()
            await asyncio.gather(*load)
        await publisher.close()

        async def written() -> list[asyncpg.Record]:
            return await fetch(
                template, database, "select task_id from telemetry.runs where agent_id = 'EXCEPTION_AGENT'"
            )

        rows = await eventually(
            written,
            lambda found: len(found) >= len(published),
            timeout=30,
            step=0.5,
            what="every published run written by the surviving replica",
        )
        async with service_channel(settings, "telemetry", address=f"127.0.0.1:{ports[1]}") as channel:
            survivor = await telemetry_pb2_grpc.TelemetryStub(channel).GetCounters(telemetry_pb2.GetCountersRequest())

    task_ids = [row["task_id"] for row in rows]
    figures = {
        "calls": dict(calls),
        "failed_to_caller": len(failures),
        "runs_published": len(published),
        "landed": len(set(task_ids)),
        "duplicated": len(task_ids) - len(set(task_ids)),
        "written_by_survivor": survivor.inserted,
        "redelivered_to_survivor": survivor.redelivered,
        "refused_as_written": survivor.duplicates,
    }
    print("telemetry replica loss figures:", json.dumps(figures))
    assert balanced == set(ports), figures
    assert failures == [], failures[:5]
    assert sorted(task_ids) == sorted(published), figures
    # The lost replica had taken its share of the stream before it went.
    assert survivor.inserted < len(published), figures


async def test_playground_reads_survive_a_replica_kill_and_a_run_on_it_fails_to_its_caller(
    template, database, tmp_path
):
    ports = [reserved_port(), reserved_port()]
    settings = make_settings(
        template, database, OUTRIDER_PLAYGROUND_ADDR=",".join(f"127.0.0.1:{port}" for port in ports)
    )
    # A model API per replica: which one a run's model call reaches says which
    # replica runs it.
    models = [ScriptedModel(Say("Done.", usage=(1, 1)), repeat_last=True) for _ in ports]
    body = {"agent_id": "CUSTOMER_AGENT", "prompt": "Where is booking 1001?"}
    calls: Counter[str] = Counter()
    failures: list[str] = []
    async with AsyncExitStack() as stack:
        urls = [await stack.enter_async_context(served(model.app())) for model in models]
        await stack.enter_async_context(running(settings, ["registry", "decisions"]))
        replicas = [
            stack.enter_context(
                replica(
                    "playground",
                    template,
                    database,
                    port,
                    tmp_path,
                    ANTHROPIC_API_KEY="test-anthropic-key",
                    ANTHROPIC_BASE_URL=url,
                    OUTRIDER_REGISTRY_ADDR=settings.addr("registry"),
                    OUTRIDER_DECISIONS_ADDR=settings.addr("decisions"),
                )
            )
            for port, url in zip(ports, urls, strict=True)
        ]
        for port in ports:
            await serving(port)
        client = await stack.enter_async_context(gateway_client(settings))
        earlier = []
        for n in range(2):
            reply = await client.post(RUN, json=body, headers=bearer(sub=f"earlier-{n}"))
            assert reply.status_code == 200, reply.text
            earlier.append(reply.json()["id"])
        before = [len(model.requests) for model in models]
        # Long enough a model call that the runs are still going at the kill.
        for model in models:
            model.script(Say("Done.", usage=(1, 1), delay_s=IN_FLIGHT_MODEL_S), repeat_last=True)
        stop = asyncio.Event()

        async def read() -> None:
            while not stop.is_set():
                for path, kind in (
                    ("/admin/ai/playground/runs", "list_runs"),
                    (f"/admin/ai/playground/runs/{earlier[0]}", "get_run"),
                ):
                    reply = await client.get(path, headers=bearer(role=3))
                    calls[kind] += 1
                    if reply.status_code != 200:
                        failures.append(f"{kind} {reply.status_code} {reply.text[:120]}")

        readers = [asyncio.create_task(read()) for _ in range(WORKERS)]
        runs = [
            asyncio.create_task(client.post(RUN, json=body, headers=bearer(sub=f"during-{n}")))
            for n in range(RUNS_IN_FLIGHT)
        ]

        async def model_calls() -> list[int]:
            return [len(model.requests) - b for model, b in zip(models, before, strict=True)]

        await eventually(
            model_calls,
            lambda started: sum(started) == RUNS_IN_FLIGHT,
            timeout=20,
            what="every run's model call under way",
        )
        at_kill = await model_calls()
        os.kill(replicas[0].pid, signal.SIGKILL)
        answers = await asyncio.gather(*runs)
        await asyncio.sleep(AFTER_KILL_S)
        stop.set()
        await asyncio.gather(*readers)
        after = await model_calls()

    succeeded = [answer.json()["id"] for answer in answers if answer.status_code == 200]
    failed = [answer for answer in answers if answer.status_code != 200]
    stored = await fetch(template, database, "select id::text as id, status from playground.runs")
    finished = sorted(row["id"] for row in stored if row["status"] == "finished")
    figures = {
        "calls": dict(calls),
        "failed_to_caller": len(failures),
        "runs": RUNS_IN_FLIGHT,
        "runs_on_killed_replica": at_kill[0],
        "runs_failed_to_caller": len(failed),
        "model_calls_after_kill": sum(after) - sum(at_kill),
        "runs_stored": len(stored),
        "runs_finished": len(finished),
    }
    print("playground replica loss figures:", json.dumps(figures))
    assert failures == [], failures[:5]
    # Each run caught on the lost replica fails to its caller, as unavailable,
    # and is not sent to the other replica: no model call after the kill.
    assert at_kill[0] >= 1 and len(failed) == at_kill[0], figures
    assert {(answer.status_code, answer.json()["error"]["code"]) for answer in failed} == {
        (503, "UPSTREAM_UNAVAILABLE")
    }, figures
    assert after == at_kill, figures
    # Every admitted run is stored once; the lost replica's stay `running`,
    # shown interrupted once past their deadline.
    assert finished == sorted([*earlier, *succeeded]), figures
    assert len(stored) == len(earlier) + RUNS_IN_FLIGHT, figures
    assert [row["status"] for row in stored].count("running") == at_kill[0], figures
