"""Telemetry's ingest state as the alert rules read it: the worst consumer's
lag, and each stream's and consumer's nearness to its limit."""

from __future__ import annotations

import pytest

from outrider.v1 import telemetry_pb2
from services.outcomes.alerting.signals import ingest_signals
from services.outcomes.rules.alerts import StreamLoad

C, S = telemetry_pb2.ConsumerIngest, telemetry_pb2.StreamIngest


def state(pending_limit: int = 1000) -> telemetry_pb2.IngestState:
    return telemetry_pb2.IngestState(
        streams=[
            S(
                name="TELEMETRY",
                fullness=0.85,
                measure="850 of 1,000 messages on telemetry.task",
                consumers=[
                    C(name="telemetry-ingest", pending=850, seconds_behind=412.5),
                    C(name="telemetry-otlp-ingest", pending=0, seconds_behind=0),
                ],
            ),
            S(
                name="FACTS",
                fullness=0.0,
                measure="no limit",
                consumers=[C(name="outcomes-facts", pending=3, seconds_behind=9)],
            ),
        ],
        pending_limit=pending_limit,
    )


def test_the_worst_consumer_is_the_lag_and_each_stream_and_consumer_a_load() -> None:
    read = ingest_signals(state())
    assert (read.lag_s, read.lagging) == (412.5, "TELEMETRY/telemetry-ingest")
    assert [(load.name, load.fullness) for load in read.loads] == [
        ("TELEMETRY", 0.85),
        ("TELEMETRY/telemetry-ingest", pytest.approx(0.85)),
        ("TELEMETRY/telemetry-otlp-ingest", 0.0),
        ("FACTS", 0.0),
        ("FACTS/outcomes-facts", pytest.approx(0.003)),
    ]
    assert read.loads[0] == StreamLoad("TELEMETRY", 0.85, "850 of 1,000 messages on telemetry.task")
    assert read.loads[1].measure == "850 messages not yet delivered, of 1,000 (OUTRIDER_INGEST_LAG_MAX)"


def test_no_consumer_behind_is_no_lag_and_no_limit_leaves_consumers_out() -> None:
    calm = telemetry_pb2.IngestState(streams=[S(name="FACTS", consumers=[C(name="outcomes-facts")])])
    read = ingest_signals(calm)
    assert (read.lag_s, read.lagging) == (0.0, "")
    assert [load.name for load in read.loads] == ["FACTS"]
