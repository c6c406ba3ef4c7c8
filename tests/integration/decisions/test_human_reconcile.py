"""Reconcile before lease against real Postgres and a real HTTP feed."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta

import asyncpg
import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from services.common.db import context_engine
from services.common.errors import Conflict, NotFound, Unavailable
from services.decisions.human import reconcile
from services.decisions.human import store as human_store
from services.decisions.human.rules import HumanDecisionKind, HumanInput, Subject
from services.decisions.human.sources import build_sources
from tests.integration.decisions.human_feed import Feed, serving

OPS = "tracker:ops/bookings"
BILLING = "tracker:ops/billing"
BOOKING = "booking-4411"


@pytest.fixture
async def engine(settings) -> AsyncIterator[AsyncEngine]:
    engine = context_engine(settings.database_url, "decisions", pool_size=10)
    try:
        yield engine
    finally:
        await engine.dispose()


@pytest.fixture
def feed() -> Iterator[Feed]:
    with serving(Feed()) as running:
        yield running


def sources(*feeds: tuple[str, Feed], timeout_s: float = 3.0):
    return build_sources({source: {"url": f.url, "token": f.token, "timeout_s": timeout_s} for source, f in feeds})


async def register(
    engine: AsyncEngine, subject_id: str = BOOKING, source: str | None = OPS, plan_ref: str | None = None
) -> None:
    await reconcile.register_subject(engine, Subject(id=subject_id, source=source, plan_ref=plan_ref))


async def cursor_of(engine: AsyncEngine, subject_id: str = BOOKING) -> str:
    async with engine.connect() as conn:
        subject = await human_store.get_subject(conn, subject_id=subject_id)
    assert subject is not None
    return subject.cursor


async def count(engine: AsyncEngine) -> int:
    async with engine.connect() as conn:
        return (await conn.execute(text("select count(*) from human_decisions"))).scalar_one()


async def test_lease_imports_every_page_in_written_order_and_moves_the_cursor(engine, feed):
    await register(engine)
    for n, body in enumerate(["hold the parcel at the hub", "call the customer first", "then reassign"]):
        feed.add(BOOKING, f"c-{n}", body)

    first = await reconcile.lease(engine, sources((OPS, feed)), BOOKING)
    again = await reconcile.lease(engine, sources((OPS, feed)), BOOKING)

    assert first.imported == 3
    assert [d.body for d in first.decisions] == [
        "hold the parcel at the hub",
        "call the customer first",
        "then reassign",
    ]
    assert {(d.provider, d.subject_id, d.kind) for d in first.decisions} == {
        (OPS, BOOKING, HumanDecisionKind.OPERATOR_INSTRUCTION)
    }
    assert await cursor_of(engine) == "pos-3"
    # Three items at two per page: the first lease read two pages, the
    # second asked only after the stored cursor.
    assert feed.asked_after(BOOKING) == [None, "pos-2", "pos-3"]
    assert again.imported == 0
    assert [d.id for d in again.decisions] == [d.id for d in first.decisions]


async def test_duplicate_delivery_is_one_decision(engine, feed, template, database):
    await register(engine)
    feed.add(BOOKING, "c-1", "hold the parcel at the hub")
    feed.add(BOOKING, "c-1", "hold the parcel at the hub")

    leased = await reconcile.lease(engine, sources((OPS, feed)), BOOKING)
    pushed, created = await reconcile.record_input(
        engine,
        HumanInput(
            provider=OPS,
            external_id="c-1",
            subject_id=BOOKING,
            author="priya",
            written_at=datetime.now(UTC),
            body="hold the parcel at the hub",
        ),
    )
    # A lost cursor write: the whole range is read again.
    async with engine.begin() as conn:
        await human_store.set_cursor(conn, subject_id=BOOKING, position="")
    reread = await reconcile.lease(engine, sources((OPS, feed)), BOOKING)

    assert leased.imported == 1
    assert created is False
    assert pushed.id == leased.decisions[0].id
    assert reread.imported == 0
    assert await count(engine) == 1
    # The constraint itself refuses a second row, not only the import's check.
    conn = await asyncpg.connect(template.raw_dsn(database), server_settings={"search_path": "decisions"})
    try:
        with pytest.raises(asyncpg.UniqueViolationError):
            await conn.execute(
                "insert into human_decisions (id, subject_id, provider, external_id, kind, body, written_at,"
                " observed_at) values (gen_random_uuid(), $1, $2, 'c-1', 'operator_instruction', 'again',"
                " now(), now())",
                BOOKING,
                OPS,
            )
    finally:
        await conn.close()


async def test_source_error_refuses_the_lease_and_a_retry_imports_exactly_once(engine, feed):
    await register(engine)
    feed.add(BOOKING, "c-1", "hold the parcel at the hub")
    await reconcile.lease(engine, sources((OPS, feed)), BOOKING)
    for n in range(2, 5):
        feed.add(BOOKING, f"c-{n}", f"instruction {n}")
    # The first page of the new range answers, the second fails: nothing
    # from the range may be kept, or the lease would act on half the story.
    feed.fail(1, status=502, after_answers=1)

    with pytest.raises(Unavailable) as refused:
        await reconcile.lease(engine, sources((OPS, feed)), BOOKING)

    assert refused.value.code == "HUMAN_SOURCE_UNAVAILABLE"
    assert refused.value.details["source"] == OPS
    assert "502" in refused.value.details["reason"]
    assert await cursor_of(engine) == "pos-1"
    assert await count(engine) == 1

    retried = await reconcile.lease(engine, sources((OPS, feed)), BOOKING)

    assert retried.imported == 3
    assert [d.external_id for d in retried.decisions] == ["c-1", "c-2", "c-3", "c-4"]
    assert await cursor_of(engine) == "pos-4"
    assert await count(engine) == 4
    assert feed.asked_after(BOOKING) == [None, "pos-1", "pos-3", "pos-1", "pos-3"]


async def test_a_source_timeout_refuses_the_lease_and_leaves_the_cursor(engine, feed):
    await register(engine)
    feed.add(BOOKING, "c-1", "hold the parcel at the hub")
    feed.delay_s = 1.0

    with pytest.raises(Unavailable) as refused:
        await reconcile.lease(engine, sources((OPS, feed), timeout_s=0.2), BOOKING)

    assert refused.value.code == "HUMAN_SOURCE_TIMEOUT"
    assert await cursor_of(engine) == ""
    assert await count(engine) == 0
    feed.delay_s = 0.0
    # A generous timeout now: this lease proves the cursor was left, not speed.
    assert (await reconcile.lease(engine, sources((OPS, feed), timeout_s=5.0), BOOKING)).imported == 1


async def test_an_unreachable_source_refuses_the_lease(engine):
    await register(engine)
    with serving(Feed()) as gone:
        url = gone.url
    config = {OPS: {"url": url, "token": "feed-token", "timeout_s": 2}}

    with pytest.raises(Unavailable) as refused:
        await reconcile.lease(engine, build_sources(config), BOOKING)

    assert refused.value.code == "HUMAN_SOURCE_UNAVAILABLE"
    assert await cursor_of(engine) == ""


@pytest.mark.parametrize(
    ("item", "reason"),
    [
        ({"id": "c-2", "author": "priya", "body": "reassign"}, "written_at"),
        ({"id": "c-2", "written_at": "2026-09-29T15:00:00", "body": "reassign"}, "written_at"),
        ({"id": ["c-2"], "written_at": "2026-09-29T15:00:00+00:00", "body": "reassign"}, "id"),
        ({"id": "c-2", "written_at": "2026-09-29T15:00:00+00:00", "body": 12}, "body"),
        ("c-2", "not an object"),
    ],
)
async def test_a_malformed_answer_refuses_the_lease_and_keeps_nothing(engine, feed, item, reason):
    await register(engine)
    feed.add(BOOKING, "c-1", "hold the parcel at the hub")
    feed.add_raw(BOOKING, item)

    with pytest.raises(Conflict) as refused:
        await reconcile.lease(engine, sources((OPS, feed)), BOOKING)

    assert refused.value.code == "HUMAN_SOURCE_MALFORMED"
    assert reason in refused.value.details["reason"]
    assert await count(engine) == 0
    assert await cursor_of(engine) == ""


async def test_a_refused_token_refuses_the_lease(engine, feed):
    await register(engine)
    feed.add(BOOKING, "c-1", "hold the parcel at the hub")
    config = {OPS: {"url": feed.url, "token": "stale-token", "timeout_s": 2}}

    with pytest.raises(Unavailable) as refused:
        await reconcile.lease(engine, build_sources(config), BOOKING)

    assert refused.value.code == "HUMAN_SOURCE_UNAVAILABLE"
    assert "401" in refused.value.details["reason"]
    assert "stale-token" not in str(refused.value.details)
    assert await count(engine) == 0


async def test_empty_bodies_are_skipped_once_and_not_fetched_again(engine, feed):
    await register(engine)
    feed.add(BOOKING, "c-1", "")
    feed.add(BOOKING, "c-2", "hold the parcel at the hub")
    feed.add(BOOKING, "c-3", "  \n\t")
    feed.add(BOOKING, "c-4", None)

    first = await reconcile.lease(engine, sources((OPS, feed)), BOOKING)
    second = await reconcile.lease(engine, sources((OPS, feed)), BOOKING)

    assert [d.external_id for d in first.decisions] == ["c-2"]
    # The cursor moved past the trailing empty ones too.
    assert await cursor_of(engine) == "pos-4"
    assert feed.asked_after(BOOKING) == [None, "pos-2", "pos-4"]
    assert second.imported == 0


async def test_an_input_without_an_external_id_refuses_the_whole_range(engine, feed):
    await register(engine)
    feed.add(BOOKING, "c-1", "hold the parcel at the hub")
    feed.add(BOOKING, None, "reassign to the night shift")

    with pytest.raises(Conflict) as refused:
        await reconcile.lease(engine, sources((OPS, feed)), BOOKING)

    assert refused.value.code == "HUMAN_INPUT_INVALID"
    assert refused.value.details["field"] == "external_id"
    assert await count(engine) == 0
    assert await cursor_of(engine) == ""


async def test_a_second_source_with_the_same_ids_never_leaks_into_another_subject(engine, feed):
    with serving(Feed()) as billing:
        await register(engine, BOOKING, OPS)
        await register(engine, "invoice-88", BILLING)
        await register(engine, "booking-unsourced", None)
        await register(engine, "booking-elsewhere", "tracker:ops/unconfigured")
        feed.add(BOOKING, 1, "hold the parcel at the hub")
        feed.add(BOOKING, 2, "call the customer first")
        # The billing project numbers its threads the same way, and even
        # has a thread under the same subject name.
        billing.add("invoice-88", 1, "refund the delivery fee")
        billing.add("invoice-88", 2, "waive the late charge")
        billing.add(BOOKING, 3, "charge the customer twice")
        configured = sources((OPS, feed), (BILLING, billing))

        booking = await reconcile.lease(engine, configured, BOOKING)
        invoice = await reconcile.lease(engine, configured, "invoice-88")
        unsourced = await reconcile.lease(engine, configured, "booking-unsourced")
        elsewhere = await reconcile.lease(engine, configured, "booking-elsewhere")

        assert [(d.provider, d.external_id, d.body) for d in booking.decisions] == [
            (OPS, "1", "hold the parcel at the hub"),
            (OPS, "2", "call the customer first"),
        ]
        assert [(d.provider, d.external_id, d.body) for d in invoice.decisions] == [
            (BILLING, "1", "refund the delivery fee"),
            (BILLING, "2", "waive the late charge"),
        ]
        assert (unsourced.imported, unsourced.decisions) == (0, [])
        assert (elsewhere.imported, elsewhere.decisions) == (0, [])
        assert billing.asked_after(BOOKING) == []
        assert feed.asked_after("invoice-88") == []
        assert [s for s, _ in feed.requests + billing.requests].count("booking-unsourced") == 0


async def test_verify_binds_to_the_plan_in_force_when_it_was_written(engine, feed):
    await register(engine, plan_ref="plan-a")
    feed.add(BOOKING, "c-1", "outrider verify step-2\nchecked the route myself")
    await register(engine, plan_ref="plan-b")
    feed.add(BOOKING, "c-2", "Outrider Verify step-3")
    feed.add(BOOKING, "c-3", "looks good")
    feed.add(BOOKING, "c-4", "outrider verify")

    leased = await reconcile.lease(engine, sources((OPS, feed)), BOOKING)
    await register(engine, plan_ref=None)
    feed.add(BOOKING, "c-5", "outrider verify step-4")
    later = await reconcile.lease(engine, sources((OPS, feed)), BOOKING)

    by_id = {d.external_id: d for d in later.decisions}
    # Written under plan-a, read after plan-b was accepted: still plan-a.
    assert (by_id["c-1"].kind, by_id["c-1"].plan_ref, by_id["c-1"].step) == (
        HumanDecisionKind.PLAN_STEP_APPROVAL,
        "plan-a",
        "step-2",
    )
    assert by_id["c-1"].body == "outrider verify step-2\nchecked the route myself"
    assert (by_id["c-2"].kind, by_id["c-2"].plan_ref, by_id["c-2"].step) == (
        HumanDecisionKind.PLAN_STEP_APPROVAL,
        "plan-b",
        "step-3",
    )
    for instruction in ("c-3", "c-4", "c-5"):
        assert (by_id[instruction].kind, by_id[instruction].plan_ref, by_id[instruction].step) == (
            HumanDecisionKind.OPERATOR_INSTRUCTION,
            None,
            None,
        )
    assert leased.imported == 4


async def test_an_input_written_before_any_plan_approves_nothing(engine, feed):
    feed.add(BOOKING, "c-1", "outrider verify step-1", written_at=datetime.now(UTC) - timedelta(hours=1))
    await register(engine, plan_ref="plan-a")

    leased = await reconcile.lease(engine, sources((OPS, feed)), BOOKING)

    assert [(d.kind, d.plan_ref) for d in leased.decisions] == [(HumanDecisionKind.OPERATOR_INSTRUCTION, None)]


async def test_concurrent_leases_of_one_subject_import_each_input_once(engine, feed):
    await register(engine)
    for n in range(5):
        feed.add(BOOKING, f"c-{n}", f"instruction {n}")
    # A slow feed keeps every lease in flight at once.
    feed.delay_s = 0.05

    leases = await asyncio.gather(*(reconcile.lease(engine, sources((OPS, feed)), BOOKING) for _ in range(6)))

    assert sum(lease.imported for lease in leases) == 5
    assert await count(engine) == 5
    assert all([d.external_id for d in lease.decisions] == [f"c-{n}" for n in range(5)] for lease in leases)
    # Serialised on the subject: only the first read from the start.
    assert feed.asked_after(BOOKING).count(None) == 1


async def test_a_lease_of_an_unknown_subject_is_not_found(engine, feed):
    with pytest.raises(NotFound) as missing:
        await reconcile.lease(engine, sources((OPS, feed)), "booking-0")

    assert missing.value.code == "SUBJECT_NOT_FOUND"
    assert feed.requests == []


async def test_a_moved_subject_reads_its_new_source_from_the_start(engine, feed):
    with serving(Feed()) as billing:
        await register(engine)
        feed.add(BOOKING, "c-1", "hold the parcel at the hub")
        billing.add(BOOKING, "b-1", "refund the delivery fee")
        configured = sources((OPS, feed), (BILLING, billing))
        await reconcile.lease(engine, configured, BOOKING)
        await register(engine, source=BILLING)

        moved = await reconcile.lease(engine, configured, BOOKING)

        assert billing.asked_after(BOOKING) == [None]
        assert [(d.provider, d.external_id) for d in moved.decisions] == [(OPS, "c-1"), (BILLING, "b-1")]
        assert await cursor_of(engine) == "pos-1"
