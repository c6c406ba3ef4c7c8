"""The run loop with the real Anthropic SDK against a scripted endpoint
(an httpx2 mock transport: real requests and responses, no network)."""

from __future__ import annotations

import asyncio
import dataclasses
import json

import anthropic
import httpx2

from services.common.redaction.redactor import RedactionRules
from services.playground import engine
from services.playground.engine import RunPlan, ToolFailure, ToolSpec
from services.playground.redaction import DEFAULT_RESULT_LIMIT
from services.playground.rules import RunLimits
from services.playground.tool_policy import PlaygroundTool, ToolExecutor, ToolKind
from tests.integration.playground.scripted import (
    BOOKING,
    PERSONAL,
    Call,
    Fail,
    Say,
    ScriptedModel,
)

BOOKING_SCHEMA = {
    "type": "object",
    "properties": {"booking_id": {"type": "integer", "description": "The booking to read."}},
    "required": ["booking_id"],
}
READ = ToolSpec(
    PlaygroundTool("read_booking", ToolKind.READ, ToolExecutor.OUTRIDER), "Read one booking.", BOOKING_SCHEMA
)
WRITE = ToolSpec(
    PlaygroundTool("reassign_booking", ToolKind.WRITE, ToolExecutor.ENGINE),
    "Move a booking to another rider.",
    {"type": "object", "properties": {"booking_id": {"type": "integer"}, "miler_id": {"type": "integer"}}},
)
ENGINE_READ = ToolSpec(
    PlaygroundTool("nearby_milers", ToolKind.READ, ToolExecutor.ENGINE), "Riders near.", {"type": "object"}
)
ELSEWHERE = ToolSpec(PlaygroundTool("scan_bookings", ToolKind.READ, ToolExecutor.OUTRIDER), "Scan.", {"type": "object"})


def plan(*tools: ToolSpec) -> RunPlan:
    offered = tools or (READ, WRITE, ENGINE_READ)
    catalog = {spec.policy.name: spec for spec in (*offered, ELSEWHERE)}
    return RunPlan(
        agent_id="EXCEPTION_AGENT",
        skill_id="stall_response",
        model="claude-test-1",
        system="You are testing.",
        prompt="Rider 77 has not moved for 20 minutes on booking 1001.",
        tools=offered,
        catalog=catalog,
    )


def client_for(model: ScriptedModel) -> anthropic.AsyncAnthropic:
    return anthropic.AsyncAnthropic(
        api_key="test-key",
        base_url="http://model.test",
        max_retries=0,
        http_client=httpx2.AsyncClient(transport=model.transport()),
    )


class Executed:
    """A read executor that records its calls and answers with personal data."""

    def __init__(self, answer=None, *, delay_s: float = 0.0, failure: str = "") -> None:
        self.calls: list[tuple[str, dict]] = []
        self.answer = BOOKING if answer is None else answer
        self.delay_s, self.failure = delay_s, failure

    async def __call__(self, spec, tool_input):
        self.calls.append((spec.policy.name, dict(tool_input)))
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        if self.failure:
            raise ToolFailure(self.failure)
        return self.answer


def tool_results(body: dict) -> list[dict]:
    return [block for block in body["messages"][-1]["content"] if block["type"] == "tool_result"]


async def test_a_read_executes_and_its_redacted_result_goes_back_to_the_model():
    model = ScriptedModel(
        Call(("read_booking", {"booking_id": 1001}), text="Let me read the booking.", usage=(120, 40)),
        Say("The rider is stalled; I would reassign.", usage=(300, 25)),
    )
    executed = Executed()

    trace = await engine.run(plan(), client=client_for(model), execute=executed)

    assert executed.calls == [("read_booking", {"booking_id": 1001})]
    first, second = model.requests
    tools = [
        {"name": "read_booking", "description": "Read one booking.", "input_schema": BOOKING_SCHEMA},
        {
            "name": "reassign_booking",
            "description": "Move a booking to another rider.",
            "input_schema": WRITE.input_schema,
        },
        {"name": "nearby_milers", "description": "Riders near.", "input_schema": {"type": "object"}},
    ]
    assert first == {
        "model": "claude-test-1",
        "max_tokens": 4096,
        "system": "You are testing.",
        "messages": [{"role": "user", "content": "Rider 77 has not moved for 20 minutes on booking 1001."}],
        "tools": tools,
    }
    assert second["tools"] == tools and second["model"] == "claude-test-1" and second["max_tokens"] == 4096
    assert second["messages"][1]["role"] == "assistant"
    assert second["messages"][1]["content"][0] == {"type": "text", "text": "Let me read the booking."}
    assert second["messages"][1]["content"][1]["name"] == "read_booking"
    [result] = tool_results(second)
    assert result["tool_use_id"] == second["messages"][1]["content"][1]["id"]
    assert result["is_error"] is False
    sent = json.loads(result["content"])
    assert sent["customer_name"] == "<person#1>" and sent["drop_address"] == "<address#1>"
    # The same phone, written two ways, is one placeholder.
    assert sent["customer_phone"] == "<phone#1>"
    assert sent["status_text"] == "customer wrote from <email#1>, call back on <phone#1>"
    assert sent["promised_by"] == "2026-09-29T18:30:00+05:30"
    assert sent["miler"] == {"miler_id": 77, "lat": 12.97, "lon": 77.59}
    for personal in PERSONAL:
        assert personal not in model.sent_text()
    assert trace.redactions == {"address": 1, "coordinate": 2, "email": 1, "note": 1, "person": 2, "phone": 2}

    assert trace.turns == 2
    assert (trace.input_tokens, trace.output_tokens) == (420, 65)
    assert trace.final_text == "The rider is stalled; I would reassign."
    assert trace.stop_reason == "end_turn" and trace.error == ""
    [step] = trace.steps
    assert (step.turn, step.tool, step.outcome, step.error) == (1, "read_booking", "executed", "")
    assert step.result == result["content"]


async def test_writes_are_proposed_and_unreachable_or_foreign_tools_are_refused():
    model = ScriptedModel(
        Call(
            ("reassign_booking", {"booking_id": 1001, "miler_id": 12}),
            ("nearby_milers", {"lat": 12.97, "lon": 77.59}),
            ("scan_bookings", {}),
            ("drop_all_tables", {}),
        ),
        Say("I would move booking 1001 to rider 12."),
    )
    executed = Executed()

    trace = await engine.run(plan(), client=client_for(model), execute=executed)

    assert executed.calls == []
    outcomes = [(s.tool, s.outcome) for s in trace.steps]
    assert outcomes == [
        ("reassign_booking", "proposed"),
        ("nearby_milers", "unavailable"),
        ("scan_bookings", "rejected"),
        ("drop_all_tables", "rejected"),
    ]
    proposal, unavailable, foreign, unknown = trace.steps
    assert json.loads(proposal.result) == {
        "executed": False,
        "proposal": {
            "tool": "reassign_booking",
            "kind": "write",
            "input": {"booking_id": 1001, "miler_id": 12},
            "requires_confirmation": True,
        },
    }
    assert proposal.proposal == json.loads(proposal.result)["proposal"]
    assert "runs inside the agent engine" in unavailable.reason
    assert foreign.reason == "scan_bookings is not a tool of the selected skill"
    assert unknown.reason == "drop_all_tables is not a tool of the selected skill"
    results = tool_results(model.requests[1])
    assert [r["is_error"] for r in results] == [False, True, True, True]
    assert json.loads(results[1]["content"]) == {
        "executed": False,
        "outcome": "unavailable",
        "detail": unavailable.reason,
    }
    assert all(s.turn == 1 for s in trace.steps)


async def test_the_run_stops_after_six_model_turns():
    model = ScriptedModel(Call(("read_booking", {"booking_id": 1001}), usage=(10, 5)), repeat_last=True)
    executed = Executed({"status": "in_transit"})

    trace = await engine.run(plan(), client=client_for(model), execute=executed)

    assert len(model.requests) == 6
    assert trace.turns == 6
    assert trace.stop_reason == "turn_limit"
    assert [s.turn for s in trace.steps] == [1, 2, 3, 4, 5, 6]
    assert (trace.input_tokens, trace.output_tokens) == (60, 30)
    assert trace.error == ""


async def test_the_deadline_ends_the_run_with_what_happened_so_far():
    model = ScriptedModel(Call(("read_booking", {"booking_id": 1001})), Say("too late", delay_s=30))

    trace = await engine.run(
        plan(),
        client=client_for(model),
        execute=Executed({"status": "in_transit"}),
        limits=RunLimits(deadline_s=0.5),
    )

    assert trace.stop_reason == "deadline"
    assert trace.error == "the run passed its 0.5 s deadline"
    assert trace.turns == 2
    assert [s.outcome for s in trace.steps] == ["executed"]
    assert trace.final_text == ""


async def test_a_slow_or_failing_read_is_an_error_for_the_model_not_for_the_run():
    model = ScriptedModel(Call(("read_booking", {"booking_id": 1001})), Say("The read timed out."))
    slow = Executed(delay_s=5)

    trace = await engine.run(plan(), client=client_for(model), execute=slow, limits=RunLimits(tool_timeout_s=0.2))

    [step] = trace.steps
    assert step.outcome == "executed"
    assert step.error == "read_booking did not answer within 0.2 s"
    [result] = tool_results(model.requests[1])
    assert result["is_error"] is True
    assert json.loads(result["content"]) == {"error": "read_booking did not answer within 0.2 s"}
    assert trace.stop_reason == "end_turn"

    model = ScriptedModel(Call(("read_booking", {"booking_id": 1001})), Say("The backend is down."))
    trace = await engine.run(plan(), client=client_for(model), execute=Executed(failure="GET /x answered 502"))
    assert trace.steps[0].error == "GET /x answered 502"
    assert tool_results(model.requests[1])[0]["is_error"] is True


async def test_a_huge_result_is_capped_with_a_visible_marker():
    model = ScriptedModel(Call(("read_booking", {"booking_id": 1001})), Say("ok"))
    huge = {"rows": [{"booking_id": i, "status": "waiting"} for i in range(5000)]}

    trace = await engine.run(plan(), client=client_for(model), execute=Executed(huge))

    [result] = tool_results(model.requests[1])
    assert len(result["content"].encode()) <= DEFAULT_RESULT_LIMIT
    assert "…[truncated " in result["content"]
    assert trace.steps[0].result == result["content"]


async def test_model_api_errors_end_the_run_with_the_error_in_the_trace():
    model = ScriptedModel(
        Call(("read_booking", {"booking_id": 1001})), Fail(529, "Overloaded", kind="overloaded_error")
    )

    trace = await engine.run(plan(), client=client_for(model), execute=Executed({"status": "in_transit"}))

    assert trace.stop_reason == "error"
    assert trace.error == "the model API answered 529: Overloaded"
    assert trace.turns == 2 and len(trace.steps) == 1

    trace = await engine.run(plan(), client=client_for(ScriptedModel(Fail(500, "boom"))), execute=Executed())
    assert trace.error == "the model API answered 500: boom"
    assert trace.steps == ()


async def test_an_unreachable_model_api_is_an_error_in_the_trace():
    def refuse(request: httpx2.Request) -> httpx2.Response:
        raise httpx2.ConnectError("connection refused", request=request)

    client = anthropic.AsyncAnthropic(
        api_key="test-key",
        base_url="http://model.test",
        max_retries=0,
        http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(refuse)),
    )

    trace = await engine.run(plan(), client=client, execute=Executed())

    assert trace.stop_reason == "error"
    assert trace.error.startswith("the model API could not be reached")
    assert trace.turns == 1


async def test_a_timed_out_or_unreadable_answer_is_an_error_in_the_trace():
    def slow(request: httpx2.Request) -> httpx2.Response:
        raise httpx2.ReadTimeout("no answer", request=request)

    def garbled(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, content=b"<html>gateway page</html>", headers={"content-type": "application/json"})

    traces = []
    for handler in (slow, garbled):
        client = anthropic.AsyncAnthropic(
            api_key="test-key",
            base_url="http://model.test",
            max_retries=0,
            http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(handler)),
        )
        traces.append(await engine.run(plan(), client=client, execute=Executed()))

    timed_out, unreadable = traces
    assert (timed_out.stop_reason, timed_out.error) == ("error", "the model API did not answer in time")
    assert unreadable.stop_reason == "error"
    assert unreadable.error.startswith("the model API's answer could not be read")


async def test_everything_the_model_receives_is_redacted_with_one_set_of_placeholders():
    model = ScriptedModel(Call(("read_booking", {"booking_id": 1001})), Say("Done."))
    run_plan = dataclasses.replace(
        plan(),
        prompt="Ananya Rao (+91 98450 12345) asks about booking 1001.",
        system="Escalate to Mr. Tanmay Bhide on 080-2345 6789.",
        tools=(dataclasses.replace(READ, description="Read one booking; the desk is ops@example.in."),),
    )

    trace = await engine.run(run_plan, client=client_for(model), execute=Executed())

    first, second = model.requests
    assert first["messages"] == [{"role": "user", "content": "<person#1> (<phone#1>) asks about booking 1001."}]
    assert first["system"] == "Escalate to Mr. <person#2> on <phone#2>."
    assert first["tools"][0]["description"] == "Read one booking; the desk is <email#1>."
    # The booking's customer is the prompt's: the same placeholders.
    sent = json.loads(tool_results(second)[0]["content"])
    assert (sent["customer_name"], sent["customer_phone"]) == ("<person#1>", "<phone#1>")
    assert trace.prompt == "<person#1> (<phone#1>) asks about booking 1001."
    assert trace.redactions == {"address": 1, "coordinate": 2, "email": 2, "note": 1, "person": 4, "phone": 4}


async def test_the_trace_keeps_the_model_s_inputs_and_answer_redacted():
    model = ScriptedModel(
        Call(("reassign_booking", {"booking_id": 1001, "miler_id": 12, "customer_phone": "+91 98450 12345"})),
        Say("Moved; I told Ananya on 9845012345."),
    )

    trace = await engine.run(plan(), client=client_for(model), execute=Executed())

    [step] = trace.steps
    assert step.input == {"booking_id": 1001, "miler_id": 12, "customer_phone": "<phone#1>"}
    assert step.proposal == {
        "tool": "reassign_booking",
        "kind": "write",
        "requires_confirmation": True,
        "input": {"booking_id": 1001, "miler_id": 12, "customer_phone": "<phone#1>"},
    }
    assert json.loads(step.result)["proposal"] == step.proposal
    assert trace.final_text == "Moved; I told <person#1> on <phone#1>."


async def test_a_failure_s_text_reaches_the_model_and_the_trace_redacted(caplog):
    class Broken:
        async def __call__(self, spec, tool_input):
            raise KeyError("ananya.rao@example.in")

    model = ScriptedModel(
        Call(("read_booking", {"booking_id": 1001}), ("read_booking", {"booking_id": 1002})), Say("Both reads failed.")
    )

    trace = await engine.run(plan(), client=client_for(model), execute=Broken())

    broken, _ = trace.steps
    assert broken.error == "read_booking failed: KeyError: '<email#1>'"
    assert json.loads(tool_results(model.requests[1])[0]["content"]) == {"error": broken.error}
    [logged, _] = [r for r in caplog.records if r.getMessage() == "playground tool failed"]
    assert (logged.tool, logged.error_type, logged.detail) == ("read_booking", "KeyError", "'<email#1>'")
    assert any("raise KeyError" in frame for frame in logged.frames)
    assert "ananya" not in model.sent_text() + repr(trace) + repr(logged.__dict__)

    model = ScriptedModel(Call(("read_booking", {"booking_id": 1001})), Say("Not found."))
    trace = await engine.run(
        plan(), client=client_for(model), execute=Executed(failure="GET /riders/9845012345 answered 404")
    )
    assert trace.steps[0].error == "GET /riders/<phone#1> answered 404"
    assert "9845012345" not in model.sent_text()


async def test_an_api_error_quoting_personal_data_is_stored_redacted():
    model = ScriptedModel(Fail(400, "messages.0: unexpected text near 'call 9845012345'", kind="invalid_request_error"))

    trace = await engine.run(plan(), client=client_for(model), execute=Executed())

    assert trace.error == "the model API answered 400: messages.0: unexpected text near 'call <phone#1>'"


async def test_configured_rules_apply_to_the_run():
    model = ScriptedModel(Call(("read_booking", {"booking_id": 1001})), Say("ok"))
    rules = RedactionRules.build(extra_keys=["promised_by"], extra_patterns={"booking": r"\bbooking \d+"})

    trace = await engine.run(plan(), client=client_for(model), execute=Executed(), redaction=rules)

    assert trace.prompt == "Rider 77 has not moved for 20 minutes on <booking#1>."
    assert json.loads(trace.steps[0].result)["promised_by"] == "<promised_by#1>"
