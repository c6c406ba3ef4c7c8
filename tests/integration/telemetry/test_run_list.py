"""The run list and a run's detail through REST: runs from telemetry.task and
from OTLP spans, filtered and paged, and each opened with its model calls."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import httpx

from services.common import paging
from tests.harness import INTERNAL_KEY, bearer, eventually, gateway_client, running, with_env
from tests.integration.telemetry.otlp_support import START, TRACE, export, live_gateway, span
from tests.integration.telemetry.support import broker, counters, execute, task

PROTOBUF = {"Content-Type": "application/x-protobuf", "X-Internal-Key": INTERNAL_KEY}
SPAN_START = datetime.fromtimestamp(START / 10**9, tz=UTC)
# A second trace, for calls of the sweep engine made outside any OTLP run.
LOOSE_TRACE = bytes.fromhex("0af7651916cd43dd8448eb211c80319c")


def at(span_, start: datetime, ms: int):
    """The span moved to start at `start`, `ms` long."""
    nanos = int(start.timestamp()) * 10**9 + start.microsecond * 1000
    span_.start_time_unix_nano = nanos
    span_.end_time_unix_nano = nanos + ms * 1_000_000
    return span_


def chat(n: int, *, parent: int, trace: bytes = TRACE, ms: int = 50, **attributes):
    return span(n, "chat", parent=parent, trace=trace, ms=ms, gen_ai__operation__name="chat", **attributes)


async def _runs(client: httpx.AsyncClient, **params) -> httpx.Response:
    return await client.get("/admin/ai/runs", params=params, headers=bearer(role=3))


async def test_runs_are_listed_filtered_paged_and_opened_with_their_model_calls(settings):
    fast = with_env(settings, telemetry_batch_wait_ms=100)
    traced = export(
        span(1, "handle_booking", ms=400),
        chat(
            2,
            parent=1,
            ms=120,
            gen_ai__request__model="claude-sonnet-4",
            gen_ai__response__model="claude-sonnet-4-5",
            gen_ai__usage__input_tokens=300,
            gen_ai__usage__output_tokens=40,
        ),
        chat(3, parent=1, ms=80, gen_ai__request__model="claude-haiku-4-5", error__type="overloaded"),
        service="booking-engine",
    )
    # The sweep engine reports its runs on telemetry.task and its model calls
    # over OTLP, under no run span: one call falls inside its run, one after.
    sweep_start = SPAN_START - timedelta(seconds=30)
    loose = export(
        at(chat(7, parent=6, trace=LOOSE_TRACE, gen_ai__usage__input_tokens=5), sweep_start + timedelta(seconds=1), 30),
        at(chat(8, parent=6, trace=LOOSE_TRACE), sweep_start + timedelta(seconds=5), 30),
        service="sweep-engine",
    )
    async with (
        running(fast, ["telemetry"]),
        live_gateway(fast) as base,
        broker(fast) as (_, js),
        httpx.AsyncClient(base_url=base) as client,
    ):
        for body in (traced, loose):
            answer = await client.post("/v1/traces", content=body.SerializeToString(), headers=PROTOBUF)
            assert answer.status_code == 200, answer.text
        for n in range(5):
            failed = n == 3
            await js.publish(
                "telemetry.task",
                task(
                    "sweep-engine",
                    f"sweep-{n}",
                    started=sweep_start - timedelta(minutes=n),
                    ms=2000,
                    task_type="sweep_bookings" if n % 2 == 0 else "reconcile",
                    status="failed" if failed else "succeeded",
                    error="hub unreachable" if failed else None,
                ),
            )
        await eventually(
            lambda: counters(fast),
            lambda seen: (seen["inserted"], seen["otlp_runs_inserted"], seen["model_calls_inserted"]) == (5, 1, 4),
            what="five task runs, one OTLP run and four model calls",
        )

        everything = await _runs(client)
        pages, cursor = [], None
        while True:
            reply = await _runs(client, limit=2, **({"cursor": cursor} if cursor else {}))
            assert reply.status_code == 200, reply.text
            pages.append([item["task_id"] for item in reply.json()["items"]])
            cursor = reply.json()["next_cursor"]
            if cursor is None:
                break
        one_agent = await _runs(client, agent_id="sweep-engine")
        agent_pages, cursor = [], None
        while True:
            reply = await _runs(client, agent_id="sweep-engine", limit=2, **({"cursor": cursor} if cursor else {}))
            agent_pages.append([item["task_id"] for item in reply.json()["items"]])
            cursor = reply.json()["next_cursor"]
            if cursor is None:
                break
        # A cursor ending on another agent's run, used with an agent's
        # filter, still means "after that run" in the whole list's order.
        after_booking = (await _runs(client, limit=1)).json()["next_cursor"]
        foreign = await _runs(client, agent_id="sweep-engine", limit=2, cursor=after_booking)
        failed = await _runs(client, status="failed")
        typed = await _runs(client, task_type="reconcile")
        ranged = await _runs(
            client,
            **{
                "from": (sweep_start - timedelta(minutes=2)).isoformat(),
                "to": (sweep_start - timedelta(minutes=1)).isoformat(),
            },
        )
        booking_run = everything.json()["items"][0]
        traced_detail = await client.get(
            f"/admin/ai/runs/booking-engine/{booking_run['task_id']}", headers=bearer(role=4)
        )
        window_detail = await client.get("/admin/ai/runs/sweep-engine/sweep-0", headers=bearer(role=1))
        unknown = await client.get("/admin/ai/runs/sweep-engine/no-such-task", headers=bearer(role=3))
        bad_cursor = await _runs(client, cursor="bm90LWEtY3Vyc29y")
        empty_range = await _runs(client, **{"from": SPAN_START.isoformat(), "to": SPAN_START.isoformat()})
        tenant = await client.get("/admin/ai/runs", headers=bearer(role=1, tenant=7))
        tenant_detail = await client.get("/admin/ai/runs/sweep-engine/sweep-0", headers=bearer(role=1, tenant=7))

    assert everything.status_code == 200, everything.text
    listed = everything.json()
    order = [(item["agent_id"], item["task_id"]) for item in listed["items"]]
    booking_task = f"{TRACE.hex()}-{(1).to_bytes(8, 'big').hex()}"
    # Newest start first: the OTLP run began 30 s after the newest sweep.
    assert order == [("booking-engine", booking_task)] + [("sweep-engine", f"sweep-{n}") for n in range(5)]
    assert listed["next_cursor"] is None
    assert booking_run == {
        "agent_id": "booking-engine",
        "task_id": booking_task,
        "task_type": "handle_booking",
        "status": "succeeded",
        "started_at": SPAN_START.isoformat(),
        "finished_at": (SPAN_START + timedelta(milliseconds=400)).isoformat(),
        "duration_ms": 400.0,
        "error": None,
        "trace_id": TRACE.hex(),
    }
    assert [len(page) for page in pages] == [2, 2, 2]
    assert [task_id for page in pages for task_id in page] == [task_id for _, task_id in order]

    assert [item["task_id"] for item in one_agent.json()["items"]] == [f"sweep-{n}" for n in range(5)]
    assert agent_pages == [["sweep-0", "sweep-1"], ["sweep-2", "sweep-3"], ["sweep-4"]]
    assert [item["task_id"] for item in foreign.json()["items"]] == ["sweep-0", "sweep-1"]
    [failure] = failed.json()["items"]
    assert (failure["task_id"], failure["error"], failure["trace_id"]) == ("sweep-3", "hub unreachable", None)
    assert [item["task_id"] for item in typed.json()["items"]] == ["sweep-1", "sweep-3"]
    # From inclusive, to exclusive.
    assert [item["task_id"] for item in ranged.json()["items"]] == ["sweep-2"]

    assert traced_detail.status_code == 200, traced_detail.text
    traced_body = traced_detail.json()
    assert traced_body["run"] == booking_run
    assert traced_body["matched_by"] == "trace" and traced_body["model_calls_truncated"] is False
    calls = {call["span_id"]: call for call in traced_body["model_calls"]}
    assert sorted(calls) == [(2).to_bytes(8, "big").hex(), (3).to_bytes(8, "big").hex()]
    answered = calls[(2).to_bytes(8, "big").hex()]
    assert (answered["model"], answered["input_tokens"], answered["output_tokens"]) == ("claude-sonnet-4-5", 300, 40)
    assert (answered["status"], answered["error_type"], answered["duration_ms"]) == ("succeeded", None, 120.0)
    refused = calls[(3).to_bytes(8, "big").hex()]
    assert (refused["model"], refused["input_tokens"], refused["output_tokens"]) == ("claude-haiku-4-5", None, None)
    assert (refused["status"], refused["error_type"]) == ("failed", "overloaded")

    assert window_detail.status_code == 200, window_detail.text
    window_body = window_detail.json()
    assert window_body["matched_by"] == "window"
    [inside] = window_body["model_calls"]
    assert (inside["span_id"], inside["input_tokens"]) == ((7).to_bytes(8, "big").hex(), 5)

    assert unknown.status_code == 404
    assert unknown.json()["error"]["code"] == "RUN_NOT_FOUND"
    assert unknown.json()["error"]["details"] == {"agent_id": "sweep-engine", "task_id": "no-such-task"}
    assert bad_cursor.status_code == 422 and list(bad_cursor.json()["error"]["details"]["fields"]) == ["cursor"]
    assert empty_range.status_code == 422 and list(empty_range.json()["error"]["details"]["fields"]) == ["started_to"]
    assert tenant.status_code == 403 and tenant_detail.status_code == 403


async def test_the_filter_offers_every_agent_that_ran_in_the_month_registered_or_not(settings, template, database):
    await execute(
        template,
        database,
        "insert into runs (agent_id, task_id, task_type, status, started_at, finished_at, duration_ms)"
        " select agent, 't-' || extract(day from ago) || '-' || n, 'stall_response', 'succeeded',"
        " now() - ago, now() - ago, 10"
        " from (values ('DISPATCH_AGENT', interval '1 hour'), ('NIGHT_SHIFT_AGENT', interval '29 days'),"
        "              ('RETIRED_LAST_YEAR', interval '40 days'), ('DISPATCH_AGENT', interval '35 days'))"
        "   as seeded(agent, ago), generate_series(1, 3) as n",
    )
    async with running(settings, ["telemetry"]), gateway_client(settings) as client:
        month = await client.get("/admin/ai/runs/facets", headers=bearer(role=3))
        day = await client.get("/admin/ai/runs/facets", params={"days": 1}, headers=bearer(role=4))
        too_long = await client.get("/admin/ai/runs/facets", params={"days": 31}, headers=bearer(role=3))
        stranger = await client.get("/admin/ai/runs/facets", headers=bearer(role=2))
    assert month.status_code == 200, month.text
    assert month.json() == {"window_days": 30, "agent_ids": ["DISPATCH_AGENT", "NIGHT_SHIFT_AGENT"]}
    assert day.json() == {"window_days": 1, "agent_ids": ["DISPATCH_AGENT"]}
    assert too_long.status_code == 422 and stranger.status_code == 403


async def test_the_slowest_runs_page_longest_first_each_once_and_export_the_same(settings, template, database):
    # 130 runs over 40 distinct durations (ties broken by agent and task), in a day.
    await execute(
        template,
        database,
        "insert into runs (agent_id, task_id, task_type, status, started_at, finished_at, duration_ms)"
        " select case when n % 2 = 0 then 'DISPATCH_AGENT' else 'EXCEPTION_AGENT' end, 't-' || n, 'stall_response',"
        " 'succeeded', now() - make_interval(mins => n), now() - make_interval(mins => n), (n % 40) * 12.5"
        " from generate_series(1, 130) as n",
    )
    async with running(settings, ["telemetry"]), gateway_client(settings) as client:
        pages, cursor = [], ""
        while True:
            reply = await client.get(
                "/admin/ai/runs", params={"order": "slowest", "limit": 25, "cursor": cursor}, headers=bearer(role=3)
            )
            assert reply.status_code == 200, reply.text
            pages.append(reply.json()["items"])
            cursor = reply.json()["next_cursor"]
            if not cursor:
                break
        exported = await client.get(
            "/admin/ai/runs/export", params={"order": "slowest", "format": "jsonl"}, headers=bearer(role=3)
        )
        mixed = await client.get("/admin/ai/runs", params={"cursor": cursor_of(pages[0])}, headers=bearer(role=3))
        unknown = await client.get("/admin/ai/runs", params={"order": "fastest"}, headers=bearer(role=3))

    listed = [run for page in pages for run in page]
    assert len(pages) == 6 and len(listed) == 130
    assert len({(r["agent_id"], r["task_id"]) for r in listed}) == 130
    order = [(r["duration_ms"], r["agent_id"], r["task_id"]) for r in listed]
    assert order == sorted(order, reverse=True)
    assert [json.loads(line) for line in exported.text.splitlines()] == listed
    assert mixed.status_code == 422 and unknown.status_code == 422


def cursor_of(page: list[dict]) -> str:
    """A cursor of the slowest order, as the list issues it after `page`."""
    last = page[-1]
    return paging.encode_cursor("slowest", last["duration_ms"], last["agent_id"], last["task_id"])
