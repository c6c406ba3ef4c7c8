"""GET /admin/ai/insights end to end: runs from JetStream, agents from the
registry, outcomes from decision memory, live state from the bucket."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import asyncpg
import pytest
from nats.js.api import KeyValueConfig, StorageType

from outrider.rpc import keyed_channel as channel
from outrider.v1 import decisions_pb2, decisions_pb2_grpc
from outrider.wire import json_bytes
from services.common.nats import HEARTBEAT_BUCKET
from tests.harness import (
    INTERNAL_KEY,
    bearer,
    eventually,
    gateway_client,
    running,
    with_env,
)
from tests.integration.telemetry.support import (
    broker,
    counters,
    execute,
    heartbeat,
    task,
)


async def register(stack, database, *agents: tuple[str, str]) -> None:
    conn = await asyncpg.connect(stack.raw_dsn(database), server_settings={"search_path": "registry"})
    try:
        for agent_id, status in agents:
            await conn.execute(
                "insert into agents (id, name, runtime, status) values ($1, $1, 'engine', $2)", agent_id, status
            )
    finally:
        await conn.close()


async def insights(settings, query: str = "") -> dict:
    async with gateway_client(settings) as client:
        reply = await client.get(f"/admin/ai/insights{query}", headers=bearer(role=3))
    assert reply.status_code == 200, reply.text
    return reply.json()


def by_agent(body: dict) -> dict[str, dict]:
    return {a["agent_id"]: a for a in body["agents"]}


async def test_figures_match_hand_computed_values(settings, template, database):
    fast = with_env(settings, telemetry_batch_wait_ms=100, telemetry_ack_wait_s=5)
    await register(template, database, ("EXCEPTION_AGENT", "live"), ("HUB_AGENT", "live"), ("OLD_AGENT", "retired"))
    # A run that started three days ago, reported just now: inside a 7-day
    # window, outside a 1-day one, because a run is placed by its own time.
    await execute(
        template,
        database,
        "insert into runs (agent_id, task_id, task_type, status, started_at, finished_at, duration_ms)"
        " values ('EXCEPTION_AGENT', 'old-1', 'stall_response', 'failed',"
        " now() - interval '3 days', now() - interval '3 days' + interval '5.9 seconds', 5900)",
    )
    first_start = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=10)
    async with running(fast, ["registry", "telemetry"]), broker(fast) as (nc, js):
        for n, (ms, status) in enumerate(
            [(100, "succeeded"), (200, "succeeded"), (300, "failed"), (400, "succeeded"), (1000, "succeeded")]
        ):
            started = first_start + timedelta(seconds=n)
            await js.publish("telemetry.task", task("EXCEPTION_AGENT", f"t-{n}", ms=ms, status=status, started=started))
        await js.publish("telemetry.task", task("UNLISTED_AGENT", "u-1", ms=50))
        await nc.publish("telemetry.agent", heartbeat("EXCEPTION_AGENT", "busy"))
        await nc.flush()

        async def landed() -> bool:
            seen = await counters(fast)
            return seen["inserted"] == 6 and seen["heartbeats"] == 1

        await eventually(landed, what="six runs and a heartbeat")
        before = datetime.now(UTC)
        day = await insights(fast, "?days=1")
        week = await insights(fast, "?days=7")
        default = await insights(fast)
        # Four to two days back holds only the old failed run.
        ago = {n: (before - timedelta(days=n)).strftime("%Y-%m-%dT%H:%M:%SZ") for n in (4, 2)}
        ranged = await insights(fast, f"?from={ago[4]}&to={ago[2]}")

    assert day["window_days"] == 1 and week["window_days"] == 7 and default["window_days"] == 7
    assert day["receiving"] is True
    agents = by_agent(day)
    assert sorted(agents) == ["EXCEPTION_AGENT", "HUB_AGENT", "UNLISTED_AGENT"]

    exception = agents["EXCEPTION_AGENT"]
    assert (exception["runs"], exception["failures"]) == (5, 1)
    # (100 + 200 + 300 + 400 + 1000) / 5
    assert exception["avg_ms"] == pytest.approx(400.0)
    # Continuous p95 of 100, 200, 300, 400, 1000: rank 0.95 * 4 = 3.8,
    # so 400 + 0.8 * (1000 - 400).
    assert exception["p95_ms"] == pytest.approx(880.0)
    assert exception["state"] == "busy"
    assert exception["registered"] is True
    # The latest start of the agent's runs, as an instant: the engine's naive
    # times are read as UTC, and when the runs arrived does not enter into it.
    last_run = datetime.fromisoformat(exception["last_run_at"])
    assert last_run == first_start + timedelta(seconds=4)
    assert abs(datetime.fromisoformat(exception["last_heartbeat_at"]) - before) < timedelta(minutes=1)

    assert agents["HUB_AGENT"] == {
        "agent_id": "HUB_AGENT",
        "runs": 0,
        "failures": 0,
        "avg_ms": None,
        "p95_ms": None,
        "last_run_at": None,
        "state": "silent",
        "last_heartbeat_at": None,
        "registered": True,
        "model_calls": 0,
        "input_tokens": 0,
        "output_tokens": 0,
        "estimated_cost": None,
    }
    unlisted = agents["UNLISTED_AGENT"]
    assert (unlisted["runs"], unlisted["avg_ms"], unlisted["p95_ms"], unlisted["registered"]) == (1, 50.0, 50.0, False)

    assert ranged["window_days"] == 0
    assert (ranged["window_start"], ranged["window_end"]) == (
        ago[4].replace("Z", "+00:00"),
        ago[2].replace("Z", "+00:00"),
    )
    old = by_agent(ranged)
    assert (old["EXCEPTION_AGENT"]["runs"], old["EXCEPTION_AGENT"]["failures"]) == (1, 1)
    assert "UNLISTED_AGENT" not in old

    weekly = by_agent(week)["EXCEPTION_AGENT"]
    assert (weekly["runs"], weekly["failures"]) == (6, 2)
    # (2000 + 5900) / 6
    assert weekly["avg_ms"] == pytest.approx(7900 / 6)
    # Six values 100, 200, 300, 400, 1000, 5900: rank 0.95 * 5 = 4.75,
    # so 1000 + 0.75 * (5900 - 1000).
    assert weekly["p95_ms"] == pytest.approx(4675.0)
    assert by_agent(default)["EXCEPTION_AGENT"]["runs"] == 6

    # Decision memory is not running: the page still answers, and says so.
    assert day["decisions"] == []
    assert day["decisions_available"] is False
    assert [d["source"] for d in day["degraded"]] == ["decisions"]
    assert "UNAVAILABLE" in day["degraded"][0]["reason"]


async def test_no_traffic_reads_not_receiving_with_silent_agents(settings, template, database):
    await register(template, database, ("EXCEPTION_AGENT", "live"))
    # The last run arrived ten minutes ago: history, not a live pipe.
    await execute(
        template,
        database,
        "insert into runs (agent_id, task_id, task_type, status, started_at, finished_at, duration_ms,"
        " received_at) values ('EXCEPTION_AGENT', 'x-1', 'stall_response', 'succeeded',"
        " now() - interval '11 minutes', now() - interval '11 minutes' + interval '1 second', 1000,"
        " now() - interval '10 minutes')",
    )
    async with running(settings, ["registry", "telemetry"]):
        body = await insights(settings, "?days=1")
    assert body["receiving"] is False
    assert body["last_received_at"] is not None
    agent = by_agent(body)["EXCEPTION_AGENT"]
    assert (agent["runs"], agent["state"]) == (1, "silent")


async def test_a_fresh_install_lists_the_seeded_fleet_silent_and_not_receiving(settings):
    # The registry seeds its inventory on first start; no agent has reported.
    async with running(settings, ["registry", "telemetry"]):
        body = await insights(settings)
    assert body["receiving"] is False
    assert body["last_received_at"] is None
    assert body["agents"], "the seeded agents are listed, not hidden"
    for agent in body["agents"]:
        assert (agent["runs"], agent["avg_ms"], agent["state"], agent["registered"]) == (0, None, "silent", True)


async def test_an_agent_whose_heartbeat_expired_turns_silent(settings, template, database):
    # The production bucket keeps a beat 5 minutes; the same bucket made with
    # a 1-second TTL shows the expiry without the wait (the service finds it
    # already there and keeps it).
    async with broker(settings) as (_, js):
        await js.create_key_value(KeyValueConfig(bucket=HEARTBEAT_BUCKET, ttl=1, storage=StorageType.FILE, history=1))
    await register(template, database, ("DISPATCH_AGENT", "live"))
    async with running(settings, ["registry", "telemetry"]), broker(settings) as (nc, _):
        await nc.publish("telemetry.agent", heartbeat("DISPATCH_AGENT", "idle"))
        await nc.flush()

        async def state_is(expected: str) -> bool:
            body = await insights(settings)
            return by_agent(body)["DISPATCH_AGENT"]["state"] == expected

        await eventually(lambda: state_is("idle"), what="heartbeat seen")
        # While the beat is live, the pipe counts as connected without a run.
        assert (await insights(settings))["receiving"] is True
        await asyncio.sleep(1.0)
        await eventually(lambda: state_is("silent"), what="heartbeat expired")
        assert (await insights(settings))["receiving"] is False


async def test_decisions_by_type_and_outcome_come_from_decision_memory(settings):
    async with running(settings, ["registry", "decisions", "telemetry"]):
        async with channel(settings.addr("decisions"), INTERNAL_KEY) as ch:
            memory = decisions_pb2_grpc.DecisionsStub(ch)
            ids = []
            for decision_type, subject in (
                ("stall_response", "b-1"),
                ("stall_response", "b-2"),
                ("assignment_failure", "b-3"),
            ):
                reply = await memory.RecordDecision(
                    decisions_pb2.RecordDecisionRequest(
                        decision_type=decision_type,
                        agent_id="EXCEPTION_AGENT",
                        subject_id=subject,
                        context_json=json_bytes({"minutes_stalled": 12, "subject": subject}),
                        action="reassign",
                        confidence=0.8,
                        model="claude-sonnet-4-5",
                    )
                )
                ids.append(reply.id)
            await memory.SetOutcome(decisions_pb2.SetOutcomeRequest(id=ids[0], outcome="success", reason="delivered"))
        body = await insights(settings, "?days=1")
    assert body["decisions_available"] is True
    assert body["degraded"] == []
    assert body["decisions"] == [
        {"decision_type": "assignment_failure", "outcome": "pending", "count": 1},
        {"decision_type": "stall_response", "outcome": "pending", "count": 1},
        {"decision_type": "stall_response", "outcome": "success", "count": 1},
    ]


def _hour(instant: datetime) -> datetime:
    """The start of the hour-wide series bucket holding `instant`."""
    return datetime.fromtimestamp(int(instant.timestamp()) // 3600 * 3600, tz=UTC)


async def test_runs_reported_hours_late_are_placed_by_when_they_started(settings, template, database):
    # The demo's case: an afternoon of runs, every one of them received now.
    now = datetime.now(UTC).replace(microsecond=0)
    starts = {
        "EXCEPTION_AGENT": [now - timedelta(hours=hours, minutes=20) for hours in (6, 6, 3, 1)],
        "DISPATCH_AGENT": [now - timedelta(hours=5, minutes=20)],
    }
    fast = with_env(settings, telemetry_batch_wait_ms=100, telemetry_ack_wait_s=5)
    async with running(fast, ["registry", "telemetry"]), broker(fast) as (_, js):
        for agent_id, instants in starts.items():
            for n, started in enumerate(instants):
                await js.publish("telemetry.task", task(agent_id, f"late-{n}", started=started, ms=2000))
        await eventually(lambda: counters(fast), lambda seen: seen["inserted"] == 5, what="five late runs")
        async with gateway_client(fast) as client:
            reply = await client.get("/admin/ai/insights/series?days=1", headers=bearer(role=3))
        body = await insights(fast, "?days=1")
    assert reply.status_code == 200, reply.text
    points = {agent["agent_id"]: agent["points"] for agent in reply.json()["agents"]}
    filled = {
        agent_id: {datetime.fromisoformat(p["start"]): p["runs"] for p in agent_points if p["runs"]}
        for agent_id, agent_points in points.items()
    }
    assert filled == {
        "DISPATCH_AGENT": {_hour(starts["DISPATCH_AGENT"][0]): 1},
        "EXCEPTION_AGENT": {
            _hour(starts["EXCEPTION_AGENT"][0]): 2,
            _hour(starts["EXCEPTION_AGENT"][2]): 1,
            _hour(starts["EXCEPTION_AGENT"][3]): 1,
        },
    }
    # The hour they were all received in holds none of them.
    assert points["EXCEPTION_AGENT"][-1]["runs"] == 0
    agents = by_agent(body)
    assert datetime.fromisoformat(agents["EXCEPTION_AGENT"]["last_run_at"]) == starts["EXCEPTION_AGENT"][3]
    assert datetime.fromisoformat(agents["DISPATCH_AGENT"]["last_run_at"]) == starts["DISPATCH_AGENT"][0]
    assert (agents["EXCEPTION_AGENT"]["runs"], agents["EXCEPTION_AGENT"]["avg_ms"]) == (4, 2000.0)
    # Received now, whatever they say of themselves: the pipe is live.
    assert body["receiving"] is True
