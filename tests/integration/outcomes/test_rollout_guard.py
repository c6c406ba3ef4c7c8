"""The rollout guard against real registry, decisions and outcomes contexts:
decisions recorded with their arm and judged over REST, a sweep waking the
guard, and the guard halting a worse candidate, advancing and completing a
good one, observing a paused one without advancing it, and looking on its
timer when no sweep wakes it."""

from __future__ import annotations

import asyncio

import pytest

from tests.harness import bearer, eventually, gateway_client, internal_headers, running, with_env
from tests.integration.registry.helpers import registry_db

WRITER = bearer(role=1, sub="u-42", email="lead@example.com")
STAFF = bearer(role=3)
# Wide enough that a few dozen decisions decide it, so the test stays short.
QUICK_GUARD = {"max_drop": 0.3, "confidence": 0.9, "min_judged": 20}


@pytest.fixture
async def api(settings):
    async with running(settings, ["registry", "decisions", "outcomes"]), gateway_client(settings) as client:
        yield client


async def start(api, decision_type: str, **body) -> dict:
    reply = await api.post(
        "/admin/ai/rollouts",
        json={"agent_id": "EXCEPTION_AGENT", "decision_type": decision_type, "change": {"model": "claude-opus-5-5"}}
        | body,
        headers=WRITER,
    )
    assert reply.status_code == 201, reply.text
    return reply.json()


async def decide(api, rollout: dict, arm: str, outcomes: dict[str, int]) -> None:
    """Record decisions in one arm and judge them: {"success": n, "failure": m, "pending": k, …}."""
    for outcome, count in outcomes.items():
        for i in range(count):
            body = {
                "decision_type": rollout["decision_type"],
                "agent_id": rollout["agent_id"],
                "subject_id": f"{rollout['id'][:8]}-{arm}-{outcome}-{i}",
                "decision": {"action": "reassign", "confidence": 0.8},
                "rollout": {"id": rollout["id"], "arm": arm},
            }
            made = await api.post("/internal/agent-decisions", json=body, headers=internal_headers())
            assert made.status_code == 201, made.text
            if outcome == "pending":
                continue
            judged = await api.patch(
                f"/internal/agent-decisions/{made.json()['id']}/outcome",
                json={"outcome": outcome},
                headers=internal_headers(),
            )
            assert judged.status_code == 200, judged.text


async def sweep(api) -> None:
    reply = await api.post("/internal/outcomes/sweep", headers=internal_headers())
    assert reply.status_code == 200, reply.text


async def fetched(api, rollout_id: str) -> dict:
    reply = await api.get(f"/admin/ai/rollouts/{rollout_id}", headers=STAFF)
    assert reply.status_code == 200, reply.text
    return reply.json()


async def once_swept(api, rollout_id: str, accept) -> dict:
    """Sweep (which wakes the guard) until the rollout is as accepted."""

    async def probe() -> dict:
        await sweep(api)
        await asyncio.sleep(0.2)
        return await fetched(api, rollout_id)

    return await eventually(probe, accept, timeout=30, step=0.1, what="the guard's verdict")


async def rollout_audit(template, database, rollout_id: str):
    async with registry_db(template, database) as conn:
        return await conn.fetch(
            "select field, old, new, changed_by from audit where entity = 'rollout' and entity_id = $1 order by id",
            rollout_id,
        )


async def test_the_guard_halts_a_worse_candidate_at_once_and_says_why(api, template, database):
    rollout = await start(api, "stall_response", guard={"min_judged": 20})
    await decide(api, rollout, "control", {"success": 36, "failure": 4, "unknown": 2, "pending": 1})
    await decide(api, rollout, "candidate", {"success": 8, "failure": 22})

    halted = await once_swept(api, rollout["id"], lambda r: r["state"] != "running")

    assert (halted["state"], halted["percent"]) == ("halted", 0)
    assert halted["reason"].startswith("halted: the candidate is worse")
    assert "28.1 %" in halted["reason"] and "88.1 %" in halted["reason"]
    assert halted["p_harm"] > 0.95
    control, candidate = halted["arms"]["control"], halted["arms"]["candidate"]
    assert (control["judged"], control["successes"], control["unknown"], control["pending"]) == (40, 36, 2, 1)
    assert (candidate["judged"], candidate["failures"]) == (30, 22)
    assert candidate["low"] < candidate["mean"] < candidate["high"] < control["low"]
    changes = [
        (r["field"], r["old"], r["new"], r["changed_by"])
        for r in await rollout_audit(template, database, rollout["id"])
    ]
    assert ("state", "running", "halted", "rollout-guard") in changes
    assert ("percent", 5, 0, "rollout-guard") in changes


async def test_the_guard_advances_a_good_candidate_a_step_then_completes_it_as_the_baseline(api, template, database):
    rollout = await start(api, "stall_response", steps=[50, 100], guard=QUICK_GUARD)
    await decide(api, rollout, "control", {"success": 25})
    await decide(api, rollout, "candidate", {"success": 30})

    advanced = await once_swept(api, rollout["id"], lambda r: r["step"] != 0)
    assert (advanced["state"], advanced["step"], advanced["percent"]) == ("running", 1, 100)
    assert advanced["reason"].startswith("advanced")
    # The last step needs 2 × min_judged judged candidate decisions; 30 are not enough.
    await sweep(api)
    await asyncio.sleep(0.5)
    waiting = await fetched(api, rollout["id"])
    assert (waiting["state"], waiting["step"]) == ("running", 1)
    assert waiting["arms"]["candidate"]["judged"] == 30

    await decide(api, rollout, "candidate", {"success": 12})
    completed = await once_swept(api, rollout["id"], lambda r: r["state"] != "running")
    assert (completed["state"], completed["percent"]) == ("completed", 100)
    assert completed["reason"].startswith("completed")
    agent = (await api.get("/admin/ai/agents/EXCEPTION_AGENT", headers=STAFF)).json()
    assert agent["model"] == "claude-opus-5-5"
    async with registry_db(template, database) as conn:
        pin = await conn.fetchrow("select * from audit where entity = 'agent' and field = 'model'")
    assert (pin["new"], pin["changed_by"]) == ("claude-opus-5-5", "rollout-guard")
    changes = [
        (r["field"], r["old"], r["new"], r["changed_by"])
        for r in await rollout_audit(template, database, rollout["id"])
    ]
    assert ("percent", 50, 100, "rollout-guard") in changes
    assert ("state", "running", "completed", "rollout-guard") in changes


async def test_a_paused_rollout_is_observed_but_never_advanced(api):
    rollout = await start(api, "stall_response", steps=[50, 100], guard=QUICK_GUARD)
    paused = await api.post(f"/admin/ai/rollouts/{rollout['id']}/pause", json={"reason": "holiday"}, headers=WRITER)
    assert paused.status_code == 200, paused.text
    await decide(api, rollout, "control", {"success": 25})
    await decide(api, rollout, "candidate", {"success": 45})

    observed = await once_swept(api, rollout["id"], lambda r: r["arms"]["candidate"]["judged"] > 0)

    assert (observed["state"], observed["step"], observed["percent"]) == ("paused", 0, 50)
    assert observed["arms"]["candidate"]["judged"] == 45 and observed["p_harm"] < 0.1
    history = (await fetched(api, rollout["id"]))["history"]
    assert [e["event"] for e in history][-1] == "observed" and history[-1]["by"] == "rollout-guard"


async def test_the_guard_looks_on_its_timer_without_a_sweep(template, database, settings):
    timed = with_env(settings, rollout_guard_interval_s=1.0, sweep_interval_s=3600.0)
    async with running(timed, ["registry", "decisions", "outcomes"]), gateway_client(timed) as api:
        rollout = await start(api, "stall_response", guard={"min_judged": 20})
        await decide(api, rollout, "control", {"success": 36, "failure": 4})
        await decide(api, rollout, "candidate", {"success": 8, "failure": 22})
        halted = await eventually(
            lambda: fetched(api, rollout["id"]), lambda r: r["state"] == "halted", timeout=20, what="a timed pass"
        )
    assert halted["percent"] == 0


async def converse(api, rollout: dict, arm: str, name: str, turns: list[tuple[str, str]]) -> None:
    """Submit one conversation whose assistant turns answered under `arm` of the rollout."""
    body = {
        "conversation_id": f"{rollout['id'][:8]}-{arm}-{name}",
        "decision_type": rollout["decision_type"],
        "turns": [
            {"role": role, "text": text, "ref": f"r{i}"}
            | ({"rollout": {"id": rollout["id"], "arm": arm}} if role == "assistant" else {})
            for i, (role, text) in enumerate(turns)
        ],
    }
    booked = await api.post("/internal/conversations", json=body, headers=internal_headers())
    assert booked.status_code == 200, booked.text


# The user leaves after the answer: one success, credited at 0.6.
ANSWERED = [("user", "what's the refund window"), ("assistant", "30 days")]
# The user gives up on the answer: one failure, credited in full.
GIVEN_UP = [("user", "reschedule the pickup"), ("assistant", "which pickup"), ("user", "forget it, this is useless")]


async def test_credited_turns_on_the_candidate_halt_it_with_few_decisions_and_each_observation_says_why(
    api, template, database
):
    rollout = await start(api, "stall_response", guard={"min_judged": 20})
    started_audit = len(await rollout_audit(template, database, rollout["id"]))
    await decide(api, rollout, "control", {"success": 20, "failure": 2})
    await decide(api, rollout, "candidate", {"success": 2, "failure": 1})

    first = await once_swept(api, rollout["id"], lambda r: r["arms"]["candidate"]["judged"] > 0)
    assert (first["state"], first["step"]) == ("running", 0)
    assert first["reason"].startswith("waiting for 20 judged control and 20 judged candidate decisions")
    assert "3 judged" in first["reason"] and "22 judged" in first["reason"]

    for i in range(2):
        await converse(api, rollout, "control", f"answered-{i}", ANSWERED)
    second = await once_swept(api, rollout["id"], lambda r: r["arms"]["control"]["judged"] > 22)
    assert second["state"] == "running" and second["arms"]["control"]["successes"] == pytest.approx(21.2)
    # The reason is the latest observation's, not the first's.
    assert second["reason"] != first["reason"] and "23.2 judged" in second["reason"]
    assert second["p_harm"] != first["p_harm"]
    # Observations are history, never audit: nothing moved, so nothing is audited.
    assert len(await rollout_audit(template, database, rollout["id"])) == started_audit
    assert [e["event"] for e in second["history"]][-2:] == ["observed", "observed"]

    for i in range(25):
        await converse(api, rollout, "candidate", f"given-up-{i}", GIVEN_UP)
    halted = await once_swept(api, rollout["id"], lambda r: r["state"] != "running")

    assert (halted["state"], halted["percent"]) == ("halted", 0)
    assert halted["reason"].startswith("halted: the candidate is worse") and halted["p_harm"] > 0.95
    candidate = halted["arms"]["candidate"]
    assert (candidate["judged"], candidate["successes"], candidate["failures"]) == (28, 2, 26)
    moves = [(r["field"], r["changed_by"]) for r in await rollout_audit(template, database, rollout["id"])]
    assert ("state", "rollout-guard") in moves[started_audit:] and ("percent", "rollout-guard") in moves
