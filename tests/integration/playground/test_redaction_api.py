"""Nothing personal leaves the playground: the demo backend's riders and
customers, read through the real gateway, playground and HTTP executors,
reach neither the model API, nor the stored trace, nor the logs."""

from __future__ import annotations

import json
import logging
import re

import asyncpg

from launcher.demo.backend import build_world, create_backend
from services.common.logs import JsonFormatter
from tests.harness import bearer, with_env
from tests.integration.playground.scripted import Call, Say
from tests.integration.playground.support import playground


def personal_values() -> tuple[set[str], set[str]]:
    """(strings, names) the demo backend holds about real-looking people."""
    riders, bookings = build_world()
    strings: set[str] = set()
    names: set[str] = set()

    def phone(written: str) -> None:
        strings.update({written, written.removeprefix("+91 ")})

    def place(coordinate: float) -> None:
        # Four decimals is about ten metres; the model gets two.
        whole, _, fraction = repr(coordinate).partition(".")
        strings.add(f"{whole}.{fraction[:4]}")

    for rider in riders:
        names.update(rider.name.split())
        phone(rider.phone)
        place(rider.lat)
        place(rider.lon)
    for booking in bookings:
        names.update(booking.customer_name.split())
        phone(booking.customer_phone)
        strings.update({booking.customer_email, booking.drop_address, ",".join(booking.drop_address.split(",")[:2])})
        for alternate in re.findall(r"\+91 \d{10}", booking.note):
            phone(alternate)
        for coordinate in (booking.pickup_lat, booking.pickup_lon, booking.drop_lat, booking.drop_lon):
            place(coordinate)
    return strings, names


def leaks(text: str, strings: set[str], names: set[str]) -> list[str]:
    found = [value for value in strings if value in text]
    found += [name for name in names if re.search(rf"\b{re.escape(name)}\b", text, re.IGNORECASE)]
    return sorted(found)


async def test_no_personal_value_of_the_demo_backend_reaches_the_model_the_trace_or_the_logs(
    settings, template, database, caplog
):
    # The levels every service logs at (services.common.logs.configure):
    # INFO, with httpx's request lines at WARNING.
    # (httpx first: each call also sets the capturing handler's level.)
    caplog.set_level(logging.WARNING, logger="httpx")
    caplog.set_level(logging.INFO)
    riders, bookings = build_world()
    customer = bookings[0]
    phone_as_id = int(riders[1].phone.removeprefix("+91 "))
    configured = with_env(settings, redact_keys=("payment_mode",))
    async with playground(configured, backend_app=create_backend()) as pg:
        pg.model.script(
            Call(
                ("list_express_bookings", {"tenant_id": 3, "status": "waiting"}),
                ("list_express_riders", {"tenant_id": 3}),
            ),
            Say(f"Rider {riders[0].name} ({riders[0].phone}) should take the batch."),
        )
        dispatch = await pg.run("EXPRESS_DISPATCH_AGENT", "Batch the waiting express bookings for tenant 3.")
        pg.model.script(
            Call(
                ("get_booking_cache", {"booking_id": customer.booking_id}),
                ("get_booking_cache", {"booking_id": phone_as_id}),
            ),
            Say("The booking is on its way."),
        )
        service = await pg.run(
            "CUSTOMER_AGENT",
            f"{customer.customer_name} ({customer.customer_email}, {customer.customer_phone}) asks where "
            f"booking {customer.booking_id} is.",
        )
        pg.model.script(Call(("scan_bookings", {"limit": 200})), Say("Eight bookings are in transit."))
        briefing = await pg.run("CONSOLE_OPS_AGENT", "Brief me on open bookings.", skill_id="ops_briefing")
        replies = [dispatch, service, briefing]
        stored = [
            await pg.client.get(f"/admin/ai/playground/runs/{r.json()['id']}", headers=bearer(role=3)) for r in replies
        ]
        listed = await pg.client.get("/admin/ai/playground/runs", headers=bearer(role=3))

    assert [r.status_code for r in replies + stored] == [200] * 6, [r.text for r in replies]
    strings, names = personal_values()

    # What the model API received: every request body of all three runs,
    # less the assistant turns, which echo the model's own words back to it
    # (here a phone-shaped booking id the script made it ask for).
    sent = json.dumps(
        [{**body, "messages": [m for m in body["messages"] if m["role"] == "user"]} for body in pg.model.requests],
        ensure_ascii=False,
    )
    assert leaks(sent, strings, names) == []
    # ...while the model still sees what dispatch needs.
    answers = pg.model.requests[1]["messages"][-1]["content"]
    waiting, fleet = (json.loads(block["content"])["items"] for block in answers)
    assert {b["booking_id"] for b in waiting} == {b.booking_id for b in bookings if b.status == "waiting"}
    assert all(
        b["customer_name"].startswith("<person#")
        and b["customer_phone"].startswith("<phone#")
        and b["customer_email"].startswith("<email#")
        and b["drop_address"].startswith("<address#")
        and b["payment_mode"].startswith("<payment_mode#")
        for b in waiting
    )
    assert [(r["rider_id"], r["battery_pct"], r["vehicle"]) for r in fleet] == [
        (r.rider_id, r.battery_pct, r.vehicle) for r in riders
    ]
    assert [(r["lat"], r["lon"]) for r in fleet] == [(round(r.lat, 2), round(r.lon, 2)) for r in riders]
    assert len({r["name"] for r in fleet}) == len({r.name for r in riders})

    # What the trace stores and the gateway shows.
    for reply, got in zip(replies, stored, strict=True):
        assert got.json() == reply.json()
        assert leaks(got.text, strings, names) == []
    dispatch_trace, service_trace, briefing_trace = (r.json() for r in replies)
    # The model's answer names the rider by the placeholders it was shown for him.
    assert dispatch_trace["final_text"] == f"Rider {fleet[0]['name']} ({fleet[0]['phone']}) should take the batch."
    assert service_trace["prompt"].startswith("<person#")
    assert "<email#" in service_trace["prompt"] and "<phone#" in service_trace["prompt"]
    # A tool input and the error it caused hold no phone either.
    failed = service_trace["steps"][1]
    # (the prompt's phone is <phone#1>; this one is the run's second)
    assert failed["input"] == {"booking_id": "<phone#2>"}
    assert failed["error"] == "GET /bookings/cache/<phone#2> answered 404"
    for trace in (dispatch_trace, service_trace, briefing_trace):
        assert {"person", "phone", "email", "address", "coordinate"} <= set(trace["redactions"])
    assert dispatch_trace["redactions"]["payment_mode"] == 3
    assert briefing_trace["redactions"]["person"] >= 27
    assert {item["id"]: item["redactions"] for item in listed.json()["items"]} == {
        t["id"]: t["redactions"] for t in (dispatch_trace, service_trace, briefing_trace)
    }
    conn = await asyncpg.connect(template.raw_dsn(database), server_settings={"search_path": "playground"})
    try:
        rows = await conn.fetch("select * from runs")
    finally:
        await conn.close()
    assert len(rows) == 3
    assert leaks("\n".join(json.dumps(dict(row), default=str) for row in rows), strings, names) == []

    # What the logs printed, formatted as the services print them.
    formatter = JsonFormatter("test")
    printed = "\n".join(formatter.format(record) for record in caplog.records)
    assert leaks(printed, strings, names) == []
    summaries = [r for r in caplog.records if r.getMessage() == "playground run"]
    assert [s.redactions for s in summaries] == [
        t["redactions"] for t in (dispatch_trace, service_trace, briefing_trace)
    ]


async def test_a_run_that_cannot_be_stored_logs_its_failure_redacted(settings, template, database, caplog):
    caplog.set_level(logging.WARNING, logger="httpx")
    caplog.set_level(logging.INFO)
    async with playground(settings) as pg:
        conn = await asyncpg.connect(template.raw_dsn(database), server_settings={"search_path": "playground"})
        try:
            # The insert fails, and the driver's error quotes the row it was given.
            await conn.execute("alter table runs rename column created_by_email to operator_email")
        finally:
            await conn.close()
        pg.model.script(Say("Booking 1001 is on its way."))
        reply = await pg.run("CUSTOMER_AGENT", "Where is booking 1001?")

    assert reply.status_code == 500
    assert reply.json()["error"] == {
        "code": "INTERNAL",
        "message": "an internal error occurred",
        "details": {"request_id": reply.headers["x-request-id"]},
    }
    printed = "\n".join(JsonFormatter("test").format(record) for record in caplog.records)
    assert "ops@example.com" not in printed
    [failed] = [r for r in caplog.records if r.getMessage() == "playground run failed"]
    assert failed.error_type == "ProgrammingError" and "created_by_email" in failed.detail
    assert "<email#1>" in failed.detail
