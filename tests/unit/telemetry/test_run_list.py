"""The run list's pure parts: filters, cursors, how a run finds its model
calls, and the wire forms on both sides of the context."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from google.protobuf.timestamp_pb2 import Timestamp

from gateway.codec.telemetry import model_call_json, run_detail_json, run_json, runs_request
from gateway.contracts.paging import PageRequest
from gateway.contracts.telemetry import RunFilters
from outrider.v1 import common_pb2, telemetry_pb2
from services.common import paging
from services.common.errors import FieldError
from services.telemetry import codec, rules
from services.telemetry.otlp.rules import Span, map_span

STARTED = datetime(2026, 9, 29, 15, 27, 3, 250000, tzinfo=UTC)
TRACE = bytes.fromhex("4bf92f3577b34da6a3ce929d0e0e4736")
RUN = rules.TaskRun(
    agent_id="sweep-engine",
    task_id="sweep-1",
    task_type="sweep_bookings",
    status="failed",
    started_at=STARTED,
    finished_at=STARTED + timedelta(seconds=2),
    duration_ms=2000.0,
    error="hub unreachable",
)
CALL = rules.ModelCall(
    trace_id=TRACE.hex(),
    span_id="00000000000000a1",
    agent_id="sweep-engine",
    operation="chat",
    provider="anthropic",
    request_model="claude-sonnet-4",
    response_model=None,
    input_tokens=None,
    output_tokens=12,
    status="failed",
    error_type="overloaded",
    started_at=STARTED,
    duration_ms=80.5,
)


def _stamp(value: datetime) -> Timestamp:
    stamp = Timestamp()
    stamp.FromDatetime(value)
    return stamp


def test_an_otlp_runs_task_id_names_its_trace_and_an_engines_own_does_not():
    now = datetime.now(UTC)
    start = int((now - timedelta(minutes=1)).timestamp()) * 10**9
    root = Span(
        trace_id=TRACE,
        span_id=(7).to_bytes(8, "big"),
        parent_span_id=b"",
        name="handle_booking",
        start_ns=start,
        end_ns=start + 10**8,
        error_status=False,
        status_message="",
        attributes={},
        resource={"service.name": "booking-engine"},
    )
    mapped = map_span(root, now=now)
    assert mapped.run is not None
    # The mapping and the lookup agree on the shape, whatever either says.
    assert rules.run_trace(mapped.run.task_id) == TRACE.hex()
    assert rules.run_trace("sweep-1") is None
    assert rules.run_trace(TRACE.hex()) is None, "a trace id alone is not an OTLP run's task id"
    assert rules.run_trace(f"{TRACE.hex().upper()}-0000000000000007") is None, "the mapping writes lower-case hex"
    assert rules.run_trace(f"{TRACE.hex()}-0000000000000007-retry") is None


def test_an_untraced_run_looks_for_calls_between_its_start_and_finish():
    assert rules.calls_window(RUN) == (STARTED, STARTED + timedelta(seconds=2))


def test_a_detail_keeps_the_first_calls_and_says_when_it_left_some_out():
    calls = [replace(CALL, span_id=f"{n:016x}") for n in range(rules.MAX_RUN_MODEL_CALLS + 1)]
    full = rules.run_model_calls(RUN, calls[:-1], rules.MATCHED_BY_WINDOW)
    assert (len(full.model_calls), full.truncated) == (rules.MAX_RUN_MODEL_CALLS, False)
    cut = rules.run_model_calls(RUN, calls, rules.MATCHED_BY_TRACE)
    assert (cut.model_calls, cut.truncated, cut.matched_by) == (calls[:-1], True, "trace")


@pytest.mark.parametrize("word", ["", "succeeded", "failed"])
def test_status_filters_are_the_task_statuses_or_none(word):
    assert rules.run_status_filter(word) == (word or None)


def test_any_other_status_is_refused_naming_the_field():
    with pytest.raises(FieldError) as refused:
        rules.run_status_filter("pending")
    assert refused.value.field == "status"


def test_a_range_must_not_be_empty():
    rules.run_range(STARTED, None)
    rules.run_range(None, STARTED)
    rules.run_range(STARTED, STARTED + timedelta(microseconds=1))
    for to in (STARTED, STARTED - timedelta(seconds=1)):
        with pytest.raises(FieldError) as refused:
            rules.run_range(STARTED, to)
        assert refused.value.field == "started_to"


def test_a_cursor_names_the_run_it_ended_on():
    cursor = paging.encode_cursor(STARTED, "sweep-engine", "task with spaces, and \u00e9")
    assert paging.decode_cursor(cursor, rules.run_key) == rules.RunKey(
        STARTED, "sweep-engine", "task with spaces, and \u00e9"
    )
    for forged in (paging.encode_cursor(STARTED, "only-two"), paging.encode_cursor("2026-09-29T15:27:03", "a", "b")):
        with pytest.raises(FieldError) as refused:
            paging.decode_cursor(forged, rules.run_key)
        assert refused.value.field == "cursor"


def test_a_listing_request_becomes_its_filters():
    request = telemetry_pb2.ListTaskRunsRequest(
        agent_id="sweep-engine",
        status="failed",
        started_from=_stamp(STARTED - timedelta(days=1)),
        page=common_pb2.PageRequest(cursor=paging.encode_cursor(STARTED, "a", "b"), limit=20),
    )
    listing = codec.run_listing_from_proto(request)
    assert listing == rules.RunListing(
        agent_id="sweep-engine",
        status="failed",
        task_type=None,
        started_from=STARTED - timedelta(days=1),
        started_to=None,
        after=rules.RunKey(STARTED, "a", "b"),
        limit=20,
    )
    assert codec.run_listing_from_proto(telemetry_pb2.ListTaskRunsRequest()).limit == paging.DEFAULT_LIMIT


@pytest.mark.parametrize(
    ("request_", "field"),
    [
        (telemetry_pb2.ListTaskRunsRequest(agent_id="a\x00b"), "agent_id"),
        (telemetry_pb2.ListTaskRunsRequest(task_type="t" * (rules.MAX_ID_LENGTH + 1)), "task_type"),
        (telemetry_pb2.ListTaskRunsRequest(status="done"), "status"),
        (telemetry_pb2.ListTaskRunsRequest(started_from=Timestamp(seconds=-62135596800)), "started_from"),
        (
            telemetry_pb2.ListTaskRunsRequest(started_from=_stamp(STARTED), started_to=_stamp(STARTED)),
            "started_to",
        ),
        (telemetry_pb2.ListTaskRunsRequest(page=common_pb2.PageRequest(limit=201)), "limit"),
    ],
)
def test_a_listing_request_outside_the_rules_is_refused_naming_the_field(request_, field):
    with pytest.raises(FieldError) as refused:
        codec.run_listing_from_proto(request_)
    assert refused.value.field == field


def test_a_run_asked_for_needs_both_its_agent_and_its_task():
    assert codec.run_identity_from_proto(telemetry_pb2.GetTaskRunRequest(agent_id="a", task_id="t")) == ("a", "t")
    for request in (telemetry_pb2.GetTaskRunRequest(agent_id="a"), telemetry_pb2.GetTaskRunRequest(task_id="t")):
        with pytest.raises(FieldError):
            codec.run_identity_from_proto(request)


def test_a_run_and_its_calls_cross_the_wire_with_unknowns_left_null():
    detail = rules.RunDetail(run=RUN, model_calls=[CALL], matched_by=rules.MATCHED_BY_WINDOW, truncated=False)
    body = run_detail_json(codec.run_detail_to_proto(detail))
    assert body == {
        "run": {
            "agent_id": "sweep-engine",
            "task_id": "sweep-1",
            "task_type": "sweep_bookings",
            "status": "failed",
            "started_at": "2026-09-29T15:27:03.250000+00:00",
            "finished_at": "2026-09-29T15:27:05.250000+00:00",
            "duration_ms": 2000.0,
            "error": "hub unreachable",
            "trace_id": None,
        },
        "model_calls": [
            {
                "trace_id": TRACE.hex(),
                "span_id": "00000000000000a1",
                "operation": "chat",
                "provider": "anthropic",
                # The model that answered is not known here: the one asked for stands in.
                "model": "claude-sonnet-4",
                "input_tokens": None,
                "output_tokens": 12,
                "status": "failed",
                "error_type": "overloaded",
                "started_at": "2026-09-29T15:27:03.250000+00:00",
                "duration_ms": 80.5,
            }
        ],
        "matched_by": "window",
        "model_calls_truncated": False,
    }
    silent = replace(CALL, request_model=None, provider=None, error_type=None, output_tokens=0, status="succeeded")
    answered = model_call_json(codec.model_call_to_proto(silent))
    assert (answered["model"], answered["provider"], answered["error_type"]) == (None, None, None)
    assert answered["output_tokens"] == 0, "zero reported tokens are zero, not unknown"
    traced = replace(RUN, task_id=f"{TRACE.hex()}-0000000000000007", error=None, status="succeeded")
    assert run_json(codec.run_to_proto(traced))["trace_id"] == TRACE.hex()
    assert run_json(codec.run_to_proto(traced))["error"] is None


def test_the_gateway_leaves_unset_bounds_unset():
    ask = runs_request(RunFilters(started_to=STARTED), PageRequest(cursor="", limit=50))
    assert not ask.HasField("started_from")
    assert ask.started_to.ToDatetime(tzinfo=UTC) == STARTED
    assert (ask.page.limit, ask.page.cursor) == (50, "")


def _slowest(cursor: str = "") -> rules.RunListing:
    return codec.run_listing_from_proto(
        telemetry_pb2.ListTaskRunsRequest(order="slowest", page=common_pb2.PageRequest(cursor=cursor))
    )


@pytest.mark.parametrize("duration_ms", [0.0, 1.5, 1234.567, 86_400_000.0, 0.1 + 0.2])
def test_a_page_of_the_slowest_runs_ends_on_a_cursor_that_reads_back_exactly(duration_ms):
    last = replace(RUN, duration_ms=duration_ms)
    cursor = paging.encode_cursor(*rules.run_page_key(rules.SLOWEST, last))
    assert _slowest(cursor).after == rules.SlowRunKey(duration_ms, last.agent_id, last.task_id)


def test_a_cursor_holds_to_the_order_it_was_issued_for():
    newest = paging.encode_cursor(*rules.run_page_key(rules.NEWEST, RUN))
    slowest = paging.encode_cursor(*rules.run_page_key(rules.SLOWEST, RUN))
    for listing, cursor in (
        (_slowest, newest),
        (
            lambda c: codec.run_listing_from_proto(
                telemetry_pb2.ListTaskRunsRequest(page=common_pb2.PageRequest(cursor=c))
            ),
            slowest,
        ),
    ):
        with pytest.raises(FieldError) as refused:
            listing(cursor)
        assert refused.value.field == "cursor"


@pytest.mark.parametrize("duration", ["nan", "inf", "-inf", "fast"])
def test_a_forged_duration_in_a_cursor_is_refused(duration):
    with pytest.raises(FieldError) as refused:
        _slowest(paging.encode_cursor("slowest", duration, "A", "t"))
    assert refused.value.field == "cursor"


def test_an_order_the_list_does_not_have_is_refused_and_none_is_newest():
    assert codec.run_listing_from_proto(telemetry_pb2.ListTaskRunsRequest()).order == rules.NEWEST
    with pytest.raises(FieldError) as refused:
        codec.run_listing_from_proto(telemetry_pb2.ListTaskRunsRequest(order="fastest"))
    assert refused.value.field == "order"
