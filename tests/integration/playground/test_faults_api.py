"""Every run the playground admits is stored, however it ends: a console that
hangs up, a read answering something hostile, a fault nobody foresaw, the
deadline, a shutdown, a playground that died. Through the real gateway, the
real contexts, Postgres and a scripted model API."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
import uuid
from datetime import UTC, datetime, timedelta

import grpc
import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from outrider.v1 import playground_pb2, playground_pb2_grpc
from services.common.db import context_engine
from services.common.runtime import ContextServer
from services.playground import engine, executors, store
from services.playground.runs import CANCELLED_ERROR
from tests.harness import bearer, eventually, person, reserved_port, service_channel, with_env
from tests.integration.playground.scripted import BOOKING, Call, Say
from tests.integration.playground.support import RUN, count_rows, playground, served_gateway, sse_events

STREAM = {"Accept": "text/event-stream"}
READ = ("get_booking_cache", {"booking_id": 1001})
# A row of a page of bookings: no personal data, about 60 bytes of JSON.
PAGE_ROW = {"booking_id": 1, "status": "waiting", "zone": "north", "eta_minutes": 12}


def body(agent_id: str = "CUSTOMER_AGENT", prompt: str = "Where is booking 1001?") -> dict:
    return {"agent_id": agent_id, "prompt": prompt}


async def stored_run(pg, run_id: str, *, ended: bool = True) -> dict:
    """The run as the gateway shows it, once its end is written."""

    async def read() -> dict:
        return (await pg.client.get(f"/admin/ai/playground/runs/{run_id}", headers=bearer(role=3))).json()

    return await eventually(read, lambda run: not ended or run["status"] == "finished", what=f"run {run_id} ended")


async def test_a_console_that_hangs_up_leaves_its_run_stored_with_the_steps_it_saw(settings, template, database):
    dsn = template.raw_dsn(database)
    async with playground(settings) as pg, served_gateway(pg.settings) as url:
        runs = []
        async with httpx.AsyncClient(base_url=url, timeout=20) as http:
            for steps_seen in (0, 1, 2):
                # The model answers the turn after the last step seen only
                # after a while: the console is gone by then.
                pg.model.script(*[Call(READ)] * steps_seen, Say("Too late to matter.", delay_s=3))
                events = []
                async with http.stream("POST", RUN, json=body(), headers={**bearer(), **STREAM}) as reply:
                    async for event in sse_events(reply):
                        events.append(event)
                        if len(events) == 1 + steps_seen:
                            break
                runs.append((steps_seen, events, await stored_run(pg, events[0][1]["id"])))
        admissions = await count_rows(dsn, "run_admissions")
        stored = await count_rows(dsn, "runs")

    for steps_seen, events, run in runs:
        assert [name for name, _ in events] == ["started"] + ["step"] * steps_seen
        assert run["id"] == events[0][1]["id"]
        assert (run["status"], run["stop_reason"]) == ("finished", "cancelled")
        assert run["error"] == CANCELLED_ERROR
        assert run["steps"] == [data for _, data in events[1:]]
        assert run["step_count"] == steps_seen and run["turns"] == steps_seen + 1
        # Cut off while the model was still thinking, not after it answered.
        assert run["final_text"] == ""
    # One admission per run, each stored once.
    assert (admissions, stored) == (3, 3)


async def test_whenever_the_console_hangs_up_every_admitted_run_is_stored_once_and_ended(settings, template, database):
    # Hang-ups every 50 ms over a run of three reads, from before the first
    # step to after the answer.
    moments = [0.05 * n for n in range(16)]
    dsn = template.raw_dsn(database)
    async with playground(settings) as pg, served_gateway(pg.settings) as url:
        outcomes = []
        async with httpx.AsyncClient(base_url=url, timeout=20) as http:
            for n, moment in enumerate(moments):
                pg.model.script(*[Call(READ, delay_s=0.1)] * 3, Say("All read.", delay_s=0.1))
                events: list = []

                async def follow(reply: httpx.Response, events: list) -> None:
                    async for event in sse_events(reply):
                        events.append(event)

                async with http.stream("POST", RUN, json=body(), headers={**bearer(sub=f"u-{n}"), **STREAM}) as reply:
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(follow(reply, events), moment)
                if events:
                    outcomes.append((events, await stored_run(pg, events[0][1]["id"])))
        listed = (await pg.client.get("/admin/ai/playground/runs?limit=50", headers=bearer(role=3))).json()["items"]
        admissions = await count_rows(dsn, "run_admissions")

    # Every admission has its run, stored once and ended, however far it got.
    assert admissions == len(listed) == len(moments)
    assert {item["status"] for item in listed} == {"finished"}
    assert {item["stop_reason"] for item in listed} <= {"cancelled", "end_turn"}
    for events, run in outcomes:
        seen = [data for name, data in events if name == "step"]
        assert run["steps"][: len(seen)] == seen
        if run["stop_reason"] == "end_turn":
            assert len(run["steps"]) == 3 and run["final_text"] == "All read."
        else:
            assert len(run["steps"]) < 3 or run["final_text"] == ""


async def test_the_deadline_ends_a_run_stored_with_what_it_did(settings):
    async with playground(with_env(settings, playground_run_deadline_s=1)) as pg:
        pg.model.script(Call(READ), Say("too late", delay_s=3))
        plain = await pg.run("CUSTOMER_AGENT", "Where is booking 1001?")
        pg.model.script(Call(READ), Say("too late", delay_s=3))
        streamed = await pg.run("CUSTOMER_AGENT", "Where is booking 1001?", headers=STREAM)
        done = json.loads(streamed.text.strip().split("\n\n")[-1].split("\n")[1].removeprefix("data: "))
        stored = [await stored_run(pg, trace["id"]) for trace in (plain.json(), done)]

    assert plain.status_code == 200 and streamed.status_code == 200
    for trace in (plain.json(), done, *stored):
        assert (trace["status"], trace["stop_reason"]) == ("finished", "deadline")
        assert trace["error"] == "the run passed its 1 s deadline"
        assert [s["outcome"] for s in trace["steps"]] == ["executed"]


def hostile_backend(read_cap: int) -> tuple[Starlette, dict[str, int]]:
    """A backend answering each kind of body a read must survive; counts the
    chunks of its endless body that anyone pulled."""
    pulled = {"endless": 0}
    deep = "[" * 30_000 + "]" * 30_000
    personal = json.dumps({"rows": [{"email": f"rider{n}@example.in", "status": "ok"} for n in range(read_cap)]})

    async def endless():
        while True:
            pulled["endless"] += 1
            yield b'{"email": "rider@example.in"},' * 32
            # As a real backend would, between writes: once the reader has
            # gone, the server's writes no longer wait on anything.
            await asyncio.sleep(0)

    bodies = {
        "nul": lambda: Response('{"status\\u0000": "in\\u0000transit"}', media_type="application/json"),
        "surrogate": lambda: Response('{"status": "half \\ud800 a pair"}', media_type="application/json"),
        "deep": lambda: Response(deep, media_type="application/json"),
        "not_utf8": lambda: Response(b'{"status": "\xff\xfe"}', media_type="application/json"),
        "huge_number": lambda: Response('{"n": ' + "7" * 5000 + "}", media_type="application/json"),
        "oversized": lambda: Response(personal, media_type="application/json"),
        "endless": lambda: StreamingResponse(endless(), media_type="application/json"),
        "server_error": lambda: JSONResponse({"detail": "rider9@example.in broke it"}, status_code=500),
        "page": lambda: JSONResponse({"rows": [PAGE_ROW] * 24}),
    }

    async def booking(request: Request) -> Response:
        return bodies[request.path_params["kind"]]()

    return Starlette(routes=[Route("/bookings/cache/{kind}", booking, methods=["GET"])]), pulled


async def test_whatever_a_read_answers_the_run_goes_on_and_is_stored(settings, template, database):
    cap = 64 * 1024
    app, pulled = hostile_backend(cap)
    expected = {
        "nul": ("", {"status\ufffd": "in\ufffdtransit"}),
        "surrogate": ("", {"status": "half \ufffd a pair"}),
        "deep": ("GET /bookings/cache/deep answered JSON nested too deeply to read", None),
        "not_utf8": ("", '{"status": "\ufffd\ufffd"}'),
        "huge_number": ("", None),
        "oversized": ("GET /bookings/cache/oversized answered", None),
        "endless": (
            "GET /bookings/cache/endless answered more than 65,536 bytes; reading stopped there, none of it used",
            None,
        ),
        "server_error": ("GET /bookings/cache/server_error answered 500", None),
    }
    async with playground(with_env(settings, playground_http_read_bytes=cap), backend_app=app) as pg:
        traces = {}
        for kind in expected:
            pg.model.script(Call(("get_booking_cache", {"booking_id": kind})), Say("Noted."))
            reply = await pg.run("CUSTOMER_AGENT", "Where is booking 1001?", sub=f"u-{kind}")
            assert reply.status_code == 200, (kind, reply.text)
            traces[kind] = await stored_run(pg, reply.json()["id"])
        sent = pg.model.sent_text()

    for kind, (error, result) in expected.items():
        trace = traces[kind]
        assert (trace["status"], trace["stop_reason"], trace["final_text"]) == ("finished", "end_turn", "Noted."), kind
        [step] = trace["steps"]
        assert step["outcome"] == "executed"
        assert (step["error"] or "").startswith(error), (kind, step["error"])
        if result is not None:
            assert json.loads(step["result"]) == result, kind
    assert traces["oversized"]["steps"][0]["error"].endswith("bytes; the playground reads at most 65,536")
    # Refused before redaction saw a byte: nothing of them reached the model,
    # and not one of their e-mail addresses was counted.
    assert "example.in" not in sent
    assert "email" not in traces["oversized"]["redactions"] and "email" not in traces["endless"]["redactions"]
    # The endless body was read to just past the cap, then dropped.
    assert pulled["endless"] * 32 * len(b'{"email": "rider@example.in"},') < 2 * cap


async def test_tool_calls_per_turn_and_result_bytes_per_run_are_capped_and_the_model_told(settings):
    capped = with_env(settings, playground_tool_calls_per_turn=3, playground_result_bytes_per_run=4096)
    app, _ = hostile_backend(1024)
    page = ("get_booking_cache", {"booking_id": "page"})
    async with playground(capped, backend_app=app) as pg:
        pg.model.script(Call(*[page] * 5), Call(page), Say("That is all I could read."))
        reply = await pg.run("CUSTOMER_AGENT", "List the waiting bookings.")
        trace = await stored_run(pg, reply.json()["id"])
        second_turn = pg.model.requests[1]["messages"][-1]["content"]

    assert reply.json() == trace
    steps = trace["steps"]
    assert [(s["turn"], s["outcome"]) for s in steps] == [
        (1, "executed"),
        (1, "executed"),
        (1, "executed"),
        (1, "rejected"),
        (1, "rejected"),
        (2, "rejected"),
    ]
    sizes = [len(s["result"].encode()) for s in steps[:3]]
    assert sum(sizes) == 4096 and "…[truncated " in steps[2]["result"]
    assert steps[3]["reason"] == "over the limit of 3 tool calls per turn; not carried out"
    assert steps[5]["reason"] == "this run's 4,096 bytes of tool results are spent; answer with what you have"
    assert [block["is_error"] for block in second_turn] == [False, False, False, True, True]
    assert trace["final_text"] == "That is all I could read."


async def test_a_read_raising_what_nobody_foresaw_is_told_to_the_model_and_the_run_goes_on(settings, monkeypatch):
    calls = []

    async def broken(self, spec, tool_input):
        calls.append(tool_input)
        raise RuntimeError("the backend library choked on ananya.rao@example.in")

    monkeypatch.setattr(executors.ToolExecutors, "_get", broken)
    async with playground(settings) as pg:
        pg.model.script(Call(READ), Say("The read broke."))
        streamed = await pg.run("CUSTOMER_AGENT", "Where is booking 1001?", headers=STREAM)
        run_id = json.loads(streamed.text.split("\n")[1].removeprefix("data: "))["id"]
        trace = await stored_run(pg, run_id)
        sent = pg.model.sent_text()

    assert calls == [{"booking_id": 1001}]
    [step] = trace["steps"]
    assert step["error"] == "get_booking_cache failed: RuntimeError: the backend library choked on <email#1>"
    assert json.loads(step["result"]) == {"error": step["error"]}
    assert "ananya" not in sent + json.dumps(trace)
    assert (trace["stop_reason"], trace["final_text"]) == ("end_turn", "The read broke.")


async def test_a_fault_in_the_run_itself_ends_it_stored_with_the_steps_before_it(settings, monkeypatch):
    real_call = engine.RunLoop._call
    real_record = store.record_step
    faults = {"call": 0, "record": 0}

    async def call_then_fail(self, name, raw_input, **kwargs):
        faults["call"] += 1
        if faults["call"] % 2 == 0:
            raise RuntimeError("a bug, holding 9845012345")
        return await real_call(self, name, raw_input, **kwargs)

    async def record_fails_once(conn, **kwargs):
        faults["record"] += 1
        if faults["record"] == 3:
            raise ConnectionResetError("the step's write was lost")
        await real_record(conn, **kwargs)

    monkeypatch.setattr(engine.RunLoop, "_call", call_then_fail)
    monkeypatch.setattr(store, "record_step", record_fails_once)
    async with playground(settings) as pg:
        traces = []
        for headers in ({}, STREAM):
            # Call one executes; call two is the bug.
            pg.model.script(Call(READ), Call(READ), Say("unreachable"))
            reply = await pg.run("CUSTOMER_AGENT", "Where is booking 1001?", headers=headers)
            assert reply.status_code == 200, reply.text
            run_id = (
                reply.json()["id"]
                if not headers
                else json.loads(reply.text.split("\n")[1].removeprefix("data: "))["id"]
            )
            traces.append(await stored_run(pg, run_id))
        # The third step write fails: the first call of the third run.
        pg.model.script(Call(READ), Say("unreachable"))
        lost_write = await pg.run("CUSTOMER_AGENT", "Where is booking 1001?")
        traces.append(await stored_run(pg, lost_write.json()["id"]))

    for trace in traces[:2]:
        assert (trace["status"], trace["stop_reason"]) == ("finished", "error")
        assert trace["error"] == "the playground run failed (RuntimeError)"
        assert [(s["turn"], s["outcome"]) for s in trace["steps"]] == [(1, "executed")]
    assert "9845012345" not in json.dumps(traces)
    lost = traces[2]
    assert (lost["stop_reason"], lost["error"]) == ("error", "the playground run failed (ConnectionResetError)")
    # The end wrote the step whose own write was lost.
    assert [s["outcome"] for s in lost["steps"]] == ["executed"]


async def test_a_shutdown_mid_run_writes_its_end_and_does_not_wait_for_the_model(settings):
    async with playground(settings) as pg:
        addrs = dict(pg.settings.context_addrs, playground=f"127.0.0.1:{reserved_port()}")
        replica = ContextServer("playground", with_env(pg.settings, context_addrs=addrs))
        await replica.start()
        pg.model.script(Call(READ), Say("after the shutdown", delay_s=8))
        async with service_channel(pg.settings, "playground", person(), address=addrs["playground"]) as channel:
            call = playground_pb2_grpc.PlaygroundStub(channel).RunStream(
                playground_pb2.RunRequest(
                    agent_id="CUSTOMER_AGENT",
                    prompt="Where is booking 1001?",
                )
            )
            started, step = await call.read(), await call.read()
            stopping = time.monotonic()
            await replica.stop(grace=0.5)
            stop_s = time.monotonic() - stopping
            with pytest.raises(grpc.aio.AioRpcError):
                await call.read()
        trace = await stored_run(pg, started.started.id, ended=False)

    assert step.step.tool == "get_booking_cache"
    # The grace period, then the end written: not the model's eight seconds.
    assert stop_s < 5
    assert (trace["status"], trace["stop_reason"]) == ("finished", "cancelled")
    assert [s["tool"] for s in trace["steps"]] == ["get_booking_cache"]


async def test_a_run_whose_playground_died_reads_as_interrupted_past_its_deadline(settings):
    async with playground(settings) as pg:
        db = context_engine(pg.settings.database_url, "playground")
        try:
            rows = {}
            for name, age_s in (("died", 120 + 61 + 5), ("live", 1)):
                row = store.RunRow(
                    id=uuid.uuid4(),
                    agent_id="CUSTOMER_AGENT",
                    skill_id="customer_notifications",
                    model="claude-test",
                    prompt=f"{name} run",
                    turns=0,
                    input_tokens=0,
                    output_tokens=0,
                    total_ms=0,
                    final_text="",
                    stop_reason="",
                    error="",
                    steps=[],
                    step_count=0,
                    created_by="u-1",
                    created_by_email="",
                    created_at=datetime.now(UTC) - timedelta(seconds=age_s),
                    redactions={},
                    status="running",
                )
                async with db.begin() as conn:
                    await store.start_run(conn, row=row)
                    await store.record_step(
                        conn,
                        id=row.id,
                        step={
                            "turn": 1,
                            "tool": "get_booking_cache",
                            "input": {"booking_id": 1001},
                            "outcome": "executed",
                            "reason": "GET against doormile_api",
                            "result": json.dumps({"status": BOOKING["status"]}),
                            "ms": 4,
                            "error": "",
                            "proposal": None,
                        },
                        turns=1,
                        input_tokens=10,
                        output_tokens=2,
                        redactions={},
                    )
                rows[name] = str(row.id)
        finally:
            await db.dispose()
        listed = (await pg.client.get("/admin/ai/playground/runs", headers=bearer(role=3))).json()["items"]
        died = await stored_run(pg, rows["died"], ended=False)
        live = await stored_run(pg, rows["live"], ended=False)

    assert {item["id"]: item["status"] for item in listed} == {rows["died"]: "interrupted", rows["live"]: "running"}
    assert (died["status"], died["stop_reason"]) == ("interrupted", "interrupted")
    assert died["error"] == "the playground stopped before this run ended; its steps up to then are kept"
    assert [s["tool"] for s in died["steps"]] == ["get_booking_cache"] and died["turns"] == 1
    assert (live["status"], live["stop_reason"], live["error"]) == ("running", "", None)
