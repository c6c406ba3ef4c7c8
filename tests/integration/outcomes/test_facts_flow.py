"""Subject facts through both doors: POST /internal/facts and facts.booking on JetStream."""

from __future__ import annotations

import itertools
import json
import random

import pytest
from nats.js.errors import NoStreamResponseError

from services.common.runtime import ContextServer
from services.outcomes.consumer import DURABLE, STREAM, SUBJECT
from tests.harness import eventually, gateway_client, internal_headers, running, service_nats
from tests.integration.outcomes.helpers import event_bytes, outcomes_db, stored_facts

# Observations of one booking's life, each fact from a different instant; the
# last status wins, and an early 'cancelled: false' is overruled by a later true.
LIFE = [
    {"at": "2024-05-01T10:00:00Z", "status": "created", "sla_due_at": "2024-05-01T14:00:00Z", "cancelled": False},
    {"at": "2024-05-01T10:05:00Z", "status": "assigned", "assigned_at": "2024-05-01T10:04:00Z"},
    {"at": "2024-05-01T11:00:00+05:30", "sla_due_at": "2024-05-01T15:00:00Z"},  # 05:30 UTC: oldest news
    {"at": "2024-05-01T12:00:00Z", "status": "delivered", "delivered_at": "2024-05-01T11:58:00Z"},
    {"at": "2024-05-01T12:30:00Z", "cancelled": True},
]

EXPECTED = {
    "status": {"value": "delivered", "at": "2024-05-01T12:00:00+00:00"},
    "assigned_at": {"value": "2024-05-01T10:04:00+00:00", "at": "2024-05-01T10:05:00+00:00"},
    "delivered_at": {"value": "2024-05-01T11:58:00+00:00", "at": "2024-05-01T12:00:00+00:00"},
    "sla_due_at": {"value": "2024-05-01T14:00:00+00:00", "at": "2024-05-01T10:00:00+00:00"},
    "cancelled": {"value": True, "at": "2024-05-01T12:30:00+00:00"},
}


def life_of(subject_id: str) -> list[dict]:
    return [{"subject_id": subject_id, **event} for event in LIFE]


async def test_every_arrival_order_and_repeat_over_http_leaves_the_same_facts(settings, template, database):
    orders = list(itertools.permutations(range(len(LIFE))))
    chosen = [orders[0], orders[-1], *random.Random(3).sample(orders[1:-1], 4)]
    async with running(settings, ["outcomes"]), gateway_client(settings) as client:
        for n, order in enumerate(chosen):
            subject = f"b-{n}"
            events = life_of(subject)
            for index in order:
                reply = await client.post(
                    "/internal/facts", content=event_bytes(events[index]), headers=internal_headers()
                )
                assert reply.status_code == 200, reply.text
            assert reply.json()["facts"] == EXPECTED
            repeat = await client.post(
                "/internal/facts", content=event_bytes(events[order[0]]), headers=internal_headers()
            )
            assert repeat.json() == {"subject_id": subject, "facts": EXPECTED, "changed": False}
    conn = await outcomes_db(template, database)
    try:
        for n in range(len(chosen)):
            assert await stored_facts(conn, f"b-{n}") == EXPECTED
    finally:
        await conn.close()


async def test_a_malformed_http_payload_names_the_field_and_changes_nothing(settings, template, database):
    async with running(settings, ["outcomes"]), gateway_client(settings) as client:
        first = await client.post("/internal/facts", content=event_bytes(life_of("b-1")[0]), headers=internal_headers())
        assert first.status_code == 200
        # The gateway's contract refuses what the document rules out
        # (INVALID_ARGUMENT); the facts parser, shared with the NATS door,
        # refuses the rest (MALFORMED_FACTS). Both name the field.
        cases = [
            (b"{not json", "body", "INVALID_ARGUMENT"),
            (
                event_bytes({"subject_id": "b-1", "at": "2024-05-02T10:00:00", "status": "lost"}),
                "at",
                "INVALID_ARGUMENT",
            ),
            (
                event_bytes({"subject_id": "b-1", "at": "2024-05-02T10:00:00Z", "cancelled": "yes"}),
                "cancelled",
                "INVALID_ARGUMENT",
            ),
            (event_bytes({"at": "2024-05-02T10:00:00Z", "status": "lost"}), "subject_id", "INVALID_ARGUMENT"),
            (event_bytes({"subject_id": "b-1", "at": "2024-05-02T10:00:00Z"}), "payload", "MALFORMED_FACTS"),
            # Parses, but Postgres could never store it.
            (
                event_bytes({"subject_id": "b-1", "at": "2024-05-02T10:00:00Z", "status": "lost\u0000"}),
                "status",
                "INVALID_ARGUMENT",
            ),
            (b'{"subject_id": "b-1", "at": "2024-05-02T10:00:00Z", "status": "\\ud800"}', "status", "INVALID_ARGUMENT"),
            (
                event_bytes({"subject_id": "b" * 201, "at": "2024-05-02T10:00:00Z", "status": "lost"}),
                "subject_id",
                "INVALID_ARGUMENT",
            ),
        ]
        for body, field, code in cases:
            reply = await client.post("/internal/facts", content=body, headers=internal_headers())
            assert reply.status_code == 422, body
            error = reply.json()["error"]
            assert error["code"] == code, body
            assert next(iter(error["details"]["fields"])) == field
        unauthenticated = await client.post("/internal/facts", content=event_bytes(life_of("b-1")[1]))
        assert unauthenticated.status_code == 401
    conn = await outcomes_db(template, database)
    try:
        facts = await stored_facts(conn, "b-1")
        assert facts is not None and facts["status"]["value"] == "created"
        assert "assigned_at" not in facts
        # Refusing a request is its own answer; only the consumer counts rejections.
        assert await conn.fetchval("select count(*) from fact_rejections") == 0
    finally:
        await conn.close()


async def test_jetstream_events_out_of_order_with_redelivery_and_two_replicas(settings, template, database):
    subjects = [f"s-{n}" for n in range(20)]
    shuffled = random.Random(11)
    messages = []
    for subject in subjects:
        events = life_of(subject)
        # Every event twice, as a redelivering broker would.
        messages.extend(events + events)
    shuffled.shuffle(messages)
    async with running(settings, ["outcomes"]):
        second = ContextServer("outcomes", settings)
        await second.start("127.0.0.1:0")
        try:
            client = await service_nats(settings.nats_url)
            try:
                js = client.jetstream()
                for payload in messages:
                    await js.publish(SUBJECT, event_bytes(payload))
                await js.publish(SUBJECT, b"\xff not json")
                await js.publish(SUBJECT, event_bytes({"subject_id": "s-0", "at": "yesterday", "status": "x"}))
                # Another facts subject is not this consumer's business, nor stored by any stream.
                with pytest.raises(NoStreamResponseError):
                    await js.publish("facts.invoice", event_bytes({"subject_id": "s-0", "at": "nonsense"}))

                async def settled():
                    info = await js.consumer_info(STREAM, DURABLE)
                    return info.num_pending, info.num_ack_pending

                assert await eventually(settled, lambda v: v == (0, 0)) == (0, 0)
            finally:
                await client.close()
        finally:
            await second.stop(grace=0.5)

    conn = await outcomes_db(template, database)
    try:
        for subject in subjects:
            assert await stored_facts(conn, subject) == EXPECTED, subject
        rejections = {r["field"]: r["count"] for r in await conn.fetch("select field, count from fact_rejections")}
        assert rejections == {"payload": 1, "at": 1}
        sample = await conn.fetchval("select last_payload from fact_rejections where field = 'at'")
        assert json.loads(sample)["at"] == "yesterday"
    finally:
        await conn.close()


async def test_a_malformed_event_is_terminated_not_redelivered(settings, template, database):
    async with running(settings, ["outcomes"]):
        client = await service_nats(settings.nats_url)
        try:
            js = client.jetstream()
            await js.publish(SUBJECT, event_bytes({"subject_id": "", "at": "2024-05-01T10:00:00Z", "status": "x"}))
            await js.publish(
                SUBJECT, event_bytes({"subject_id": "b-9", "at": "2024-05-01T10:00:00Z", "status": "\u0000"})
            )
            await js.publish(SUBJECT, event_bytes(life_of("b-9")[0]))

            async def state():
                info = await js.consumer_info(STREAM, DURABLE)
                return info.num_pending, info.num_ack_pending, info.num_redelivered

            assert await eventually(state, lambda v: v[:2] == (0, 0)) == (0, 0, 0)
        finally:
            await client.close()
    conn = await outcomes_db(template, database)
    try:
        rejections = {r["field"]: r["count"] for r in await conn.fetch("select field, count from fact_rejections")}
        assert rejections == {"subject_id": 1, "status": 1}
        assert (await stored_facts(conn, "b-9"))["status"]["value"] == "created"
    finally:
        await conn.close()
