"""The run series end to end: runs from telemetry.task and model calls from
OTLP spans, read back through REST as latency percentiles, tokens and
estimated cost per bucket."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import httpx
import pytest

from tests.harness import INTERNAL_KEY, bearer, eventually, running, with_env
from tests.integration.telemetry.otlp_support import START, export, live_gateway, span
from tests.integration.telemetry.support import broker, counters, task

PROTOBUF = {"Content-Type": "application/x-protobuf", "X-Internal-Key": INTERNAL_KEY}


def continuous_percentile(values: list[float], fraction: float) -> float:
    """Linear interpolation between the closest ranks, as percentile_cont does."""
    ordered = sorted(values)
    position = fraction * (len(ordered) - 1)
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (position - low) * (ordered[high] - ordered[low])


def chat(n: int, model: str, **usage: int):
    return span(n, "chat", parent=1, ms=40, gen_ai__operation__name="chat", gen_ai__request__model=model, **usage)


def hour_of(instant: datetime) -> datetime:
    return datetime.fromtimestamp(int(instant.timestamp()) // 3600 * 3600, tz=UTC)


async def test_latency_tokens_and_cost_per_bucket_through_rest(settings):
    # Two buckets of runs hours apart, each run inside its bucket whatever
    # the minute the test runs at.
    earlier = hour_of(datetime.now(UTC) - timedelta(hours=5))
    later = hour_of(datetime.now(UTC) - timedelta(hours=2))
    durations = {earlier: [1000, 100, 400, 200, 300], later: [150, 50]}
    calls_hour = hour_of(datetime.fromtimestamp(START / 1e9, tz=UTC))
    fast = with_env(settings, telemetry_batch_wait_ms=100)
    request = export(
        span(1, "sweep_bookings", ms=500),
        chat(2, "claude-sonnet-4-5", gen_ai__usage__input_tokens=1000, gen_ai__usage__output_tokens=200),
        # Usage not reported: unknown, so it adds a call but no tokens.
        chat(3, "claude-sonnet-4-5"),
        chat(4, "claude-haiku-4-5", gen_ai__usage__input_tokens=500, gen_ai__usage__output_tokens=50),
        chat(5, "gpt-unpriced", gen_ai__usage__input_tokens=10, gen_ai__usage__output_tokens=1),
        service="model-engine",
    )
    async with (
        running(fast, ["registry", "telemetry"]),
        live_gateway(fast) as base,
        broker(fast) as (_, js),
        httpx.AsyncClient(base_url=base) as client,
    ):
        for bucket, values in durations.items():
            for n, ms in enumerate(values):
                started = bucket + timedelta(minutes=5 + n)
                await js.publish("telemetry.task", task("EXCEPTION_AGENT", f"{bucket:%H}-{n}", started=started, ms=ms))
        posted = await client.post("/v1/traces", content=request.SerializeToString(), headers=PROTOBUF)
        await eventually(
            lambda: counters(fast),
            lambda seen: seen["inserted"] == 7 and seen["model_calls_inserted"] == 4,
            what="seven runs and four model calls",
        )
        reply = await client.get("/admin/ai/insights/series?days=1", headers=bearer(role=3))
        # The earlier hour alone, asked as a range: read twice, as the second
        # read comes from what the first kept of its ended bucket.
        only_earlier = {"from": earlier.isoformat(), "to": (earlier + timedelta(hours=1)).isoformat()}
        ranged = [
            await client.get("/admin/ai/insights/series", params=only_earlier, headers=bearer(role=3)) for _ in range(2)
        ]
    assert posted.status_code == 200, posted.text
    assert reply.status_code == 200, reply.text
    body = reply.json()
    assert body["price_source"] == "default"
    for answer in ranged:
        assert answer.status_code == 200, answer.text
        span_body = answer.json()
        assert (span_body["window_days"], span_body["bucket_seconds"]) == (0, 3600)
        [agent_span] = span_body["agents"]
        assert [(p["start"], p["runs"]) for p in agent_span["points"]] == [(earlier.isoformat(), 5)]

    runs = {a["agent_id"]: {datetime.fromisoformat(p["start"]): p for p in a["points"]} for a in body["agents"]}
    for bucket, values in durations.items():
        point = runs["EXCEPTION_AGENT"][bucket]
        assert point["runs"] == len(values)
        assert point["p50_ms"] == pytest.approx(continuous_percentile(values, 0.5))
        assert point["p95_ms"] == pytest.approx(continuous_percentile(values, 0.95))
    assert runs["EXCEPTION_AGENT"][earlier]["p95_ms"] == pytest.approx(880.0), "400 + 0.8 x (1000 - 400)"
    quiet = [p for p in runs["EXCEPTION_AGENT"].values() if p["runs"] == 0]
    assert quiet and all(p["p50_ms"] is None and p["p95_ms"] is None for p in quiet)

    models = {s["name"]: {datetime.fromisoformat(p["start"]): p for p in s["points"]} for s in body["usage_by_model"]}
    assert set(models) == {"claude-haiku-4-5", "claude-sonnet-4-5", "gpt-unpriced"}
    sonnet = models["claude-sonnet-4-5"][calls_hour]
    assert (sonnet["calls"], sonnet["reported_calls"], sonnet["input_tokens"], sonnet["output_tokens"]) == (
        2,
        1,
        1000,
        200,
    )
    assert sonnet["estimated_cost"] == pytest.approx((1000 * 3 + 200 * 15) / 1e6)
    assert models["claude-haiku-4-5"][calls_hour]["estimated_cost"] == pytest.approx((500 * 1 + 50 * 5) / 1e6)
    assert all(p["estimated_cost"] is None for p in models["gpt-unpriced"].values()), "no price is not zero"
    other_hour = next(hour for hour in models["claude-sonnet-4-5"] if hour != calls_hour)
    assert models["claude-sonnet-4-5"][other_hour]["estimated_cost"] == 0.0

    [agent] = body["usage_by_agent"]
    assert agent["name"] == "model-engine"
    in_hour = next(p for p in agent["points"] if datetime.fromisoformat(p["start"]) == calls_hour)
    assert (in_hour["calls"], in_hour["reported_calls"], in_hour["input_tokens"]) == (4, 3, 1510)
    assert in_hour["estimated_cost"] is None, "the unpriced model leaves the agent's spend unknown"


async def test_an_empty_price_table_prices_nothing_and_says_so(settings):
    bare = with_env(settings, telemetry_batch_wait_ms=100, model_prices={})
    request = export(
        span(1, "sweep_bookings"),
        chat(2, "claude-haiku-4-5", gen_ai__usage__input_tokens=5, gen_ai__usage__output_tokens=5),
        service="model-engine",
    )
    async with (
        running(bare, ["registry", "telemetry"]),
        live_gateway(bare) as base,
        httpx.AsyncClient(base_url=base) as client,
    ):
        posted = await client.post("/v1/traces", content=request.SerializeToString(), headers=PROTOBUF)
        await eventually(lambda: counters(bare), lambda seen: seen["model_calls_inserted"] == 1, what="the call")
        reply = await client.get("/admin/ai/insights/series?days=1", headers=bearer(role=3))
    assert posted.status_code == 200 and reply.status_code == 200, reply.text
    body = reply.json()
    assert body["price_source"] == "none"
    [model] = body["usage_by_model"]
    assert sum(p["input_tokens"] for p in model["points"]) == 5
    assert all(p["estimated_cost"] is None for p in model["points"])
