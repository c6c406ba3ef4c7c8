from outrider.v1 import registry_pb2
from outrider.wire import json_bytes, json_value
from services.playground import codec
from services.playground.engine import Step
from services.playground.tool_policy import ToolExecutor, ToolKind


def registry_tool(**fields) -> registry_pb2.Tool:
    schema = fields.pop("input_schema", {"type": "object"})
    return registry_pb2.Tool(input_schema_json=json_bytes(schema), **fields)


def test_an_http_read_keeps_its_base_url_key_and_path():
    tool = registry_tool(
        name="get_booking_cache",
        description="Read one booking.",
        kind="read",
        executor="http",
        base_url_key="doormile_api",
        http_path="/bookings/cache/{booking_id}",
        input_schema={
            "type": "object",
            "properties": {"booking_id": {"type": "integer", "minimum": 1}},
            "required": ["booking_id"],
        },
    )

    spec = codec.tool_spec(tool)

    assert (spec.policy.name, spec.policy.kind, spec.policy.executor) == (
        "get_booking_cache",
        ToolKind.READ,
        ToolExecutor.HTTP,
    )
    assert spec.policy.base_url_key == "doormile_api" and spec.http_path == "/bookings/cache/{booking_id}"
    # The model gets the schema's numbers as written: 1 stays an integer.
    assert spec.for_model() == {
        "name": "get_booking_cache",
        "description": "Read one booking.",
        "input_schema": {
            "type": "object",
            "properties": {"booking_id": {"type": "integer", "minimum": 1}},
            "required": ["booking_id"],
        },
    }
    assert spec.input_schema["properties"]["booking_id"]["minimum"].__class__ is int


def test_fractions_in_a_schema_stay_fractions():
    spec = codec.tool_spec(
        registry_tool(
            name="nearby_milers",
            kind="read",
            executor="engine",
            input_schema={"properties": {"radius_km": {"minimum": 0.1}}},
        )
    )

    assert spec.input_schema == {"properties": {"radius_km": {"minimum": 0.1}}}


def test_a_tool_without_a_base_url_key_has_none():
    spec = codec.tool_spec(registry_tool(name="nearby_milers", kind="read", executor="engine"))

    assert spec.policy.base_url_key is None and spec.http_path == ""


def test_an_unknown_kind_or_executor_is_read_the_safe_way():
    spec = codec.tool_spec(registry_tool(name="mystery", kind="teleport", executor="quantum"))

    assert (spec.policy.kind, spec.policy.executor) == (ToolKind.WRITE, ToolExecutor.ENGINE)


def test_agent_detail_gives_the_pin_the_skills_and_the_catalog():
    detail = registry_pb2.AgentDetail(
        agent=registry_pb2.Agent(id="EXCEPTION_AGENT", model="claude-opus-4-1"),
        skills=[
            registry_pb2.Skill(
                id="stall_response",
                title="Stall response",
                description="d",
                tool_names=["nearby_milers", "reassign_booking"],
            )
        ],
        tools=[
            registry_tool(name="nearby_milers", kind="read", executor="engine"),
            registry_tool(name="reassign_booking", kind="write", executor="engine"),
        ],
    )

    found = codec.agent_tools(detail)

    assert (found.agent_id, found.pinned_model) == ("EXCEPTION_AGENT", "claude-opus-4-1")
    assert [(s.id, s.tool_names) for s in found.skills] == [("stall_response", ("nearby_milers", "reassign_booking"))]
    assert sorted(found.catalog) == ["nearby_milers", "reassign_booking"]


def test_a_step_survives_storage_and_the_wire():
    step = Step(
        turn=2,
        tool="reassign_booking",
        input={"booking_id": 1001, "note": "x"},
        outcome="proposed",
        reason="write tools are never executed",
        result='{"executed": false}',
        ms=3,
        proposal={"tool": "reassign_booking", "input": {"booking_id": 1001}},
    )

    stored = codec.step_to_json(step)
    wire = codec.step_to_proto(stored)

    assert stored["proposal"] == {"tool": "reassign_booking", "input": {"booking_id": 1001}}
    assert (wire.turn, wire.tool, wire.outcome, wire.result, wire.ms) == (
        2,
        "reassign_booking",
        "proposed",
        '{"executed": false}',
        3,
    )
    assert json_value(wire.input_json) == {"booking_id": 1001, "note": "x"}
    assert json_value(wire.proposal_json) == {"tool": "reassign_booking", "input": {"booking_id": 1001}}
    assert codec.step_to_proto(codec.step_to_json(Step(1, "t", {}, "executed", "r", "{}", 0))).proposal_json == b""
