from datetime import UTC, datetime, timedelta

from gateway.codec.telemetry import METRICS, agent_json, exposition
from outrider.v1 import decisions_pb2, registry_pb2, telemetry_pb2
from outrider.wire import timestamp
from services.common.stream_state import ConsumerState, StreamState
from services.telemetry import codec, rules
from services.telemetry.ingest_state import StreamReading

NOW = datetime(2026, 9, 29, 15, 27, tzinfo=UTC)


def test_unset_days_means_default_and_zero_means_zero():
    assert codec.asked_window(telemetry_pb2.GetInsightsRequest()) == rules.AskedWindow()
    assert codec.asked_window(telemetry_pb2.GetInsightsRequest(days=0)).days == 0


def test_a_range_arrives_as_its_instants():
    ask = telemetry_pb2.GetRunSeriesRequest(start=timestamp(NOW), end=timestamp(NOW + timedelta(hours=2)))
    assert codec.asked_window(ask) == rules.AskedWindow(start=NOW, end=NOW + timedelta(hours=2))


def test_registry_and_decision_replies_become_domain_values():
    agents = registry_pb2.ListAgentsResponse(items=[registry_pb2.Agent(id="A", status="retired")])
    assert codec.registry_agents(agents) == [rules.RegistryAgent("A", "retired")]
    counts = decisions_pb2.CountOutcomesResponse(
        items=[
            decisions_pb2.OutcomeCount(decision_type="stall_response", outcome="", count=2, model="m"),
        ]
    )
    assert codec.outcome_counts(counts) == [("stall_response", "", 2)]
    last_week = codec.decided_between(NOW - timedelta(days=7), None)
    assert last_week.decided_since.ToDatetime(tzinfo=UTC) == NOW - timedelta(days=7)
    assert not last_week.HasField("decided_before")
    assert codec.decided_between(NOW, NOW + timedelta(hours=1)).decided_before.ToDatetime(
        tzinfo=UTC
    ) == NOW + timedelta(hours=1)


def test_insights_say_when_decisions_were_not_read():
    silent = rules.AgentInsight("B", 0, 0, 0.0, 0.0, None, rules.SILENT, None, True)
    reply = codec.insights_to_proto(
        span=rules.AskedWindow(days=7).span(NOW),
        receiving=False,
        agents=[silent],
        decisions=None,
        degraded={"decisions": "UNAVAILABLE"},
        last_received_at=None,
    )
    assert reply.decisions_available is False
    assert list(reply.decisions) == []
    assert [(d.source, d.reason) for d in reply.degraded] == [("decisions", "UNAVAILABLE")]
    assert not reply.HasField("last_received_at")
    assert agent_json(reply.agents[0]) == {
        "agent_id": "B",
        "runs": 0,
        "failures": 0,
        "avg_ms": None,
        "p95_ms": None,
        "last_run_at": None,
        "state": "silent",
        "last_heartbeat_at": None,
        "registered": True,
        "model_calls": 0,
        "input_tokens": 0,
        "output_tokens": 0,
        "estimated_cost": None,
    }


def test_an_agent_with_runs_shows_its_figures_and_instants():
    busy = rules.AgentInsight("A", 4, 1, 250.0, 390.5, NOW, "busy", NOW, False)
    reply = codec.insights_to_proto(
        span=rules.AskedWindow(start=NOW - timedelta(days=3), end=NOW - timedelta(days=1)).span(NOW),
        receiving=True,
        agents=[busy],
        decisions=[rules.OutcomeCount("stall_response", "success", 3)],
        degraded={},
        last_received_at=NOW,
    )
    assert reply.decisions_available is True
    assert (reply.window_days, reply.window_end.ToDatetime(tzinfo=UTC)) == (0, NOW - timedelta(days=1))
    shown = agent_json(reply.agents[0])
    assert (shown["avg_ms"], shown["p95_ms"]) == (250.0, 390.5)
    assert shown["last_run_at"] == "2026-09-29T15:27:00+00:00"


def test_exposition_is_prometheus_text_with_every_counter():
    text = exposition(
        codec.counters_to_proto(
            {
                "received": 9,
                "inserted": 5,
                "duplicates": 2,
                "malformed": 3,
                "redelivered": 3,
                "heartbeats": 4,
                "dead_lettered": 1,
                "malformed_by_field": {"payload": 2, "started_at": 1},
            }
        )
    )
    assert text.endswith("\n")
    lines = text.splitlines()
    assert len(lines) == 3 * len(METRICS) + 2 + 2
    assert 'outrider_telemetry_malformed_by_field_total{field="payload"} 2' in lines
    assert "outrider_telemetry_redelivered_total 3" in lines
    assert lines[0].startswith("# HELP outrider_telemetry_received_total ")
    assert lines[1] == "# TYPE outrider_telemetry_received_total counter"


def test_ingest_state_carries_each_streams_nearest_limit_and_each_consumers_lag():
    consumer = ConsumerState(
        name="telemetry-ingest", filters=("telemetry.task",), pending=7, ack_pending=2, redelivered=0
    )
    quiet = ConsumerState(
        name="telemetry-otlp-ingest", filters=("telemetry.otlp",), pending=0, ack_pending=0, redelivered=0
    )
    stream = StreamState(
        name="TELEMETRY",
        messages=9,
        bytes=900,
        max_bytes=1000,
        max_msgs=-1,
        max_msgs_per_subject=-1,
        consumers=(consumer, quiet),
    )
    reply = codec.ingest_state_to_proto(
        [StreamReading(stream, {"telemetry-ingest": 31.5, "telemetry-otlp-ingest": 0.0})], pending_limit=500
    )
    assert reply.pending_limit == 500
    [telemetry] = reply.streams
    assert (telemetry.name, telemetry.fullness, telemetry.measure) == ("TELEMETRY", 0.9, "900 of 1,000 bytes")
    assert (telemetry.messages, telemetry.bytes) == (9, 900)
    assert [(c.name, c.pending, c.ack_pending, c.seconds_behind) for c in telemetry.consumers] == [
        ("telemetry-ingest", 7, 2, 31.5),
        ("telemetry-otlp-ingest", 0, 0, 0.0),
    ]
