"""The sweeper against a real decisions context: rules, replicas, the timer, the window."""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime, timedelta

import asyncpg
import pytest
from google.protobuf.timestamp_pb2 import Timestamp

from outrider.rpc import keyed_channel as channel
from outrider.v1 import (
    decisions_pb2,
    decisions_pb2_grpc,
    outcomes_pb2,
    outcomes_pb2_grpc,
)
from outrider.wire import json_bytes
from services.common.runtime import ContextServer
from tests.harness import (
    INTERNAL_KEY,
    bearer,
    eventually,
    gateway_client,
    internal_headers,
    make_settings,
    running,
    with_env,
)
from tests.integration.outcomes.helpers import event_bytes

NOW = datetime.now(UTC)


def ago(**delta: float) -> datetime:
    return NOW - timedelta(**delta)


def iso(moment: datetime) -> str:
    return moment.isoformat()


async def record(
    decisions: decisions_pb2_grpc.DecisionsStub,
    decision_type: str,
    subject_id: str,
    decided_at: datetime,
    model: str = "m1",
) -> str:
    stamp = Timestamp()
    stamp.FromDatetime(decided_at)
    reply = await decisions.RecordDecision(
        decisions_pb2.RecordDecisionRequest(
            id=str(uuid.uuid4()),
            decision_type=decision_type,
            agent_id="agent-1",
            subject_id=subject_id,
            context_json=json_bytes({"subject": subject_id, "kind": decision_type}),
            action="nudge rider",
            confidence=0.8,
            model=model,
            decided_at=stamp,
        )
    )
    return reply.id


async def decisions_table(template, database: str) -> asyncpg.Connection:
    return await asyncpg.connect(template.raw_dsn(database), server_settings={"search_path": "decisions"})


async def outcomes_by_id(conn: asyncpg.Connection) -> dict[str, tuple[str | None, str | None]]:
    rows = await conn.fetch("select id::text as id, outcome, judged_by from decisions")
    return {r["id"]: (r["outcome"], r["judged_by"]) for r in rows}


async def post_facts(client, payload: dict) -> None:
    reply = await client.post("/internal/facts", content=event_bytes(payload), headers=internal_headers())
    assert reply.status_code == 200, reply.text


async def test_one_sweep_applies_every_rule_and_never_guesses_an_unknown_type(settings, template, database):
    # (decision_type, subject facts, decided_at) -> expected outcome (None = still pending)
    cases = {
        "stall-on-time": (
            "stall_response",
            {"delivered_at": iso(ago(hours=1)), "sla_due_at": iso(ago(minutes=30))},
            ago(hours=3),
            "success",
        ),
        "stall-late": (
            "stall_response",
            {"delivered_at": iso(ago(hours=1)), "sla_due_at": iso(ago(hours=2))},
            ago(hours=3),
            "failure",
        ),
        "stall-cancelled": (
            "stall_response",
            {"cancelled": True, "delivered_at": iso(ago(hours=1))},
            ago(hours=3),
            "failure",
        ),
        "stall-in-flight": ("stall_response", {"status": "in_transit"}, ago(hours=3), None),
        "stall-stuck": ("stall_response", {"status": "in_transit"}, ago(hours=49), "failure"),
        "stall-too-young": ("stall_response", {"delivered_at": iso(ago(minutes=5))}, ago(minutes=10), None),
        "assign-after": ("assignment_failure", {"assigned_at": iso(ago(hours=2))}, ago(hours=3), "success"),
        "assign-before": ("assignment_failure", {"assigned_at": iso(ago(hours=4))}, ago(hours=3), None),
        "assign-before-closed": ("assignment_failure", {"assigned_at": iso(ago(hours=60))}, ago(hours=50), "failure"),
        "assign-cancelled": (
            "assignment_failure",
            {"cancelled": True, "assigned_at": iso(ago(hours=1))},
            ago(hours=3),
            "failure",
        ),
        "novel-open": ("reroute_advice", {"delivered_at": iso(ago(hours=1))}, ago(hours=3), None),
        "novel-closed": ("reroute_advice", {"delivered_at": iso(ago(hours=1))}, ago(hours=49), "unknown"),
        "novel-cancelled-closed": ("reroute_advice", {"cancelled": True}, ago(hours=72), "unknown"),
        "no-facts-closed": ("stall_response", None, ago(hours=50), "failure"),
    }
    ids: dict[str, str] = {}
    async with running(settings, ["decisions", "outcomes"]), gateway_client(settings) as client:
        async with channel(settings.addr("decisions"), INTERNAL_KEY) as ch:
            decisions = decisions_pb2_grpc.DecisionsStub(ch)
            for subject, (decision_type, facts, decided_at, _) in cases.items():
                if facts is not None:
                    await post_facts(client, {"subject_id": subject, "at": iso(ago(minutes=1)), **facts})
                ids[subject] = await record(decisions, decision_type, subject, decided_at)
        first = await client.post("/internal/outcomes/sweep", headers=internal_headers())
        second = await client.post("/internal/outcomes/sweep", headers=internal_headers())
        refused = await client.post("/internal/outcomes/sweep", params={"batch_size": 5000}, headers=internal_headers())
        anonymous = await client.post("/internal/outcomes/sweep")

    expected = {subject: case[3] for subject, case in cases.items()}
    wanted = {o: sum(1 for v in expected.values() if v == o) for o in ("success", "failure", "unknown")}
    assert first.status_code == 200, first.text
    assert first.json() == {"judged": sum(wanted.values()), "by_outcome": wanted, "scanned": len(cases) - 1}
    # Nothing left that the rules can decide yet: the second sweep judges nothing.
    assert second.json()["judged"] == 0
    assert second.json()["by_outcome"] == {"success": 0, "failure": 0, "unknown": 0}
    assert refused.status_code == 422 and next(iter(refused.json()["error"]["details"]["fields"])) == "batch_size"
    assert anonymous.status_code == 401

    conn = await decisions_table(template, database)
    try:
        stored = await outcomes_by_id(conn)
    finally:
        await conn.close()
    for subject, outcome in expected.items():
        judged_by = None if outcome is None else "sweeper"
        assert stored[ids[subject]] == (outcome, judged_by), subject


async def test_two_replicas_sweeping_at_once_judge_each_decision_once(settings, template, database):
    count = 600
    async with running(settings, ["decisions", "outcomes"]):
        second = ContextServer("outcomes", settings)
        await second.start("127.0.0.1:0")
        try:
            async with channel(settings.addr("decisions"), INTERNAL_KEY) as ch:
                decisions = decisions_pb2_grpc.DecisionsStub(ch)
                for start in range(0, count, 100):
                    await asyncio.gather(
                        *(
                            record(
                                decisions,
                                "assignment_failure" if n % 3 else "novel_type",
                                f"b{n}",
                                ago(hours=50, seconds=n),
                            )
                            for n in range(start, start + 100)
                        )
                    )
            replies = await asyncio.gather(
                *(sweep_via(settings.addr("outcomes")) for _ in range(2)),
                *(sweep_via(f"127.0.0.1:{second.port}") for _ in range(2)),
            )
        finally:
            await second.stop(grace=0.5)

    assert sum(r.judged for r in replies) == count
    assert sum(r.by_outcome["failure"] for r in replies) == 400
    assert sum(r.by_outcome["unknown"] for r in replies) == 200
    assert all(r.by_outcome["success"] == 0 for r in replies)
    conn = await decisions_table(template, database)
    try:
        history = await conn.fetch("select decision_id, count(*) as n from outcome_history group by decision_id")
        pending = await conn.fetchval("select count(*) from decisions where outcome is null")
    finally:
        await conn.close()
    assert len(history) == count and all(row["n"] == 1 for row in history)
    assert pending == 0


async def sweep_via(address: str) -> outcomes_pb2.SweepResponse:
    async with channel(address, INTERNAL_KEY) as ch:
        # A small batch makes the replicas interleave over many pages.
        return await outcomes_pb2_grpc.OutcomesStub(ch).Sweep(outcomes_pb2.SweepRequest(batch_size=50))


async def test_the_timer_sweeps_without_being_asked(settings, template, database):
    quick = with_env(settings, sweep_interval_s=1.0)
    async with running(quick, ["decisions", "outcomes"]):
        async with channel(quick.addr("decisions"), INTERNAL_KEY) as ch:
            decision_id = await record(decisions_pb2_grpc.DecisionsStub(ch), "unseen_type", "b-timer", ago(hours=49))
        conn = await decisions_table(template, database)
        try:

            async def outcome():
                return await conn.fetchval("select outcome from decisions where id = $1", uuid.UUID(decision_id))

            assert await eventually(outcome, lambda value: value is not None) == "unknown"
        finally:
            await conn.close()


@pytest.mark.parametrize(("raw", "judged"), [("2", 1), ("48", 0), ("two days", 0), ("-5", 0)])
async def test_the_window_comes_from_the_setting_and_a_bad_value_means_48(template, database, raw, judged):
    settings = make_settings(template, database, AGENT_OUTCOME_WINDOW_HOURS=raw)
    async with running(settings, ["decisions", "outcomes"]):
        async with channel(settings.addr("decisions"), INTERNAL_KEY) as ch:
            # Three hours old, never delivered: stuck only if the window is shorter.
            await record(decisions_pb2_grpc.DecisionsStub(ch), "stall_response", "b-window", ago(hours=3))
        async with channel(settings.addr("outcomes"), INTERNAL_KEY) as ch:
            reply = await outcomes_pb2_grpc.OutcomesStub(ch).Sweep(outcomes_pb2.SweepRequest())
    assert reply.judged == judged
    assert reply.by_outcome["failure"] == judged


async def test_routing_by_decision_type_learns_from_judged_decisions(settings):
    async with running(settings, ["decisions", "outcomes"]), gateway_client(settings) as client:
        async with channel(settings.addr("decisions"), INTERNAL_KEY) as ch:
            decisions = decisions_pb2_grpc.DecisionsStub(ch)
            for n in range(12):
                model = "careful" if n % 2 else "hasty"
                subject = f"r{n}"
                # The careful model's bookings get a rider; the hasty one's get cancelled.
                facts = {"assigned_at": iso(ago(hours=1))} if model == "careful" else {"cancelled": True}
                await post_facts(client, {"subject_id": subject, "at": iso(ago(minutes=1)), **facts})
                await record(decisions, "assignment_failure", subject, ago(hours=2), model=model)
            await record(decisions, "other_type", "r-x", ago(hours=60), model="hasty")
        await client.post("/internal/outcomes/sweep", headers=internal_headers())
        # A conversation routed under the decision type adds its fractional credit.
        conversation = {
            "conversation_id": "chat-1",
            "decision_type": "assignment_failure",
            "turns": [
                {"role": "user", "text": "why is booking r1 unassigned", "ref": "u1"},
                {"role": "assistant", "text": "no rider in zone", "ref": "a1", "model": "careful", "trace_id": "x1"},
                {"role": "user", "text": "thanks", "ref": "u2"},
            ],
        }
        booked = await client.post("/internal/conversations", json=conversation, headers=internal_headers())
        assert booked.status_code == 200, booked.text
        response = await client.get(
            "/admin/ai/routing", params={"decision_type": "assignment_failure", "seed": 3}, headers=bearer(1)
        )
    assert response.status_code == 200, response.text
    body = response.json()
    arms = {arm["model"]: arm for arm in body["arms"]}
    assert body["key"] == "decision_type:assignment_failure"
    assert arms["careful"]["decisions"] == {"successes": 6.0, "failures": 0.0}
    assert arms["careful"]["credit"] == {"successes": pytest.approx(0.9), "failures": 0.0}
    assert arms["hasty"]["decisions"] == {"successes": 0.0, "failures": 6.0}
    assert (arms["careful"]["alpha"], arms["careful"]["beta"]) == (pytest.approx(7.9), 1.0)
    assert arms["careful"]["posterior_mean"] == pytest.approx(7.9 / 8.9)
    assert body["pick"] == "careful"
    assert arms["careful"]["pick_probability"] > 0.95
