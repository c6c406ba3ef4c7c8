"""The credit ledger and its metrics over the gateway: POST /internal/conversations
and GET /admin/ai/conversation-metrics."""

from __future__ import annotations

import asyncio
import json

import grpc
import pytest

from outrider.v1 import common_pb2, outcomes_pb2, outcomes_pb2_grpc
from tests.harness import bearer, engine_channel, gateway_client, internal_headers, running
from tests.integration.outcomes.helpers import outcomes_db


def user(text: str, ref: str) -> dict:
    return {"role": "user", "text": text, "ref": ref}


def reply(text: str, ref: str, model: str = "m1", *, traced: bool = True) -> dict:
    turn = {"role": "assistant", "text": text, "ref": ref, "model": model}
    if traced:
        turn["trace_id"] = f"trace-{ref}"
    return turn


# Repair, then silence: t1 is a known failure, t2 waits for a verdict.
AMBIGUOUS = [
    user("fix the flaky checkout test", "u1"),
    reply("retry added", "t1"),
    user("that didn't work, still failing", "u2"),
    reply("mocked the clock instead", "t2", "m2"),
]
SETTLED = [*AMBIGUOUS, user("thanks, green now", "u3")]


async def submit(client, conversation_id: str, turns: list[dict], **route) -> dict:
    response = await client.post(
        "/internal/conversations",
        json={"conversation_id": conversation_id, "turns": turns, **route},
        headers=internal_headers(),
    )
    assert response.status_code == 200, response.text
    return response.json()


async def metrics(client, model: str | None = None) -> dict:
    params = {"model": model} if model is not None else {}
    response = await client.get("/admin/ai/conversation-metrics", params=params, headers=bearer(role=4))
    assert response.status_code == 200, response.text
    return response.json()


def keyed(credits: list[dict]) -> dict[str, dict]:
    return {c["turn_ref"]: c for c in credits}


async def test_resubmission_books_nothing_twice_and_a_deferred_turn_is_credited_once_settled(
    settings, template, database
):
    async with running(settings, ["outcomes"]), gateway_client(settings) as client:
        first = await submit(client, "c-1", AMBIGUOUS, skill="triage")
        assert first["deferred"] == 1
        assert keyed(first["credits"]) == {
            "t1": {
                "turn_ref": "t1",
                "model": "m1",
                "trace_id": "trace-t1",
                "credit": "failure",
                "confidence": pytest.approx(0.85),
                "episode_id": 0,
                "resolution": "ambiguous",
            }
        }
        assert (await metrics(client))["pending"] == 1

        again = await submit(client, "c-1", AMBIGUOUS, skill="triage")
        assert again == {"credits": [], "deferred": 1}

        grown = await submit(client, "c-1", SETTLED)
        # Only the settled turn is new; t1 keeps the credit it was booked with.
        assert list(keyed(grown["credits"])) == ["t2"]
        t2 = grown["credits"][0]
        assert (t2["credit"], t2["model"], t2["episode_id"], t2["resolution"]) == ("success", "m2", 0, "resolved")
        assert grown["deferred"] == 0

        assert await submit(client, "c-1", SETTLED) == {"credits": [], "deferred": 0}
        # An older snapshot arriving late books nothing either.
        assert await submit(client, "c-1", AMBIGUOUS) == {"credits": [], "deferred": 0}

        scoreboard = await metrics(client)
        assert scoreboard["pending"] == 0
        assert (scoreboard["episodes"], scoreboard["resolved"], scoreboard["first_turn_resolutions"]) == (1, 1, 0)
        assert scoreboard["avg_turns_to_resolution"] == pytest.approx(2.0)

    conn = await outcomes_db(template, database)
    try:
        rows = await conn.fetch("select turn_ref, episode_id, credit, skill from credits order by seq")
        assert [(r["turn_ref"], r["episode_id"], r["credit"], r["skill"]) for r in rows] == [
            ("t1", 0, "failure", "triage"),
            ("t2", 0, "success", "triage"),
        ]
        resolved = await conn.fetchval("select resolved_at is not null from deferred_turns where turn_ref = 't2'")
        assert resolved is True
    finally:
        await conn.close()


async def test_concurrent_submissions_of_one_conversation_book_each_credit_once(settings, template, database):
    async with running(settings, ["outcomes"]), gateway_client(settings) as client:
        replies = await asyncio.gather(*(submit(client, "c-race", SETTLED) for _ in range(6)))
    booked = [c["turn_ref"] for r in replies for c in r["credits"]]
    assert sorted(booked) == ["t1", "t2"]
    conn = await outcomes_db(template, database)
    try:
        assert await conn.fetchval("select count(*) from credits where conversation_id = 'c-race'") == 2
    finally:
        await conn.close()


async def test_a_rewritten_history_or_a_changed_route_is_refused_and_changes_nothing(settings, template, database):
    async with running(settings, ["outcomes"]), gateway_client(settings) as client:
        await submit(client, "c-2", AMBIGUOUS, skill="triage")
        edited = [*AMBIGUOUS[:2], user("no, that's not what i asked", "u2"), *AMBIGUOUS[3:], user("thanks", "u3")]
        response = await client.post(
            "/internal/conversations",
            json={"conversation_id": "c-2", "turns": edited},
            headers=internal_headers(),
        )
        assert response.status_code == 409
        assert response.json()["error"]["code"] == "CONVERSATION_REWRITTEN"
        assert response.json()["error"]["details"]["field"] == "turns[2]"

        moved = await client.post(
            "/internal/conversations",
            json={"conversation_id": "c-2", "turns": SETTLED, "skill": "billing"},
            headers=internal_headers(),
        )
        assert moved.status_code == 409
        assert moved.json()["error"]["details"]["field"] == "skill"
        assert (await metrics(client))["pending"] == 1


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"conversation_id": "c", "turns": [{"role": "bot", "text": "hi", "ref": "r1"}]}, "turns[0].role"),
        ({"conversation_id": "c", "turns": [user("a", "r1"), reply("b", "r1")]}, "turns[1].ref"),
        ({"conversation_id": "  ", "turns": []}, "conversation_id"),
        ({"conversation_id": "c", "turns": [{"role": "user", "text": "hi", "ref": " "}]}, "turns[0].ref"),
        ({"conversation_id": "c", "turns": [user("a", "r1"), reply("b", "r2\u0000")]}, "turns[1].ref"),
        ({"conversation_id": "c", "turns": [{"role": "user", "ref": "r1"}]}, "turns[0].text"),
        ({"conversation_id": "c", "turns": [user("a", "r1"), reply("b\ud800", "r2")]}, "turns[1].text"),
    ],
)
async def test_a_malformed_conversation_names_the_field(settings, template, database, body, field):
    async with running(settings, ["outcomes"]), gateway_client(settings) as client:
        # Escaped JSON, so a lone surrogate travels as the six characters a producer would send.
        response = await client.post(
            "/internal/conversations",
            content=json.dumps(body).encode(),
            headers={**internal_headers(), "Content-Type": "application/json"},
        )
    assert response.status_code == 422
    assert field in response.json()["error"]["details"]["fields"]
    conn = await outcomes_db(template, database)
    try:
        assert await conn.fetchval("select count(*) from conversations") == 0
    finally:
        await conn.close()


async def test_metrics_count_every_turn_per_model_and_untraced_turns_are_no_routing_credit(
    settings, template, database
):
    conversations = {
        # One-shot resolution by m1.
        "one-shot": [user("what's the refund window", "u1"), reply("30 days", "t1")],
        # m1 circles, m2 resolves: a two-attempt resolved episode.
        "recovered": [
            user("convert the report to csv", "u1"),
            reply("here is json", "t1"),
            user("no, that's not what i asked, i said csv", "u2"),
            reply("here is csv", "t2", "m2"),
            user("thanks, now email it to finance", "u3"),
            reply("sent", "t3", "m2"),
        ],
        # An observer model without a trace id gives up the user: churn.
        "abandoned": [
            user("reschedule the pickup", "u1"),
            reply("which pickup", "t1", "m3", traced=False),
            user("forget it, this is useless", "u2"),
        ],
        # A lone repair attempt met by silence: only pending shows it.
        "silent": [
            user("fix the invoice total", "u1"),
            reply("fixed", "t1", "m3", traced=False),
            user("still wrong", "u2"),
            reply("fixed again", "t2", "m3", traced=False),
        ],
    }
    async with running(settings, ["outcomes"]), gateway_client(settings) as client:
        for conversation_id, turns in conversations.items():
            await submit(client, conversation_id, turns, skill="support")
        overall = await metrics(client)
        by_m2 = await metrics(client, "m2")
        by_m3 = await metrics(client, "m3")
        routing = await client.get("/admin/ai/routing", params={"skill": "support", "seed": 1}, headers=bearer(3))

    # Episodes: one-shot(1) + recovered(2) + abandoned(1) + silent(1, its
    # circle credited, its repair deferred).
    assert overall["episodes"] == 5
    assert overall["resolved"] == 3
    assert overall["first_turn_resolutions"] == 2
    assert overall["first_turn_resolution_rate"] == pytest.approx(2 / 3)
    assert overall["avg_turns_to_resolution"] == pytest.approx(4 / 3)
    assert overall["churn_rate"] == pytest.approx(1 / 5)
    assert overall["pending"] == 1
    assert by_m2["model"] == "m2" and by_m2["resolved"] == 2 and by_m2["pending"] == 0
    assert (by_m3["abandoned"], by_m3["ambiguous"], by_m3["pending"]) == (1, 1, 1)

    # m3's turns carry no trace id: they count above but route nothing.
    assert routing.status_code == 200, routing.text
    assert sorted(arm["model"] for arm in routing.json()["arms"]) == ["m1", "m2"]


ROLLOUT = "2b0c8f2e-0a43-4a4e-9b52-1d8f1f7a3c11"


def armed(turn: dict, arm: str) -> dict:
    return {**turn, "rollout": {"id": ROLLOUT, "arm": arm}}


async def test_each_credited_turn_keeps_the_rollout_arm_it_answered_under(settings, template, database):
    turns = [
        user("fix the flaky checkout test", "u1"),
        armed(reply("retry added", "t1"), "candidate"),
        user("that didn't work, still failing", "u2"),
        armed(reply("mocked the clock instead", "t2", "m2"), "control"),
    ]
    async with running(settings, ["outcomes"]), gateway_client(settings) as client:
        first = await submit(client, "c-arms", turns, decision_type="stall_response")
        assert [c["turn_ref"] for c in first["credits"]] == ["t1"] and first["deferred"] == 1
        # The same turns with another arm rewrite what was booked.
        moved = await client.post(
            "/internal/conversations",
            json={"conversation_id": "c-arms", "turns": [*turns[:3], armed(turns[3], "candidate")]},
            headers=internal_headers(),
        )
        assert moved.status_code == 409 and moved.json()["error"]["details"]["field"] == "turns[3]"
        await submit(client, "c-arms", [*turns, user("thanks, green now", "u3")])
    conn = await outcomes_db(template, database)
    try:
        credits = await conn.fetch(
            "select turn_ref, cast(rollout_id as text) as rollout_id, rollout_arm from credits order by turn_ref"
        )
        deferred = await conn.fetchrow("select cast(rollout_id as text) as rollout_id, rollout_arm from deferred_turns")
    finally:
        await conn.close()
    assert [tuple(r) for r in credits] == [("t1", ROLLOUT, "candidate"), ("t2", ROLLOUT, "control")]
    assert tuple(deferred) == (ROLLOUT, "control")


@pytest.mark.parametrize(
    ("rollout", "field"),
    [
        ({"id": ROLLOUT, "arm": "treatment"}, "turns[1].rollout.arm"),
        ({"id": "r-1", "arm": "control"}, "turns[1].rollout.id"),
        ({"arm": "control"}, "turns[1].rollout.id"),
    ],
)
async def test_an_arm_that_is_not_a_rollout_arm_is_refused_by_name(settings, template, database, rollout, field):
    turns = [user("a", "u1"), {**reply("b", "t1"), "rollout": rollout}]
    async with running(settings, ["outcomes"]), gateway_client(settings) as client:
        response = await client.post(
            "/internal/conversations", json={"conversation_id": "c", "turns": turns}, headers=internal_headers()
        )
    assert response.status_code == 422
    assert field in response.json()["error"]["details"]["fields"]


async def test_the_context_itself_refuses_an_arm_by_name(settings, template, database):
    request = outcomes_pb2.SubmitConversationRequest(
        conversation_id="c",
        turns=[
            outcomes_pb2.Turn(role="user", text="a", ref="u1"),
            outcomes_pb2.Turn(
                role="assistant", text="b", ref="t1", rollout=common_pb2.RolloutArm(id=ROLLOUT, arm="treatment")
            ),
        ],
    )
    async with running(settings, ["outcomes"]), engine_channel(settings, "outcomes") as channel:
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await outcomes_pb2_grpc.OutcomesStub(channel).SubmitConversation(request)
    assert caught.value.code() is grpc.StatusCode.INVALID_ARGUMENT
    assert "turns[1].rollout.arm" in (caught.value.details() or "")
