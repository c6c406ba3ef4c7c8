"""The streams' health as an operator reads it: /readyz red, with the reason,
while a stream is 90 % full or a consumer lags past its bound, and green once
the consumer caught up; /metrics with each stream's and consumer's figures."""

from __future__ import annotations

from nats.js.api import AckPolicy, ConsumerConfig

from services.common.nats import StreamLimits, ensure_topology
from services.common.stream_state import read_stream
from services.outcomes.consumer import DURABLE as FACTS_DURABLE
from services.telemetry.ingest import IngestConfig, ensure_consumer
from tests.harness import eventually, gateway_client, internal_headers, reserved_port, running, with_env
from tests.integration.platform.test_streams import ERROR, booking
from tests.integration.telemetry.otlp_support import metric_samples
from tests.integration.telemetry.support import broker, task

EVERY_CONTEXT_BUT_TELEMETRY = ["registry", "decisions", "outcomes", "playground"]


async def test_readiness_is_red_while_a_stream_is_nearly_full_and_its_consumer_behind_and_green_after(settings):
    small = with_env(settings, stream_max_mb=2, ingest_lag_max=500, telemetry_batch_wait_ms=100)
    async with running(small, EVERY_CONTEXT_BUT_TELEMETRY), broker(small) as (_, js), gateway_client(small) as client:
        await ensure_topology(js, StreamLimits.of(small))
        # The ingest's durable consumer exists, and nobody pulls from it.
        await ensure_consumer(js, IngestConfig.from_settings(small))
        empty = (await client.get("/readyz")).json()
        sent = 0
        while (await read_stream(js, "TELEMETRY")).fullness < 0.9:
            for n in range(sent, sent + 100):
                await js.publish("telemetry.task", task("DISPATCH_AGENT", f"t-{n}", status="failed", error=ERROR))
            sent += 100
        full = await client.get("/readyz")
        async with running(small, ["telemetry"]):
            caught_up = await eventually(
                lambda: client.get("/readyz"),
                lambda reply: reply.status_code == 200 and reply.json()["streams"]["fullness"]["TELEMETRY"] == 0,
                timeout=30,
                what="green again, with every run taken",
            )
    assert empty["streams"] == {
        "ready": True,
        "reasons": [],
        "fullness": {"TELEMETRY": 0.0, "FACTS": 0.0},
        "lag": {"TELEMETRY/telemetry-ingest": 0, "FACTS/outcomes-facts": 0},
    }
    assert full.status_code == 503
    streams = full.json()["streams"]
    assert streams["ready"] is False
    assert streams["lag"] == {"TELEMETRY/telemetry-ingest": sent, "FACTS/outcomes-facts": 0}
    assert streams["fullness"]["TELEMETRY"] >= 0.9
    [fullness, lag] = streams["reasons"]
    assert fullness.startswith("stream TELEMETRY is 9") and f"of {2 * 2**20:,} bytes" in fullness
    assert lag == f"consumer telemetry-ingest of TELEMETRY is {sent:,} messages behind (OUTRIDER_INGEST_LAG_MAX is 500)"
    body = caught_up.json()
    assert body["ready"] is True and body["streams"]["ready"] is True
    assert body["streams"]["fullness"] == {"TELEMETRY": 0.0, "FACTS": 0.0}
    assert body["streams"]["lag"] == {
        "TELEMETRY/telemetry-ingest": 0,
        "TELEMETRY/telemetry-otlp-ingest": 0,
        "FACTS/outcomes-facts": 0,
    }


async def test_metrics_carry_each_streams_and_consumers_figures(settings):
    async with running(settings, ["telemetry"]), broker(settings) as (nc, js), gateway_client(settings) as client:
        await js.add_consumer(
            "FACTS",
            ConsumerConfig(durable_name=FACTS_DURABLE, filter_subject="facts.booking", ack_policy=AckPolicy.EXPLICIT),
        )
        for n in range(5):
            await js.publish("facts.booking", booking(n))
        # Two taken and held; one of them given back and taken again.
        puller = await js.pull_subscribe_bind(FACTS_DURABLE, "FACTS")
        first, _ = await puller.fetch(2, timeout=5)
        # The server handles acks apart from the connection's order, so a
        # flush after a plain nak does not mean it was handled before the next
        # pull. Sent as a request, the nak is answered once it has been.
        await nc.request(first.reply, b"-NAK", timeout=5)
        [again] = await puller.fetch(1, timeout=5)
        stored = await js.stream_info("FACTS")
        samples = metric_samples((await client.get("/metrics", headers=internal_headers())).text)
    assert again.metadata.num_delivered == 2
    facts = {name: value for name, value in samples.items() if 'stream="FACTS"' in name}
    limit = settings.stream_max_mb * 2**20
    assert facts == {
        'outrider_stream_messages{stream="FACTS"}': 5,
        'outrider_stream_bytes{stream="FACTS"}': stored.state.bytes,
        'outrider_stream_max_bytes{stream="FACTS"}': limit,
        # The nearest limit: its bytes, or its one subject's messages.
        'outrider_stream_fullness_ratio{stream="FACTS"}': round(
            max(stored.state.bytes / limit, 5 / settings.stream_max_msgs_per_subject), 6
        ),
        'outrider_consumer_pending_messages{stream="FACTS",consumer="outcomes-facts"}': 3,
        'outrider_consumer_ack_pending_messages{stream="FACTS",consumer="outcomes-facts"}': 2,
        'outrider_consumer_redelivered_messages{stream="FACTS",consumer="outcomes-facts"}': 1,
    }
    assert stored.state.bytes > 0
    assert samples["outrider_streams_readable"] == 1
    assert samples['outrider_consumer_pending_messages{stream="TELEMETRY",consumer="telemetry-ingest"}'] == 0


async def test_without_nats_metrics_still_answer_and_readiness_says_why(settings):
    nowhere = with_env(settings, nats_url=f"nats://127.0.0.1:{reserved_port()}")
    async with running(settings, ["telemetry"]), gateway_client(nowhere) as client:
        metrics = await client.get("/metrics", headers=internal_headers())
        readiness = await client.get("/readyz")
    samples = metric_samples(metrics.text)
    assert metrics.status_code == 200 and samples["outrider_streams_readable"] == 0
    assert "outrider_telemetry_received_total" in samples
    assert not any(name.startswith(("outrider_stream_", "outrider_consumer_")) for name in samples)
    streams = readiness.json()["streams"]
    assert readiness.status_code == 503 and streams["ready"] is False
    [reason] = streams["reasons"]
    assert reason.startswith("NATS did not answer for the streams: ") and "127.0.0.1" not in reason
