"""The OTLP mapping: which span is a run, which a model call, what each keeps,
and which spans are refused, naming the attribute at fault."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime

import pytest

from services.telemetry.otlp.rules import Span, map_span
from services.telemetry.rules import MalformedTelemetry

TRACE = bytes.fromhex("0af7651916cd43dd8448eb211c80319c")
SPAN = bytes.fromhex("b7ad6b7169203331")
PARENT = bytes.fromhex("00f067aa0ba902b7")
START = 1_790_000_000_123_456_789  # 2026-09-21T14:13:20.123456789Z


def span(**changes) -> Span:
    base = Span(
        trace_id=TRACE,
        span_id=SPAN,
        parent_span_id=b"",
        name="handle_booking",
        start_ns=START,
        end_ns=START + 1_500_000_000,
        error_status=False,
        status_message="",
        attributes={},
        resource={"service.name": "booking-engine"},
    )
    return dataclasses.replace(base, **changes)


def chat(**attributes) -> Span:
    return span(
        parent_span_id=PARENT,
        name="chat claude-sonnet-4",
        attributes={
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": "anthropic",
            "gen_ai.request.model": "claude-sonnet-4",
            "gen_ai.response.model": "claude-sonnet-4-20250514",
            "gen_ai.usage.input_tokens": 1200,
            "gen_ai.usage.output_tokens": 85,
            **attributes,
        },
    )


def test_a_root_span_is_a_task_run_of_its_service():
    mapped = map_span(span())
    assert mapped.model_call is None
    run = mapped.run
    assert run is not None
    assert (run.agent_id, run.task_type, run.status, run.error) == (
        "booking-engine",
        "handle_booking",
        "succeeded",
        None,
    )
    assert run.task_id == f"{TRACE.hex()}-{SPAN.hex()}"
    assert run.duration_ms == 1500.0
    assert run.started_at == datetime(2026, 9, 21, 14, 13, 20, 123456, tzinfo=UTC)
    assert run.finished_at == datetime(2026, 9, 21, 14, 13, 21, 623456, tzinfo=UTC)


def test_an_invoke_agent_span_is_a_run_of_the_agent_it_names_even_with_a_parent():
    mapped = map_span(
        span(
            parent_span_id=PARENT,
            name="invoke_agent Dispatcher",
            attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "DISPATCH_AGENT"},
        )
    )
    assert mapped.run is not None and mapped.run.agent_id == "DISPATCH_AGENT"
    assert mapped.run.task_type == "invoke_agent Dispatcher"


def test_an_unnamed_run_takes_its_type_from_the_operation():
    mapped = map_span(span(name="  ", parent_span_id=PARENT, attributes={"gen_ai.operation.name": "invoke_agent"}))
    assert mapped.run is not None and mapped.run.task_type == "invoke_agent"


def test_a_failed_run_carries_the_status_message_else_the_error_type():
    with_message = map_span(span(error_status=True, status_message="rider unreachable"))
    assert (with_message.run.status, with_message.run.error) == ("failed", "rider unreachable")
    typed = map_span(span(attributes={"error.type": "TimeoutError"}))
    assert (typed.run.status, typed.run.error) == ("failed", "TimeoutError")


def test_a_model_call_keeps_models_tokens_latency_and_provider():
    call = map_span(chat()).model_call
    assert call is not None
    assert call.agent_id == "booking-engine"
    assert (call.operation, call.provider) == ("chat", "anthropic")
    assert (call.request_model, call.response_model) == ("claude-sonnet-4", "claude-sonnet-4-20250514")
    assert (call.input_tokens, call.output_tokens) == (1200, 85)
    assert (call.status, call.error_type, call.duration_ms) == ("succeeded", None, 1500.0)
    assert call.started_at == datetime(2026, 9, 21, 14, 13, 20, 123456, tzinfo=UTC)
    assert (call.trace_id, call.span_id) == (TRACE.hex(), SPAN.hex())
    assert map_span(chat()).run is None, "a child model call is not a run"


@pytest.mark.parametrize("operation", ["chat", "text_completion", "generate_content", "embeddings"])
def test_every_model_operation_is_a_model_call(operation):
    assert map_span(chat(**{"gen_ai.operation.name": operation})).model_call.operation == operation


def test_a_root_model_call_is_both_a_run_and_a_model_call():
    mapped = map_span(dataclasses.replace(chat(), parent_span_id=b""))
    assert mapped.run is not None and mapped.model_call is not None


def test_older_attribute_names_are_read_when_the_current_ones_are_absent():
    call = map_span(
        span(
            parent_span_id=PARENT,
            attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.system": "openai",
                "gen_ai.usage.prompt_tokens": 10,
                "gen_ai.usage.completion_tokens": 3,
            },
        )
    ).model_call
    assert (call.provider, call.input_tokens, call.output_tokens) == ("openai", 10, 3)


def test_a_model_call_without_usage_or_model_is_kept_with_those_unknown():
    call = map_span(span(parent_span_id=PARENT, attributes={"gen_ai.operation.name": "chat"})).model_call
    assert call is not None
    assert (call.input_tokens, call.output_tokens, call.request_model, call.response_model) == (None,) * 4


def test_a_failed_model_call_keeps_its_error_type():
    call = map_span(chat(**{"error.type": "RateLimitError"})).model_call
    assert (call.status, call.error_type) == ("failed", "RateLimitError")
    assert map_span(dataclasses.replace(chat(), error_status=True)).model_call.status == "failed"


def test_spans_that_are_neither_run_nor_model_call_are_ignored():
    mapped = map_span(
        span(parent_span_id=PARENT, name="GET /bookings/1001", attributes={"gen_ai.operation.name": "execute_tool"})
    )
    assert mapped.ignored


@pytest.mark.parametrize(
    ("attributes", "resource", "agent"),
    [
        ({"gen_ai.agent.name": "DISPATCH_AGENT", "gen_ai.agent.id": "asst_1"}, {}, "DISPATCH_AGENT"),
        ({"gen_ai.agent.id": "asst_1"}, {"gen_ai.agent.name": "ON_RESOURCE"}, "asst_1"),
        ({}, {"gen_ai.agent.name": "ON_RESOURCE", "service.name": "svc"}, "ON_RESOURCE"),
        ({"gen_ai.agent.name": "  "}, {"service.name": "svc"}, "svc"),
        ({}, {"service.name": "Math Tutor"}, "Math Tutor"),
    ],
)
def test_the_agent_is_the_gen_ai_agent_else_the_service(attributes, resource, agent):
    assert map_span(span(attributes=attributes, resource=resource)).run.agent_id == agent


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"trace_id": b""}, "trace_id"),
        ({"trace_id": bytes(16)}, "trace_id"),
        ({"trace_id": b"\x01" * 8}, "trace_id"),
        ({"span_id": b""}, "span_id"),
        ({"span_id": bytes(8)}, "span_id"),
        ({"parent_span_id": b"\x01" * 3}, "parent_span_id"),
        ({"start_ns": 0}, "start_time_unix_nano"),
        ({"end_ns": 0}, "end_time_unix_nano"),
        ({"end_ns": START - 1}, "end_time_unix_nano"),
        ({"resource": {}}, "agent"),
        ({"resource": {"service.name": 7}}, "service.name"),
        ({"resource": {"service.name": "A" * 129}}, "service.name"),
        ({"resource": {"service.name": "bad\x00agent"}}, "service.name"),
        ({"name": "", "attributes": {}}, "name"),
        ({"name": "na\x00me"}, "name"),
    ],
)
def test_unusable_spans_are_refused_naming_the_field(changes, field):
    with pytest.raises(MalformedTelemetry) as refused:
        map_span(span(**changes))
    assert refused.value.field == field


@pytest.mark.parametrize(
    ("attributes", "field"),
    [
        ({"gen_ai.usage.input_tokens": -1}, "gen_ai.usage.input_tokens"),
        ({"gen_ai.usage.output_tokens": "85"}, "gen_ai.usage.output_tokens"),
        ({"gen_ai.usage.output_tokens": True}, "gen_ai.usage.output_tokens"),
        ({"gen_ai.usage.input_tokens": 2**63}, "gen_ai.usage.input_tokens"),
        ({"gen_ai.usage.input_tokens": 1.5}, "gen_ai.usage.input_tokens"),
        ({"gen_ai.request.model": 4}, "gen_ai.request.model"),
    ],
)
def test_a_model_call_with_a_value_of_the_wrong_kind_is_refused(attributes, field):
    with pytest.raises(MalformedTelemetry) as refused:
        map_span(chat(**attributes))
    assert refused.value.field == field


def test_a_whole_float_token_count_is_read_as_an_integer():
    assert map_span(chat(**{"gen_ai.usage.input_tokens": 12.0})).model_call.input_tokens == 12


def test_an_ignored_span_needs_no_agent():
    # Spans the mapping does not keep are not refused for what they lack.
    assert map_span(span(parent_span_id=PARENT, resource={})).ignored


def test_long_labels_are_cut_not_refused():
    mapped = map_span(chat(**{"gen_ai.response.model": "m" * 300}))
    assert mapped.model_call.response_model == "m" * 256
    run = map_span(span(name="n" * 300, error_status=True, status_message="e" * 5000)).run
    assert (len(run.task_type), len(run.error)) == (128, 4000)
