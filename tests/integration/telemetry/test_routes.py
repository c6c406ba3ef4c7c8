"""The gateway's telemetry routes: window validation, gates and /metrics."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from tests.harness import (
    INTERNAL_KEY,
    bearer,
    eventually,
    gateway_client,
    internal_headers,
    running,
)
from tests.integration.telemetry.support import broker, counters, task


@pytest.mark.parametrize(
    ("query", "code", "named"),
    [
        ("?days=0", "INVALID_ARGUMENT", ["days"]),
        ("?days=31", "INVALID_ARGUMENT", ["days"]),
        ("?days=-3", "INVALID_ARGUMENT", ["days"]),
        ("?days=99999999999999999999", "INVALID_ARGUMENT", ["days"]),
        ("?days=week", "INVALID_ARGUMENT", ["days"]),
    ],
)
async def test_windows_outside_one_to_thirty_days_are_422_naming_days(settings, query, code, named):
    async with running(settings, ["telemetry"]), gateway_client(settings) as client:
        reply = await client.get(f"/admin/ai/insights{query}", headers=bearer(role=1))
    assert reply.status_code == 422
    error = reply.json()["error"]
    assert error["code"] == code
    assert "days" in error["message"]
    assert list(error["details"]["fields"]) == named


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({}, 401),
        (bearer(role=3, tenant=12), 403),
        (bearer(role=2), 403),
        (internal_headers(), 401),
    ],
)
async def test_insights_are_for_platform_staff_only(settings, headers, status):
    async with gateway_client(settings) as client:
        reply = await client.get("/admin/ai/insights?days=1", headers=headers)
    assert reply.status_code == status
    assert "code" in reply.json()["error"]


async def test_metrics_need_the_internal_key(settings):
    async with gateway_client(settings) as client:
        for headers in ({}, {"X-Internal-Key": "wrong"}, bearer(role=1), {"Authorization": "Bearer wrong"}):
            reply = await client.get("/metrics", headers=headers)
            assert reply.status_code == 401, headers
            assert reply.json()["error"]["code"] == "UNAUTHENTICATED"


async def test_metrics_expose_the_ingest_counters_as_prometheus_text(settings):
    async with running(settings, ["telemetry"]), broker(settings) as (_, js):
        await js.publish("telemetry.task", task("EXCEPTION_AGENT", "t-1"))
        await js.publish("telemetry.task", task("EXCEPTION_AGENT", "t-1"))
        await js.publish("telemetry.task", b"{}")

        # Deliveries are counted before their batch commits; wait for the writes too.
        await eventually(
            lambda: counters(settings),
            lambda seen: seen["received"] == 3 and seen["inserted"] + seen["duplicates"] == 2,
            what="three deliveries written or terminated",
        )
        async with gateway_client(settings) as client:
            by_header = await client.get("/metrics", headers=internal_headers())
            by_bearer = await client.get("/metrics", headers={"Authorization": f"Bearer {INTERNAL_KEY}"})
    assert by_header.status_code == 200
    assert by_header.headers["content-type"].startswith("text/plain; version=0.0.4")
    assert by_bearer.text == by_header.text
    # The streams' figures beside them are tests/integration/platform/test_stream_health.py's.
    samples = {
        line.split()[0]: int(line.split()[1])
        for line in by_header.text.splitlines()
        if line and not line.startswith(("#", "outrider_stream", "outrider_consumer"))
    }
    assert samples == {
        "outrider_telemetry_received_total": 3,
        "outrider_telemetry_inserted_total": 1,
        "outrider_telemetry_duplicates_total": 1,
        "outrider_telemetry_malformed_total": 1,
        "outrider_telemetry_redelivered_total": 0,
        "outrider_telemetry_heartbeats_total": 0,
        "outrider_telemetry_dead_lettered_total": 0,
        'outrider_telemetry_malformed_by_field_total{field="agent_id"}': 1,
        **{
            f"outrider_telemetry_{name}_total": 0
            for name in (
                "otlp_received",
                "otlp_malformed",
                "otlp_spans_rejected",
                "otlp_runs_inserted",
                "model_calls_inserted",
                "otlp_duplicates",
                "otlp_unwritable",
                "replies_refused",
            )
        },
        **{
            f'outrider_otlp_requests_total{{outcome="{outcome}"}}': 0
            for outcome in ("accepted", "undecodable", "unauthenticated", "too_large", "unsupported", "unavailable")
        },
        **{f'outrider_otlp_spans_total{{outcome="{outcome}"}}': 0 for outcome in ("accepted", "rejected", "ignored")},
        # Retention, from the contexts that answered: only telemetry runs here.
        **{
            f'outrider_retention_{name}{{context="telemetry",table="{table}"}}': value
            for table in ("runs", "model_calls")
            for name, value in (("deleted_total", 0), ("keep_seconds", 30 * 86400))
        },
        'outrider_retention_failed_passes_total{context="telemetry"}': 0,
        # The decisions context is not running: its series is left out, the rest is served.
        **{f'outrider_engine_agent_refusals_total{{kind="{kind}"}}': 0 for kind in ("task_run", "heartbeat", "span")},
        # Only telemetry serves, so /readyz would be red.
        "outrider_ready": 0,
        **{
            f'outrider_context_serving{{context="{context}"}}': int(context == "telemetry")
            for context in ("registry", "decisions", "outcomes", "playground", "telemetry")
        },
        # The scrapes are the only requests, and they are not counted.
        **{f'outrider_http_responses_total{{class="{c}"}}': 0 for c in ("2xx", "3xx", "4xx", "5xx")},
    }
    assert "# TYPE outrider_telemetry_inserted_total counter" in by_header.text


async def test_the_run_series_buckets_runs_and_failures_per_agent(settings, template, database):
    started = datetime.now(UTC) - timedelta(minutes=1)
    async with running(settings, ["telemetry", "registry", "decisions"]), broker(settings) as (_, js):
        for i in range(4):
            await js.publish(
                "telemetry.task",
                task("EXCEPTION_AGENT", f"e-{i}", status="failed" if i == 0 else "succeeded", started=started),
            )
        # A run that started two days ago, reported now: outside a one-day
        # window and inside a week.
        await js.publish("telemetry.task", task("DISPATCH_AGENT", "d-1", started=started - timedelta(days=2)))

        async def handled() -> bool:
            return (await counters(settings))["inserted"] == 5

        await eventually(handled, what="five runs")
        async with gateway_client(settings) as client:
            day = await client.get("/admin/ai/insights/series?days=1", headers=bearer(role=4))
            week = await client.get("/admin/ai/insights/series?days=7", headers=bearer(role=3))
            refused = await client.get("/admin/ai/insights/series?days=31", headers=bearer(role=1))
            tenant = await client.get("/admin/ai/insights/series?days=1", headers=bearer(role=1, tenant=3))
    assert day.status_code == 200, day.text
    body = day.json()
    assert (body["window_days"], body["bucket_seconds"]) == (1, 3600)
    [exception] = body["agents"]
    assert exception["agent_id"] == "EXCEPTION_AGENT" and len(exception["points"]) == 25
    assert exception["points"][0]["start"] == body["start"]
    assert [(p["runs"], p["failures"]) for p in exception["points"] if p["runs"]] == [(4, 1)]
    [holding] = [datetime.fromisoformat(p["start"]) for p in exception["points"] if p["runs"]]
    assert holding <= started < holding + timedelta(hours=1), "the runs are in the hour they started"
    weekly = {a["agent_id"]: a["points"] for a in week.json()["agents"]}
    assert week.json()["bucket_seconds"] == 6 * 3600 and len(weekly["DISPATCH_AGENT"]) == 29
    assert sum(p["runs"] for p in weekly["DISPATCH_AGENT"]) == 1
    assert refused.status_code == 422 and list(refused.json()["error"]["details"]["fields"]) == ["days"]
    assert tenant.status_code == 403
