"""The OTLP codec: decoding both encodings, what the gateway keeps of a span,
how it packs messages, and what the ingest reads back."""

from __future__ import annotations

import contextlib
import json

import pytest
from google.protobuf import json_format
from google.rpc import status_pb2
from hypothesis import given, settings
from hypothesis import strategies as st
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, ArrayValue, KeyValue
from opentelemetry.proto.trace.v1 import trace_pb2

from services.common.callers import AgentScope
from services.telemetry.otlp import codec as otlp_codec
from services.telemetry.otlp.rules import map_span
from services.telemetry.rules import MalformedTelemetry

TRACE = bytes.fromhex("0af7651916cd43dd8448eb211c80319c")
START = 1_790_000_000_000_000_000
PROMPT = "Customer Ananya Rao at 14 Residency Road asks where her parcel is"


def attribute(key: str, value) -> KeyValue:
    if isinstance(value, bool):
        return KeyValue(key=key, value=AnyValue(bool_value=value))
    if isinstance(value, int):
        return KeyValue(key=key, value=AnyValue(int_value=value))
    return KeyValue(key=key, value=AnyValue(string_value=value))


def export(*spans: trace_pb2.Span, service: str = "booking-engine") -> ExportTraceServiceRequest:
    request = ExportTraceServiceRequest()
    resource_spans = request.resource_spans.add()
    resource_spans.resource.attributes.extend([attribute("service.name", service), attribute("host.name", "worker-7")])
    scope = resource_spans.scope_spans.add()
    scope.scope.name = "opentelemetry.instrumentation.anthropic"
    scope.spans.extend(spans)
    return request


def root(n: int = 1, **fields) -> trace_pb2.Span:
    return trace_pb2.Span(
        trace_id=TRACE,
        span_id=n.to_bytes(8, "big"),
        name="handle_booking",
        start_time_unix_nano=START,
        end_time_unix_nano=START + 2_000_000,
        **fields,
    )


def chat(n: int = 2, *extra: KeyValue) -> trace_pb2.Span:
    return trace_pb2.Span(
        trace_id=TRACE,
        span_id=n.to_bytes(8, "big"),
        parent_span_id=(1).to_bytes(8, "big"),
        name="chat claude-sonnet-4",
        start_time_unix_nano=START,
        end_time_unix_nano=START + 900_000_000,
        # Extras first: of two attributes with one key, the first is read.
        attributes=[
            *extra,
            attribute("gen_ai.operation.name", "chat"),
            attribute("gen_ai.request.model", "claude-sonnet-4"),
            attribute("gen_ai.usage.input_tokens", 1200),
            attribute("gen_ai.usage.output_tokens", 85),
            attribute("gen_ai.input.messages", json.dumps([{"role": "user", "content": PROMPT}])),
            attribute("gen_ai.output.messages", "It is out for delivery"),
        ],
        events=[trace_pb2.Span.Event(name="gen_ai.user.message", attributes=[attribute("content", PROMPT)])],
        links=[trace_pb2.Span.Link(trace_id=TRACE, span_id=b"\x09" * 8)],
    )


def test_protobuf_and_json_decode_to_the_same_request():
    request = export(root(), chat())
    as_json = json_format.MessageToDict(request)
    # OTLP/JSON writes ids in hex, not proto3 JSON's base64.
    span_dict = as_json["resourceSpans"][0]["scopeSpans"][0]["spans"][1]
    span_dict["traceId"], span_dict["spanId"], span_dict["parentSpanId"] = TRACE.hex(), "0" * 15 + "2", "0" * 15 + "1"
    span_dict["links"][0].update(traceId=TRACE.hex(), spanId="09" * 8)
    root_dict = as_json["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    root_dict["traceId"], root_dict["spanId"] = TRACE.hex(), "0" * 15 + "1"
    # A receiver ignores fields it does not know.
    as_json["resourceSpans"][0]["someFutureField"] = {"x": 1}
    decoded = otlp_codec.decode_request(json.dumps(as_json).encode(), json_encoded=True)
    assert decoded == request
    assert otlp_codec.decode_request(request.SerializeToString(), json_encoded=False) == request


@pytest.mark.parametrize(
    ("body", "json_encoded", "says"),
    [
        (b"\xff\xff\xff", False, "not a protobuf"),
        (b"{not json", True, "not JSON"),
        (b"[1, 2]", True, "expected a JSON object"),
        (b'{"resourceSpans": 7}', True, "resourceSpans must be a JSON array"),
        # A string where a message belongs must not parse as that message's keys.
        (b'{"resourceSpans": ["AAA"]}', True, "resourceSpans[0] must be a JSON object, got str"),
        (b'{"resourceSpans": [{"resource": "abc"}]}', True, "resourceSpans[0].resource must be a JSON object"),
        (b'{"resourceSpans": [{"scopeSpans": "xy"}]}', True, "resourceSpans[0].scopeSpans must be a JSON array"),
        (
            b'{"resourceSpans": [{"scopeSpans": [{"spans": [{"attributes": ["k"]}]}]}]}',
            True,
            "resourceSpans[0].scopeSpans[0].spans[0].attributes[0] must be a JSON object",
        ),
        (
            b'{"resource_spans": [{"scope_spans": [{"spans": [{"status": 5}]}]}]}',
            True,
            "resource_spans[0].scope_spans[0].spans[0].status must be a JSON object, got int",
        ),
        (b'{"resourceSpans": [null]}', True, "resourceSpans[0] must be a JSON object, got NoneType"),
        (
            b'{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "zz"}]}]}]}',
            True,
            "resourceSpans[0].scopeSpans[0].spans[0].traceId",
        ),
    ],
)
def test_undecodable_bodies_say_why(body, json_encoded, says):
    with pytest.raises(otlp_codec.UndecodableTraces) as refused:
        otlp_codec.decode_request(body, json_encoded=json_encoded)
    assert says in str(refused.value)


def test_only_the_attributes_the_mapping_reads_leave_the_gateway():
    admission = otlp_codec.admit(export(root(), chat()))
    assert (admission.accepted, admission.rejected, admission.ignored) == (2, 0, 0)
    [message] = admission.messages
    assert PROMPT.encode() not in message and b"out for delivery" not in message
    assert b"worker-7" not in message, "resource attributes outside the mapping are dropped too"
    published = ExportTraceServiceRequest.FromString(message)
    spans = [s for rs in published.resource_spans for ss in rs.scope_spans for s in ss.spans]
    assert all(not s.events and not s.links for s in spans)
    assert {kv.key for kv in spans[1].attributes} == {
        "gen_ai.operation.name",
        "gen_ai.request.model",
        "gen_ai.usage.input_tokens",
        "gen_ai.usage.output_tokens",
    }
    assert [kv.key for kv in published.resource_spans[0].resource.attributes] == ["service.name"]


def test_the_ingest_maps_a_published_message_as_the_gateway_did():
    request = export(root(), chat(), chat(3, attribute("error.type", "RateLimitError")))
    expected = [map_span(s) for s in otlp_codec.spans(request)]
    [message] = otlp_codec.admit(request).messages
    records = otlp_codec.read_message(message)
    assert list(records.runs) == [m.run for m in expected if m.run]
    assert list(records.model_calls) == [m.model_call for m in expected if m.model_call]
    assert records.rejected == ()


def test_refused_spans_are_counted_with_their_reasons_and_cost_nothing_else():
    no_ids = trace_pb2.Span(name="x", start_time_unix_nano=START, end_time_unix_nano=START)
    bad_tokens = chat(4, attribute("gen_ai.usage.output_tokens", -3))
    tool = trace_pb2.Span(
        trace_id=TRACE,
        span_id=b"\x05" * 8,
        parent_span_id=b"\x01" * 8,
        name="GET /x",
        start_time_unix_nano=START,
        end_time_unix_nano=START,
    )
    admission = otlp_codec.admit(export(root(), no_ids, bad_tokens, tool, chat()))
    assert (admission.accepted, admission.rejected, admission.ignored) == (2, 2, 1)
    message = admission.rejection_message()
    assert message.startswith("2 span(s) rejected:")
    assert "trace_id must be 16 bytes" in message and "gen_ai.usage.output_tokens must be" in message
    records = otlp_codec.read_message(admission.messages[0])
    assert (len(records.runs), len(records.model_calls)) == (1, 1)


def test_attributes_of_other_kinds_count_as_absent():
    listed = KeyValue(
        key="gen_ai.usage.input_tokens", value=AnyValue(array_value=ArrayValue(values=[AnyValue(int_value=1)]))
    )
    span = trace_pb2.Span(
        trace_id=TRACE,
        span_id=b"\x02" * 8,
        parent_span_id=b"\x01" * 8,
        name="chat",
        start_time_unix_nano=START,
        end_time_unix_nano=START,
        attributes=[attribute("gen_ai.operation.name", "chat"), listed],
    )
    [records] = [otlp_codec.read_message(m) for m in otlp_codec.admit(export(span)).messages]
    assert records.model_calls[0].input_tokens is None


def test_messages_are_bounded_in_spans_and_bytes():
    many = [root(n) for n in range(1, 251)]
    admission = otlp_codec.admit(export(*many))
    sizes = [
        len(ExportTraceServiceRequest.FromString(m).resource_spans[0].scope_spans[0].spans) for m in admission.messages
    ]
    assert sizes == [100, 100, 50]
    long_error = "e" * 4096
    heavy = [root(n, status=trace_pb2.Status(code=2, message=long_error)) for n in range(1, 150)]
    heavy_messages = otlp_codec.admit(export(*heavy)).messages
    assert all(len(m) <= otlp_codec.MESSAGE_BYTES for m in heavy_messages)
    assert sum(len(otlp_codec.read_message(m).runs) for m in heavy_messages) == 149


def test_spans_of_different_resources_keep_their_own_agent():
    request = export(root(1), service="engine-a")
    request.resource_spans.extend(export(root(2), service="engine-b").resource_spans)
    [message] = otlp_codec.admit(request).messages
    assert sorted(r.agent_id for r in otlp_codec.read_message(message).runs) == ["engine-a", "engine-b"]


def test_a_message_that_does_not_decode_is_malformed():
    with pytest.raises(MalformedTelemetry) as refused:
        otlp_codec.read_message(b"\x0a\xff\xff")
    assert refused.value.field == "payload"


def test_the_response_carries_partial_success_only_when_spans_were_refused():
    accepted = otlp_codec.Admission(accepted=3)
    assert otlp_codec.export_response(accepted, json_encoded=False) == b""
    assert json.loads(otlp_codec.export_response(accepted, json_encoded=True)) == {}
    refused = otlp_codec.Admission(accepted=1, rejected=2, problems=["span 01: trace_id must be set"])
    answer = ExportTraceServiceResponse.FromString(otlp_codec.export_response(refused, json_encoded=False))
    assert answer.partial_success.rejected_spans == 2
    assert answer.partial_success.error_message == "2 span(s) rejected: span 01: trace_id must be set; and 1 more"
    assert json.loads(otlp_codec.export_response(refused, json_encoded=True))["partialSuccess"]["rejectedSpans"] == "2"


def test_a_refusal_is_a_google_rpc_status_in_either_encoding():
    assert status_pb2.Status.FromString(otlp_codec.status(3, "bad", json_encoded=False)) == status_pb2.Status(
        code=3, message="bad"
    )
    assert json.loads(otlp_codec.status(16, "who", json_encoded=True)) == {"code": 16, "message": "who"}


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "resourceSpans",
                    "scopeSpans",
                    "spans",
                    "traceId",
                    "spanId",
                    "parentSpanId",
                    "name",
                    "attributes",
                    "key",
                    "value",
                    "stringValue",
                    "intValue",
                    "resource",
                    "status",
                    "code",
                    "startTimeUnixNano",
                    "links",
                    "x",
                ]
            ),
            inner,
            max_size=4,
        )
    ),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(JSON_VALUES)
def test_any_json_body_decodes_or_is_undecodable(payload):
    try:
        request = otlp_codec.decode_request(json.dumps(payload).encode(), json_encoded=True)
    except otlp_codec.UndecodableTraces:
        return
    otlp_codec.admit(request)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200))
def test_any_bytes_decode_or_are_refused_and_never_raise_anything_else(data):
    try:
        request = otlp_codec.decode_request(data, json_encoded=False)
    except otlp_codec.UndecodableTraces:
        request = None
    if request is not None:
        otlp_codec.admit(request)
    with contextlib.suppress(MalformedTelemetry):
        otlp_codec.read_message(data)


def test_spans_for_an_agent_outside_the_engines_list_are_refused_alone_naming_it():
    # root() is a run and chat() a model call of the resource's agent; the
    # second resource's spans belong to another agent.
    request = export(root(), chat(), service="DISPATCH_AGENT")
    request.resource_spans.extend(export(root(5), chat(6), service="EXCEPTION_AGENT").resource_spans)
    admission = otlp_codec.admit(request, AgentScope(engine="dispatch", agents=frozenset({"DISPATCH_AGENT"})))
    assert (admission.accepted, admission.rejected, admission.foreign_agent) == (2, 2, 2)
    assert "EXCEPTION_AGENT" in admission.rejection_message() and "dispatch" in admission.rejection_message()
    [message] = admission.messages
    records = otlp_codec.read_message(message)
    assert {run.agent_id for run in records.runs} | {call.agent_id for call in records.model_calls} == {
        "DISPATCH_AGENT"
    }
    # Without a list, every agent's spans are admitted.
    assert otlp_codec.admit(request, AgentScope(engine="support")).accepted == 4
