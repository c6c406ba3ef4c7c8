import json
from datetime import UTC, datetime, timedelta

import pytest

from services.common import windows
from services.telemetry import rules
from services.telemetry.rules import (
    AgentInsight,
    LiveState,
    MalformedTelemetry,
    RegistryAgent,
    RunStats,
    assemble,
    fold_outcomes,
    parse_heartbeat,
    parse_task,
    receiving,
)

NOW = datetime(2026, 9, 29, 15, 27, tzinfo=UTC)


def task(**overrides):
    payload = {
        "agent_id": "EXCEPTION_AGENT",
        "task_id": "t-1",
        "task_type": "stall_response",
        "status": "succeeded",
        "started_at": "2026-09-29T20:57:00",
        "finished_at": "2026-09-29T20:57:01.250",
    }
    payload.update(overrides)
    return json.dumps({k: v for k, v in payload.items() if v is not ...}).encode()


def test_a_naive_engine_run_is_read_as_utc_and_measures_its_duration():
    run = parse_task(task())
    assert run.agent_id == "EXCEPTION_AGENT"
    assert run.task_id == "t-1"
    assert run.status == "succeeded"
    assert run.started_at == datetime(2026, 9, 29, 20, 57, tzinfo=UTC)
    assert run.finished_at == datetime(2026, 9, 29, 20, 57, 1, 250_000, tzinfo=UTC)
    assert run.duration_ms == pytest.approx(1250.0)
    assert run.error is None


def test_offset_timestamps_measure_across_zones():
    # 20:57 in India is 15:27 UTC: the same instant, 3 s apart in total.
    run = parse_task(task(started_at="2026-09-29T20:57:00+05:30", finished_at="2026-09-29T15:27:03Z"))
    assert run.duration_ms == pytest.approx(3000.0)
    # Placed by the instants they name, whatever zone they were written in.
    assert run.started_at == datetime(2026, 9, 29, 15, 27, tzinfo=UTC)
    assert run.finished_at == datetime(2026, 9, 29, 15, 27, 3, tzinfo=UTC)
    assert run.started_at.utcoffset() == run.finished_at.utcoffset() == timedelta(0)


@pytest.mark.parametrize(
    ("field", "started", "finished"),
    [
        ("started_at", "0001-01-01T00:00:00+14:00", "0001-01-02T00:00:00+00:00"),
        ("finished_at", "2026-09-29T15:27:00+00:00", "9999-12-31T23:59:59-14:00"),
    ],
)
def test_a_run_time_that_leaves_the_calendar_in_utc_is_refused_by_name(field, started, finished):
    with pytest.raises(MalformedTelemetry) as refused:
        parse_task(task(started_at=started, finished_at=finished))
    assert refused.value.field == field


def test_numeric_task_ids_name_the_same_task_as_their_text():
    assert parse_task(task(task_id=42)).task_id == "42"


@pytest.mark.parametrize(
    "task_id", [2**63, -(2**63) - 1, -int("9" * 400), 10**4000], ids=["2^63", "-2^63-1", "400 digits", "10^4000"]
)
def test_a_numeric_task_id_past_int64_is_refused_not_written_out(task_id):
    # Found by the NATS fuzzer: a 400-digit task_id was stored as a 401-character id.
    with pytest.raises(MalformedTelemetry) as refused:
        parse_task(task(task_id=task_id))
    assert refused.value.field == "task_id" and str(2**63 - 1) in refused.value.problem


def test_unknown_keys_are_ignored():
    assert parse_task(task(trace_id="abc", model="claude")).task_type == "stall_response"


def test_a_failed_run_keeps_its_error_cut_to_the_limit():
    run = parse_task(task(status="failed", error="x" * (rules.MAX_ERROR_LENGTH + 50)))
    assert run.status == "failed"
    assert len(run.error) == rules.MAX_ERROR_LENGTH


@pytest.mark.parametrize(
    ("body", "field"),
    [
        (b"not json", "payload"),
        (b"[1, 2]", "payload"),
        (task(agent_id=...), "agent_id"),
        (task(agent_id=""), "agent_id"),
        (task(agent_id="has space"), "agent_id"),
        (task(agent_id=".leading"), "agent_id"),
        (task(agent_id="A" * 129), "agent_id"),
        (task(task_id=...), "task_id"),
        (task(task_id=True), "task_id"),
        (task(task_type=...), "task_type"),
        (task(task_type=7), "task_type"),
        (task(status="done"), "status"),
        (task(started_at=...), "started_at"),
        (task(finished_at=...), "finished_at"),
        (task(started_at="yesterday"), "started_at"),
        (task(started_at="2026-09-29"), "started_at"),
        (task(started_at=1759170000), "started_at"),
        (task(finished_at="2026-02-30T10:00:00"), "finished_at"),
        (task(finished_at="2026-09-29T20:56:59"), "finished_at"),
        (task(finished_at="2026-09-29T20:58:00+05:30"), "finished_at"),
        (task(error=12), "error"),
        (task(error="bad\u0000byte"), "error"),
        (task(task_type="bad\u0000type"), "task_type"),
    ],
)
def test_malformed_runs_name_the_field(body, field):
    with pytest.raises(MalformedTelemetry) as caught:
        parse_task(body)
    assert caught.value.field == field
    assert caught.value.problem


def test_heartbeats_parse_and_round_trip_through_the_bucket_value():
    beat = parse_heartbeat(json.dumps({"agent_id": "DISPATCH_AGENT", "state": "idle", "at": "2026-09-29T20:57:00"}))
    assert (beat.agent_id, beat.state, beat.at) == ("DISPATCH_AGENT", "idle", "2026-09-29T20:57:00")
    stored = rules.read_heartbeat_value(rules.heartbeat_value(beat), NOW)
    assert stored == LiveState(state="idle", at="2026-09-29T20:57:00", received_at=NOW)


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"state": "idle", "at": "2026-09-29T20:57:00"}, "agent_id"),
        ({"agent_id": "A", "at": "2026-09-29T20:57:00"}, "state"),
        ({"agent_id": "A", "state": "idle"}, "at"),
        ({"agent_id": "A", "state": "idle", "at": "soon"}, "at"),
        ({"agent_id": "A*", "state": "idle", "at": "2026-09-29T20:57:00"}, "agent_id"),
    ],
)
def test_malformed_heartbeats_name_the_field(payload, field):
    with pytest.raises(MalformedTelemetry) as caught:
        parse_heartbeat(json.dumps(payload))
    assert caught.value.field == field


def test_an_unreadable_bucket_entry_is_unknown_not_silent():
    assert rules.read_heartbeat_value(b"{broken", None).state == rules.UNKNOWN


@pytest.mark.parametrize(("asked", "window"), [(None, 7), (1, 1), (30, 30)])
def test_window_defaults_and_bounds(asked, window):
    span = rules.AskedWindow(days=asked).span(NOW)
    assert (span.days, span.start, span.end) == (window, NOW - timedelta(days=window), NOW)


@pytest.mark.parametrize("asked", [0, -1, 31, 365])
def test_windows_out_of_range_are_refused_not_clamped(asked):
    with pytest.raises(windows.InvalidWindow) as caught:
        rules.AskedWindow(days=asked).span(NOW)
    assert str(asked) in str(caught.value)
    assert caught.value.field == "days"


def test_receiving_needs_a_run_or_a_heartbeat_within_five_minutes():
    live = {"A": LiveState("idle", "", NOW)}
    assert receiving(None, NOW, {}) is False
    assert receiving(NOW - timedelta(minutes=5, seconds=1), NOW, {}) is False
    assert receiving(NOW - timedelta(minutes=5), NOW, {}) is True
    assert receiving(None, NOW, live) is True


def stats(agent_id, runs=2, failures=1):
    return RunStats(agent_id=agent_id, runs=runs, failures=failures, avg_ms=150.0, p95_ms=195.0, last_run_at=NOW)


def test_registry_agents_without_runs_are_listed_silent_with_zeros():
    rows = assemble(
        [stats("A")],
        [RegistryAgent("A", "live"), RegistryAgent("B", "live"), RegistryAgent("OLD", "retired")],
        {"A": LiveState("busy", "2026-09-29T20:57:00", NOW)},
    )
    assert rows == [
        AgentInsight("A", 2, 1, 150.0, 195.0, NOW, "busy", NOW, True),
        AgentInsight("B", 0, 0, 0.0, 0.0, None, rules.SILENT, None, True),
    ]


def test_unregistered_reporters_are_shown_and_retired_ones_that_still_report_too():
    rows = assemble([stats("ROGUE")], [RegistryAgent("OLD", "retired")], {"OLD": LiveState("idle", "", NOW)})
    assert [(r.agent_id, r.registered, r.state) for r in rows] == [
        ("OLD", True, "idle"),
        ("ROGUE", False, rules.SILENT),
    ]


def test_unreadable_sources_give_unknown_state_and_runs_alone():
    rows = assemble([stats("A")], None, None)
    assert [(r.agent_id, r.state, r.registered) for r in rows] == [("A", rules.UNKNOWN, False)]


def test_outcomes_fold_models_together_and_name_pending():
    folded = fold_outcomes(
        [
            ("stall_response", "success", 3),
            ("stall_response", "success", 2),
            ("stall_response", "", 4),
            ("assignment_failure", "failure", 1),
        ]
    )
    assert [(c.decision_type, c.outcome, c.count) for c in folded] == [
        ("assignment_failure", "failure", 1),
        ("stall_response", "pending", 4),
        ("stall_response", "success", 5),
    ]


@pytest.mark.parametrize(("asked", "days"), [(None, 30), (1, 1), (30, 30)])
def test_the_run_facets_read_a_month_unless_asked(asked, days):
    assert rules.facet_days(asked) == days


@pytest.mark.parametrize("asked", [0, 31])
def test_run_facets_out_of_range_are_refused(asked):
    with pytest.raises(windows.InvalidWindow) as caught:
        rules.facet_days(asked)
    assert caught.value.field == "days"
