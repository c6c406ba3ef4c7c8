"""Human decisions through the gateway and the decisions context, against a real HTTP feed."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from tests.harness import bearer, gateway_client, internal_headers, running, with_env
from tests.integration.decisions.human_feed import Feed, serving

OPS = "tracker:ops/bookings"
CHAT = "chat:ops/dispatch"
BOOKING = "booking-4411"


@pytest.fixture
def feed() -> Iterator[Feed]:
    with serving(Feed()) as running_feed:
        yield running_feed


def with_feed(settings, feed: Feed):
    return with_env(settings, human_sources={OPS: {"url": feed.url, "token": feed.token, "timeout_s": 3}})


def push(external_id: str, body: str, *, subject_id: str = BOOKING, minutes_ago: float = 0) -> dict:
    at = datetime.now(UTC) - timedelta(minutes=minutes_ago)
    return {
        "provider": CHAT,
        "external_id": external_id,
        "subject_id": subject_id,
        "author": "priya",
        "at": at.isoformat(),
        "body": body,
    }


async def test_register_push_lease_and_read_newest_intent_last(settings, feed):
    async with running(with_feed(settings, feed), ["decisions"]), gateway_client(with_feed(settings, feed)) as api:
        registered = await api.put(
            f"/internal/subjects/{BOOKING}", json={"source": OPS, "plan_ref": "plan-a"}, headers=internal_headers()
        )
        first = await api.post(
            "/internal/human-inputs", json=push("m-1", "hold the parcel at the hub"), headers=internal_headers()
        )
        again = await api.post(
            "/internal/human-inputs", json=push("m-1", "hold the parcel at the hub"), headers=internal_headers()
        )
        feed.add(BOOKING, "c-1", "outrider verify step-2")
        feed.add(BOOKING, "c-2", "looks good")
        leased = await api.post(f"/internal/subjects/{BOOKING}/lease", headers=internal_headers())
        page_one = await api.get(f"/admin/ai/subjects/{BOOKING}/human-decisions?limit=2", headers=bearer(role=3))
        page_two = await api.get(
            f"/admin/ai/subjects/{BOOKING}/human-decisions",
            params={"limit": 2, "cursor": page_one.json()["next_cursor"]},
            headers=bearer(role=4),
        )

    assert registered.status_code == 200
    assert registered.json() == {"id": BOOKING, "source": OPS, "plan_ref": "plan-a", "cursor": None}
    assert (first.status_code, again.status_code) == (201, 200)
    assert again.json()["id"] == first.json()["id"]
    assert leased.status_code == 200
    body = leased.json()
    assert body["subject_id"] == BOOKING
    assert body["imported"] == 2
    decisions = body["human_decisions"]
    assert [(d["provider"], d["external_id"], d["kind"], d["plan_ref"], d["step"]) for d in decisions] == [
        (CHAT, "m-1", "operator_instruction", None, None),
        (OPS, "c-1", "plan_step_approval", "plan-a", "step-2"),
        (OPS, "c-2", "operator_instruction", None, None),
    ]
    assert decisions[-1]["body"] == "looks good"
    assert decisions[0]["author"] == "priya"
    for decision in decisions:
        assert datetime.fromisoformat(decision["written_at"]).utcoffset() == timedelta(0)
        assert datetime.fromisoformat(decision["observed_at"]) >= datetime.fromisoformat(decision["written_at"])
    assert page_one.status_code == 200
    assert [d["external_id"] for d in page_one.json()["items"]] == ["m-1", "c-1"]
    assert [d["external_id"] for d in page_two.json()["items"]] == ["c-2"]
    assert page_two.json()["next_cursor"] is None


async def test_a_source_error_refuses_the_lease_with_503_and_a_retry_imports_once(settings, feed):
    async with running(with_feed(settings, feed), ["decisions"]), gateway_client(with_feed(settings, feed)) as api:
        await api.put(f"/internal/subjects/{BOOKING}", json={"source": OPS}, headers=internal_headers())
        feed.add(BOOKING, "c-1", "hold the parcel at the hub")
        feed.fail(1, status=503)
        refused = await api.post(f"/internal/subjects/{BOOKING}/lease", headers=internal_headers())
        before = await api.get(f"/admin/ai/subjects/{BOOKING}/human-decisions", headers=bearer(role=1))
        retried = await api.post(f"/internal/subjects/{BOOKING}/lease", headers=internal_headers())
        feed.add(BOOKING, None, "reassign to the night shift")
        malformed = await api.post(f"/internal/subjects/{BOOKING}/lease", headers=internal_headers())
        subject = await api.put(f"/internal/subjects/{BOOKING}", json={"source": OPS}, headers=internal_headers())

    assert refused.status_code == 503
    error = refused.json()["error"]
    assert error["code"] == "HUMAN_SOURCE_UNAVAILABLE"
    assert error["details"]["source"] == OPS
    assert OPS in error["message"]
    assert before.json()["items"] == []
    assert retried.status_code == 200
    assert retried.json()["imported"] == 1
    assert malformed.status_code == 409
    assert malformed.json()["error"]["code"] == "HUMAN_INPUT_INVALID"
    assert malformed.json()["error"]["details"]["field"] == "external_id"
    assert subject.json()["cursor"] == "pos-1"


async def test_concurrent_leases_through_the_gateway_import_each_input_once(settings, feed):
    for n in range(4):
        feed.add(BOOKING, f"c-{n}", f"instruction {n}")
    feed.delay_s = 0.05
    async with running(with_feed(settings, feed), ["decisions"]), gateway_client(with_feed(settings, feed)) as api:
        await api.put(f"/internal/subjects/{BOOKING}", json={"source": OPS}, headers=internal_headers())
        replies = await asyncio.gather(
            *(api.post(f"/internal/subjects/{BOOKING}/lease", headers=internal_headers()) for _ in range(4))
        )
        listed = await api.get(f"/admin/ai/subjects/{BOOKING}/human-decisions", headers=bearer(role=3))

    assert [r.status_code for r in replies] == [200] * 4
    assert sum(r.json()["imported"] for r in replies) == 4
    assert [d["external_id"] for d in listed.json()["items"]] == ["c-0", "c-1", "c-2", "c-3"]


async def test_gates_and_bad_input_change_nothing(settings):
    async with running(settings, ["decisions"]), gateway_client(settings) as api:
        await api.put(f"/internal/subjects/{BOOKING}", json={"source": OPS}, headers=internal_headers())
        await api.put("/internal/subjects/invoice-88", json={}, headers=internal_headers())
        keyless = await api.post(f"/internal/subjects/{BOOKING}/lease")
        wrong_key = await api.post("/internal/human-inputs", json=push("m-1", "x"), headers=internal_headers("nope"))
        tenant = await api.get(f"/admin/ai/subjects/{BOOKING}/human-decisions", headers=bearer(role=1, tenant=7))
        role = await api.get(f"/admin/ai/subjects/{BOOKING}/human-decisions", headers=bearer(role=2))
        unknown_lease = await api.post("/internal/subjects/booking-0/lease", headers=internal_headers())
        unknown_list = await api.get("/admin/ai/subjects/booking-0/human-decisions", headers=bearer(role=3))
        # A source may push only once: a subject seen first here is created, never refused.
        first_sight = await api.post(
            "/internal/human-inputs", json=push("m-0", "hold", subject_id="booking-0"), headers=internal_headers()
        )
        first_sight_lease = await api.post("/internal/subjects/booking-0/lease", headers=internal_headers())
        first_sight_list = await api.get("/admin/ai/subjects/booking-0/human-decisions", headers=bearer(role=3))
        naive = await api.post(
            "/internal/human-inputs",
            json={**push("m-1", "hold"), "at": "2026-09-29T15:00:00"},
            headers=internal_headers(),
        )
        empty = await api.post("/internal/human-inputs", json=push("m-1", "  "), headers=internal_headers())
        bad_source = await api.put(
            f"/internal/subjects/{BOOKING}", json={"source": "bookings"}, headers=internal_headers()
        )
        bad_cursor = await api.get(f"/admin/ai/subjects/{BOOKING}/human-decisions?cursor=zzz", headers=bearer(role=3))
        kept = await api.post(
            "/internal/human-inputs", json=push("m-1", "hold", minutes_ago=1), headers=internal_headers()
        )
        # The same message claimed for another subject is someone's mistake, not a redelivery.
        stolen = await api.post(
            "/internal/human-inputs", json=push("m-1", "hold", subject_id="invoice-88"), headers=internal_headers()
        )
        unconfigured = await api.post(f"/internal/subjects/{BOOKING}/lease", headers=internal_headers())
        other = await api.get("/admin/ai/subjects/invoice-88/human-decisions", headers=bearer(role=3))

    assert (keyless.status_code, wrong_key.status_code) == (401, 401)
    assert (tenant.status_code, role.status_code) == (403, 403)
    # Leasing an unregistered subject is refused; a person reading it sees none.
    assert unknown_lease.status_code == 404
    assert (unknown_list.status_code, unknown_list.json()) == (200, {"items": [], "next_cursor": None})
    assert unknown_lease.json()["error"]["code"] == "SUBJECT_NOT_FOUND"
    assert first_sight.status_code == 201
    assert [d["external_id"] for d in first_sight_lease.json()["human_decisions"]] == ["m-0"]
    assert [d["body"] for d in first_sight_list.json()["items"]] == ["hold"]
    for refused, field in ((empty, "body"), (bad_source, "source"), (bad_cursor, "cursor")):
        assert refused.status_code == 422
        assert next(iter(refused.json()["error"]["details"]["fields"])) == field
    assert naive.status_code == 422
    assert kept.status_code == 201
    assert stolen.status_code == 409
    assert stolen.json()["error"]["code"] == "HUMAN_INPUT_OWNED_ELSEWHERE"
    # The bad source string did not replace the good one; with no feed
    # configured for it the lease proceeds on what is recorded.
    assert unconfigured.status_code == 200
    assert [(d["external_id"], d["body"]) for d in unconfigured.json()["human_decisions"]] == [("m-1", "hold")]
    assert unconfigured.json()["imported"] == 0
    assert other.json()["items"] == []
