"""The run loop's limits and its robustness, with the real SDK against a
scripted endpoint: calls past the per-turn limit and reads past the run's
result budget are not carried out and the model is told; whatever a read
answers, the run goes on with a result it can store; a run cut short from
outside keeps its steps."""

from __future__ import annotations

import asyncio
import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from services.common.redaction.redactor import Redactor
from services.playground import engine
from services.playground.codec import step_to_json, step_to_proto
from services.playground.engine import RunLoop
from services.playground.redaction import DEFAULT_RESULT_LIMIT
from services.playground.rules import RunLimits
from tests.integration.playground.scripted import Call, Say, ScriptedModel
from tests.integration.playground.test_engine import Executed, client_for, plan, tool_results

READ_CALL = ("read_booking", {"booking_id": 1001})


async def test_calls_past_the_per_turn_limit_are_not_carried_out_and_the_model_is_told():
    model = ScriptedModel(Call(*[("read_booking", {"booking_id": n}) for n in range(5)]), Say("Read two."))
    executed = Executed({"status": "in_transit"})

    trace = await engine.run(
        plan(), client=client_for(model), execute=executed, limits=RunLimits(tool_calls_per_turn=2)
    )

    assert executed.calls == [("read_booking", {"booking_id": 0}), ("read_booking", {"booking_id": 1})]
    assert [s.outcome for s in trace.steps] == ["executed", "executed", "rejected", "rejected", "rejected"]
    refused = trace.steps[2]
    assert refused.reason == "over the limit of 2 tool calls per turn; not carried out"
    assert refused.input == {"booking_id": 2}
    results = tool_results(model.requests[1])
    assert [r["is_error"] for r in results] == [False, False, True, True, True]
    assert json.loads(results[4]["content"]) == {"executed": False, "outcome": "rejected", "detail": refused.reason}
    assert trace.stop_reason == "end_turn" and trace.final_text == "Read two."


async def test_reads_stop_once_the_run_s_result_budget_is_spent_and_the_last_one_is_cut_to_fit():
    row = {"booking_id": 1, "status": "waiting", "zone": "north"}
    answer = {"rows": [row] * 30}
    one = len(json.dumps(answer, ensure_ascii=False).encode())
    budget = 2 * one + 700
    model = ScriptedModel(Call(READ_CALL, READ_CALL, READ_CALL, READ_CALL), Say("Enough."))
    executed = Executed(answer)

    trace = await engine.run(
        plan(), client=client_for(model), execute=executed, limits=RunLimits(result_bytes_per_run=budget)
    )

    sizes = [len(s.result.encode()) for s in trace.steps]
    assert len(executed.calls) == 3
    assert [s.outcome for s in trace.steps] == ["executed", "executed", "executed", "rejected"]
    assert sizes[:3] == [one, one, 700] and sum(sizes[:3]) == budget
    assert "…[truncated " in trace.steps[2].result
    assert trace.steps[3].reason == f"this run's {budget:,} bytes of tool results are spent; answer with what you have"
    assert tool_results(model.requests[1])[3]["is_error"] is True
    assert trace.stop_reason == "end_turn"


async def test_a_read_answering_what_no_result_can_hold_is_an_error_for_the_model_and_the_run_goes_on():
    nested: list = []
    for _ in range(50_000):
        nested = [nested]
    answers = iter(
        [
            {"set": {1, 2}},
            nested,
            {"status\x00": "in \x00 transit", "bad": "half a pair \ud83d", "ok": "🚚"},
        ]
    )

    async def hostile(spec, tool_input):
        return next(answers)

    model = ScriptedModel(Call(READ_CALL, READ_CALL, READ_CALL), Say("Done."))

    trace = await engine.run(plan(), client=client_for(model), execute=hostile)

    unset, deep, unstorable = trace.steps
    assert unset.error == "read_booking answered a result that could not be read (TypeError)"
    assert deep.error == "read_booking answered a result that could not be read (RecursionError)"
    assert json.loads(unset.result) == {"error": unset.error}
    assert unstorable.error == ""
    assert json.loads(unstorable.result) == {
        "status\ufffd": "in \ufffd transit",
        "bad": "half a pair \ufffd",
        "ok": "🚚",
    }
    assert [r["is_error"] for r in tool_results(model.requests[1])] == [True, True, False]
    assert trace.stop_reason == "end_turn"
    for step in trace.steps:
        step_to_proto(step_to_json(step))


async def test_a_run_cut_short_from_outside_keeps_its_steps_and_ends_once():
    model = ScriptedModel(Call(READ_CALL), Say("Ask Ananya Rao.", delay_s=30))
    loop = RunLoop(plan(), client=client_for(model), execute=Executed({"status": "in_transit"}), redactor=Redactor())
    first_step = asyncio.Event()

    async def on_step(step):
        first_step.set()

    task = asyncio.create_task(loop.run(on_step=on_step))
    await asyncio.wait_for(first_step.wait(), 5)
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    loop.final_text = "Ask Ananya Rao."
    cut = loop.stop(engine.CANCELLED, "the caller went away")
    again = loop.stop(engine.ERROR, "something else")

    assert task.cancelled()
    assert again is cut
    assert (cut.stop_reason, cut.error, cut.turns) == ("cancelled", "the caller went away", 2)
    assert [s.outcome for s in cut.steps] == ["executed"]
    # The answer was redacted once, so it is counted once.
    assert cut.final_text == "Ask <person#1>." and cut.redactions["person"] == 1


# Anything a read executor could hand back: JSON-like values with any code
# point (NUL and lone surrogates included), deep or wide, and values no JSON has.
anything = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(st.characters(codec=None, exclude_categories=()), max_size=40)
    | st.binary(max_size=8)
    | st.sets(st.integers(), max_size=2),
    lambda inner: (
        st.lists(inner, max_size=5)
        | st.dictionaries(st.text(st.characters(exclude_categories=()), max_size=6), inner, max_size=5)
    ),
    max_leaves=40,
)


@settings(max_examples=80, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(anything, min_size=1, max_size=4))
def test_whatever_reads_answer_the_run_ends_with_results_within_the_caps_that_can_be_stored(answers):
    budget = 3000

    async def scenario():
        pending = iter(answers)

        async def execute(spec, tool_input):
            return next(pending)

        model = ScriptedModel(Call(*[READ_CALL] * len(answers)), Say("ok"))
        return await engine.run(
            plan(), client=client_for(model), execute=execute, limits=RunLimits(result_bytes_per_run=budget)
        )

    trace = asyncio.run(scenario())

    assert len(trace.steps) == len(answers) and trace.stop_reason == "end_turn"
    executed = [s for s in trace.steps if s.outcome == "executed"]
    assert sum(len(s.result.encode("utf-8")) for s in executed) <= budget
    for step in trace.steps:
        assert len(step.result.encode("utf-8")) <= DEFAULT_RESULT_LIMIT
        stored = json.dumps(step_to_json(step))
        assert "\\u0000" not in stored
        step_to_proto(step_to_json(step))
