"""POST /admin/ai/playground/run end to end: gateway → playground → registry,
decision memory and a real HTTP backend, with the real SDK calling a
scripted model API."""

from __future__ import annotations

import json

from outrider.rpc import keyed_channel
from outrider.v1 import (
    decisions_pb2,
    decisions_pb2_grpc,
    registry_pb2,
    registry_pb2_grpc,
)
from outrider.wire import json_bytes
from services.playground import rules
from tests.harness import INTERNAL_KEY, bearer, person, service_channel
from tests.integration.playground.scripted import BOOKING, PERSONAL, Call, Fail, Say
from tests.integration.playground.support import playground, seed_skill, seed_tool


def tool_results(body: dict) -> list[dict]:
    return [block for block in body["messages"][-1]["content"] if block["type"] == "tool_result"]


async def test_an_http_read_executes_and_no_personal_data_reaches_the_model(settings):
    async with playground(settings) as pg:
        pg.model.script(
            Call(("get_booking_cache", {"booking_id": 1001}), text="Reading the booking.", usage=(200, 30)),
            Say("Booking 1001 is in transit with rider 77; it is due by 18:30.", usage=(400, 40)),
        )
        reply = await pg.run(
            "CUSTOMER_AGENT",
            "Customer ananya.rao@example.in on +91 98450 12345 asks where booking 1001 is.",
        )
        stored = await pg.client.get(f"/admin/ai/playground/runs/{reply.json()['id']}", headers=bearer(role=3))

    assert reply.status_code == 200, reply.text
    trace = reply.json()
    # The agent has one skill, so none had to be named.
    assert trace["skill_id"] == "customer_notifications"
    assert pg.backend.requests == [("GET", "/bookings/cache/1001", "")]

    first, second = pg.model.requests
    skill = seed_skill("customer_notifications")
    assert first == {
        "model": settings.playground_model,
        "max_tokens": 4096,
        "system": rules.system_prompt(
            "CUSTOMER_AGENT",
            rules.SkillChoice(skill["id"], skill["title"], skill["description"], tuple(skill["tool_names"])),
        ),
        "messages": [{"role": "user", "content": "Customer <email#1> on <phone#1> asks where booking 1001 is."}],
        "tools": [seed_tool("get_booking_cache"), seed_tool("notify_customer")],
    }
    # This SDK sends the API key as a bearer token.
    assert pg.model.headers[0]["authorization"] == "Bearer test-anthropic-key"
    [result] = tool_results(second)
    sent = json.loads(result["content"])
    assert sent["booking_id"] == BOOKING["booking_id"] and sent["status"] == "in_transit"
    # The prompt's phone and e-mail are the booking's: one placeholder each, across the run.
    assert (sent["customer_name"], sent["customer_phone"], sent["drop_address"]) == (
        "<person#1>",
        "<phone#1>",
        "<address#1>",
    )
    assert sent["status_text"] == "customer wrote from <email#1>, call back on <phone#1>"
    assert sent["miler"] == {"miler_id": 77, "lat": 12.97, "lon": 77.59}
    for personal in PERSONAL:
        assert personal not in pg.model.sent_text()

    assert trace["model"] == settings.playground_model
    assert (trace["turns"], trace["input_tokens"], trace["output_tokens"]) == (2, 600, 70)
    assert trace["final_text"] == "Booking 1001 is in transit with rider 77; it is due by 18:30."
    assert trace["stop_reason"] == "end_turn" and trace["error"] is None
    assert trace["prompt"] == "Customer <email#1> on <phone#1> asks where booking 1001 is."
    assert trace["created_by"] == "u-1" and trace["created_by_email"] == "ops@example.com"
    assert trace["redactions"] == {"address": 1, "coordinate": 2, "email": 2, "note": 1, "person": 2, "phone": 3}
    [step] = trace["steps"]
    assert step["tool"] == "get_booking_cache" and step["input"] == {"booking_id": 1001}
    assert step["outcome"] == "executed" and step["reason"] == "GET against doormile_api"
    assert step["result"] == result["content"] and step["error"] is None and step["ms"] >= 0
    assert stored.status_code == 200 and stored.json() == trace


async def test_precedents_execute_against_decision_memory_and_writes_are_only_proposed(settings):
    async with playground(settings) as pg:
        async with keyed_channel(settings.addr("decisions"), INTERNAL_KEY) as channel:
            decisions = decisions_pb2_grpc.DecisionsStub(channel)
            for action, outcome in (("reassign", "success"), ("wait", "failure")):
                recorded = await decisions.RecordDecision(
                    decisions_pb2.RecordDecisionRequest(
                        decision_type="stall_response",
                        agent_id="EXCEPTION_AGENT",
                        subject_id="booking-900",
                        context_json=json_bytes(
                            {"stall_minutes": 20, "rider_name": "Suresh Naidu", "zone": "Koramangala"}
                        ),
                        action=action,
                        confidence=0.8,
                        reasoning="Suresh Naidu is stuck",
                    )
                )
                await decisions.SetOutcome(
                    decisions_pb2.SetOutcomeRequest(
                        id=recorded.id,
                        outcome=outcome,
                        reason="delivered late",
                        judged_by="api",
                    )
                )
        pg.model.script(
            Call(("find_precedents", {"decision_type": "stall_response", "context": {"stall_minutes": 18}, "k": 5})),
            Call(("reassign_booking", {"booking_id": 1001, "miler_id": 12, "reason": "rider stalled"})),
            Say("Past reassignments worked; I propose moving booking 1001 to rider 12."),
        )
        reply = await pg.run("EXCEPTION_AGENT", "Rider 77 has stalled for 18 minutes.", skill_id="stall_response")

    assert reply.status_code == 200, reply.text
    trace = reply.json()
    precedents, proposal = trace["steps"]
    assert (precedents["tool"], precedents["outcome"], precedents["turn"]) == ("find_precedents", "executed", 1)
    found = json.loads(precedents["result"])
    assert sorted((p["action"], p["outcome"]) for p in found["precedents"]) == [
        ("reassign", "success"),
        ("wait", "failure"),
    ]
    assert found["summary"] == {"successes": 1, "failures": 1, "success_rate": 0.5}
    assert "Suresh" not in pg.model.sent_text() and "Koramangala" not in pg.model.sent_text()

    assert (proposal["tool"], proposal["outcome"], proposal["turn"]) == ("reassign_booking", "proposed", 2)
    assert proposal["proposal"] == {
        "tool": "reassign_booking",
        "kind": "write",
        "input": {"booking_id": 1001, "miler_id": 12, "reason": "rider stalled"},
        "requires_confirmation": True,
    }
    sent = json.loads(tool_results(pg.model.requests[2])[0]["content"])
    assert sent["executed"] is False and sent["proposal"]["tool"] == "reassign_booking"
    # Nothing reached the backend: a write is never carried out.
    assert pg.backend.requests == []
    assert trace["turns"] == 3 and trace["stop_reason"] == "end_turn"


async def test_unreachable_tools_are_unavailable_and_foreign_ones_rejected(settings):
    async with playground(settings, backend=False) as pg:
        pg.model.script(Call(("get_booking_cache", {"booking_id": 1001})), Say("I could not read it."))
        http_unconfigured = await pg.run("CUSTOMER_AGENT", "Where is booking 1001?")

        pg.model.script(
            Call(
                ("nearby_milers", {"lat": 12.97, "lon": 77.59}),
                ("decide_stall_response", {"booking_id": 1, "facts": {}}),
                ("get_booking_cache", {"booking_id": 1001}),
                ("truncate_everything", {}),
            ),
            Say("Nothing I could use."),
        )
        engine_and_foreign = await pg.run("EXCEPTION_AGENT", "Rider 77 stalled.", skill_id="stall_response")

        pg.model.script(
            Call(
                ("simulate_pricing_quote", {"pickup_pincode": "560001", "drop_pincode": "560034", "service": "express"})
            ),
            Say("Pricing is not available here."),
        )
        console = await pg.run("CONSOLE_ASSISTANT", "Quote an express parcel.", skill_id="order_intake_auto_schedule")

    assert [r.status_code for r in (http_unconfigured, engine_and_foreign, console)] == [200, 200, 200]
    [step] = http_unconfigured.json()["steps"]
    assert (step["outcome"], step["reason"]) == ("unavailable", "base URL doormile_api is not configured")

    steps = engine_and_foreign.json()["steps"]
    assert [(s["tool"], s["outcome"]) for s in steps] == [
        ("nearby_milers", "unavailable"),
        ("decide_stall_response", "unavailable"),
        ("get_booking_cache", "rejected"),
        ("truncate_everything", "rejected"),
    ]
    assert "runs inside the agent engine" in steps[0]["reason"]
    assert "itself a model call" in steps[1]["reason"]
    assert steps[2]["reason"] == "get_booking_cache is not a tool of the selected skill"
    results = tool_results(pg.model.requests[3])
    assert [r["is_error"] for r in results] == [True, True, True, True]
    assert json.loads(results[2]["content"]) == {
        "executed": False,
        "outcome": "rejected",
        "detail": "get_booking_cache is not a tool of the selected skill",
    }

    [step] = console.json()["steps"]
    assert step["outcome"] == "unavailable" and "operator's console" in step["reason"]
    assert pg.backend.requests == []


async def test_the_agent_pin_chooses_the_model(settings):
    async with playground(settings) as pg:
        async with service_channel(settings, "registry", person()) as channel:
            await registry_pb2_grpc.RegistryStub(channel).UpdateAgent(
                registry_pb2.UpdateAgentRequest(
                    id="CUSTOMER_AGENT",
                    model="claude-opus-4-1",
                )
            )
        pg.model.script(Say("Pinned."))
        reply = await pg.run("CUSTOMER_AGENT", "Hello")

    assert reply.status_code == 200, reply.text
    assert pg.model.requests[0]["model"] == "claude-opus-4-1"
    assert reply.json()["model"] == "claude-opus-4-1"


async def test_a_model_api_error_is_a_trace_with_the_error_never_a_500(settings):
    async with playground(settings) as pg:
        pg.model.script(
            Call(("get_booking_cache", {"booking_id": 1001})), Fail(529, "Overloaded", kind="overloaded_error")
        )
        reply = await pg.run("CUSTOMER_AGENT", "Where is booking 1001?")
        listed = await pg.client.get("/admin/ai/playground/runs", headers=bearer(role=4))

    assert reply.status_code == 200, reply.text
    trace = reply.json()
    assert trace["stop_reason"] == "error"
    assert trace["error"] == "the model API answered 529: Overloaded"
    assert [s["outcome"] for s in trace["steps"]] == ["executed"]
    assert [item["id"] for item in listed.json()["items"]] == [trace["id"]]
    assert listed.json()["items"][0]["error"] == trace["error"]


async def test_steps_stream_as_server_sent_events(settings):
    async with playground(settings) as pg:
        pg.model.script(
            Call(("get_booking_cache", {"booking_id": 1001})),
            Call(("notify_customer", {"booking_id": 1001, "message": "Your parcel is on its way."})),
            Say("Told the customer."),
        )
        async with pg.client.stream(
            "POST",
            "/admin/ai/playground/run",
            json={"agent_id": "CUSTOMER_AGENT", "prompt": "Update the customer of booking 1001."},
            headers={**bearer(role=1), "Accept": "text/event-stream"},
        ) as reply:
            status, media = reply.status_code, reply.headers["content-type"]
            raw = (await reply.aread()).decode()
        events = [
            (chunk.split("\n")[0].removeprefix("event: "), json.loads(chunk.split("\n")[1].removeprefix("data: ")))
            for chunk in raw.strip().split("\n\n")
        ]
        stored = await pg.client.get(f"/admin/ai/playground/runs/{events[0][1]['id']}", headers=bearer(role=3))

    assert status == 200 and media.startswith("text/event-stream")
    assert [name for name, _ in events] == ["started", "step", "step", "done"]
    started, first, second, done = (data for _, data in events)
    assert started["agent_id"] == "CUSTOMER_AGENT" and started["skill_id"] == "customer_notifications"
    assert started["model"] == settings.playground_model
    assert (first["tool"], first["outcome"]) == ("get_booking_cache", "executed")
    assert (second["tool"], second["outcome"]) == ("notify_customer", "proposed")
    assert done["id"] == started["id"] and done["steps"] == [first, second]
    assert done["final_text"] == "Told the customer."
    assert stored.json() == done


async def test_a_failing_read_is_reported_to_the_model_and_the_run_goes_on(settings):
    async with playground(settings) as pg:
        pg.model.script(
            Call(("get_booking_cache", {"booking_id": 9}), ("get_booking_cache", {"status": "waiting"})),
            Say("Neither read worked."),
        )
        http_reply = await pg.run("CUSTOMER_AGENT", "Check booking 9.")
        pg.model.script(
            Call(("find_precedents", {"decision_type": "stall_response", "context": {}, "k": 500})),
            Say("No precedents."),
        )
        precedents_reply = await pg.run("EXCEPTION_AGENT", "Any precedents?", skill_id="stall_response")

    assert http_reply.status_code == 200 and precedents_reply.status_code == 200
    not_found, no_id = http_reply.json()["steps"]
    assert (not_found["outcome"], not_found["error"]) == ("executed", "GET /bookings/cache/9 answered 404")
    assert json.loads(not_found["result"]) == {"error": "GET /bookings/cache/9 answered 404"}
    assert no_id["error"] == "booking_id is required"
    assert [r["is_error"] for r in tool_results(pg.model.requests[1])] == [True, True]
    assert http_reply.json()["final_text"] == "Neither read worked."
    assert pg.backend.requests == [("GET", "/bookings/cache/9", "")]
    [too_many] = precedents_reply.json()["steps"]
    assert (too_many["outcome"], too_many["error"]) == ("executed", "k must be a whole number from 1 to 20")
    assert precedents_reply.json()["stop_reason"] == "end_turn"
