"""A NATS server lost mid-stream: every run and every fact published while it
is gone and after it is back lands in Postgres exactly once.

The server killed leads both streams, the worst one to lose: publishes go
unanswered until the other two elect new leaders, and the consumers' pull
requests with them. Publishers retry with their message
ids, the consumers pull again, and nothing may be missing or doubled.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import asyncpg
import pytest

from outrider.client.telemetry import TelemetryPublisher
from outrider.publishing import publish_once
from tests.harness import eventually, make_settings
from tests.integration.cluster.support import NatsCluster, replicas

pytestmark = pytest.mark.cluster

RUNS = 600
FACTS = 300
AGENT = "CLUSTER_AGENT"
PUBLISHERS = 8
# Publishes are paced so the stream spans the node's loss and its return.
PACE_S = 0.01
DOWN_S = 3.0


@dataclass
class Tally:
    sent: int = 0
    duplicate_acks: int = 0
    # The longest one publish took, retries included: how long the loss
    # held a publisher up.
    longest_s: float = 0.0
    failed: list[str] = field(default_factory=list)


async def publish_runs(publisher: TelemetryPublisher, ids: asyncio.Queue[int], tally: Tally) -> None:
    started = datetime(2026, 1, 1, tzinfo=UTC)
    while not ids.empty():
        n = ids.get_nowait()
        began = time.monotonic()
        try:
            await publisher.task_run(
                agent_id=AGENT,
                task_id=f"run-{n}",
                task_type="cluster_check",
                status="succeeded",
                started_at=started,
                finished_at=started + timedelta(milliseconds=n),
            )
            tally.sent += 1
        except Exception as error:  # noqa: BLE001 - counted: the test fails on any
            tally.failed.append(f"run-{n}: {type(error).__name__}")
        tally.longest_s = max(tally.longest_s, time.monotonic() - began)
        await asyncio.sleep(PACE_S)


async def publish_facts(js, ids: asyncio.Queue[int], tally: Tally) -> None:
    while not ids.empty():
        n = ids.get_nowait()
        body = json.dumps({"subject_id": f"cluster-{n}", "at": "2026-01-01T10:00:00Z", "status": "assigned"})
        began = time.monotonic()
        try:
            ack = await publish_once(js, "facts.booking", body.encode(), msg_id=f"cluster-{n}")
            tally.sent += 1
            tally.duplicate_acks += bool(ack.duplicate)
        except Exception as error:  # noqa: BLE001 - counted: the test fails on any
            tally.failed.append(f"cluster-{n}: {type(error).__name__}")
        tally.longest_s = max(tally.longest_s, time.monotonic() - began)
        await asyncio.sleep(PACE_S)


def queue_of(count: int) -> asyncio.Queue[int]:
    ids: asyncio.Queue[int] = asyncio.Queue()
    for n in range(count):
        ids.put_nowait(n)
    return ids


async def test_a_nats_node_lost_mid_stream_loses_and_doubles_nothing(cluster: NatsCluster, template, database):
    settings = make_settings(
        template, database, NATS_URL=cluster.url, OUTRIDER_NATS_REPLICAS="3", OUTRIDER_TELEMETRY_BATCH_WAIT_MS="100"
    )
    runs, facts = Tally(), Tally()
    async with replicas(settings, ["telemetry", "outcomes"], 2):
        watcher = await cluster.service()
        engine = await cluster.engine()
        publisher = TelemetryPublisher(engine)
        try:
            js = watcher.jetstream()
            for stream in ("TELEMETRY", "FACTS"):
                info = await js.stream_info(stream)
                assert info.config.num_replicas == 3 and len(info.cluster.replicas or []) == 2, info.cluster
            victim = (await js.stream_info("TELEMETRY")).cluster.leader
            await cluster.lead(watcher, "FACTS", victim)

            run_ids, fact_ids = queue_of(RUNS), queue_of(FACTS)
            engine_js = engine.jetstream()
            publishing = [
                *(asyncio.create_task(publish_runs(publisher, run_ids, runs)) for _ in range(PUBLISHERS)),
                *(asyncio.create_task(publish_facts(engine_js, fact_ids, facts)) for _ in range(PUBLISHERS // 2)),
            ]
            await eventually(
                lambda: _value(runs.sent),
                lambda sent: sent >= RUNS // 3,
                timeout=30,
                what="a third of the runs published",
            )
            sent_before_kill = (runs.sent, facts.sent)
            cluster.kill(victim)
            await asyncio.sleep(DOWN_S)
            sent_while_down = (runs.sent - sent_before_kill[0], facts.sent - sent_before_kill[1])
            cluster.restart(victim)
            await asyncio.gather(*publishing)

            assert (runs.failed, facts.failed) == ([], [])
            assert (runs.sent, facts.sent) == (RUNS, FACTS)
            # Numbered as stored: a work queue holds a message only until it is consumed.
            stored = {stream: (await js.stream_info(stream)).state.last_seq for stream in ("TELEMETRY", "FACTS")}
            db = await asyncpg.connect(template.raw_dsn(database))
            try:
                landed_runs = await eventually(
                    lambda: db.fetchval("select count(*) from telemetry.runs where agent_id = $1", AGENT),
                    lambda count: count >= RUNS,
                    timeout=60,
                    what="every run in Postgres",
                )
                landed_facts = await eventually(
                    lambda: db.fetchval(
                        "select count(*) from outcomes.subject_facts"
                        " where subject_id like 'cluster-%' and facts->'status'->>'value' = 'assigned'"
                    ),
                    lambda count: count >= FACTS,
                    timeout=60,
                    what="every fact in Postgres",
                )
                distinct_runs = await db.fetchval(
                    "select count(distinct task_id) from telemetry.runs where agent_id = $1", AGENT
                )
            finally:
                await db.close()
        finally:
            await publisher.close()
            await watcher.close()

    figures = {
        "victim": victim,
        "runs": {
            "sent": runs.sent,
            "sent_while_down": sent_while_down[0],
            "stored_in_stream": stored["TELEMETRY"],
            "landed": landed_runs,
            "duplicated": landed_runs - distinct_runs,
            "longest_publish_s": round(runs.longest_s, 2),
        },
        "facts": {
            "sent": facts.sent,
            "sent_while_down": sent_while_down[1],
            "stored_in_stream": stored["FACTS"],
            "landed": landed_facts,
            "duplicate_acks": facts.duplicate_acks,
            "longest_publish_s": round(facts.longest_s, 2),
        },
    }
    print("node loss figures:", json.dumps(figures))
    # The stream stored each message once (a retry of one stored after all
    # was dropped by its id), and Postgres holds each exactly once.
    assert stored == {"TELEMETRY": RUNS, "FACTS": FACTS}, figures
    assert (landed_runs, distinct_runs, landed_facts) == (RUNS, RUNS, FACTS), figures
    # The loss fell mid-stream: both streams had more to publish when the
    # server went, so what followed rode through its loss and return.
    assert sent_before_kill[0] < RUNS and sent_before_kill[1] < FACTS, figures


async def _value(value: int) -> int:
    return value
