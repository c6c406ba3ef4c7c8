"""Starts the alert jobs of one outcomes replica: the evaluation timer and,
with a webhook configured, the deliverer. Both run under the runtime's
supervision, so a job that dies turns the context's health red."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import httpx

from outrider.v1 import decisions_pb2_grpc, registry_pb2_grpc, telemetry_pb2_grpc
from services.common.runtime import Runtime
from services.outcomes.alerting.delivery import Deliverer, run_deliveries
from services.outcomes.alerting.job import Alerter, run_on_timer
from services.outcomes.alerting.signals import SignalSources
from services.outcomes.rules.alerts import Thresholds

MIN_ALERT_INTERVAL_S = 1.0
# Undelivered transitions are looked at this often for retries that fell due.
DELIVERY_POLL_S = 1.0


def start_alerting(
    runtime: Runtime,
    *,
    decisions: decisions_pb2_grpc.DecisionsStub,
    telemetry: telemetry_pb2_grpc.TelemetryStub,
    registry: registry_pb2_grpc.RegistryStub,
) -> asyncio.Event:
    """Spawn the jobs; the event answered wakes an evaluation now."""
    settings = runtime.settings
    alerter = Alerter(
        engine=runtime.engine,
        sources=SignalSources(
            decisions=decisions, telemetry=telemetry, registry=registry, window=settings.alert_window
        ),
        thresholds=Thresholds(
            min_drop=settings.alert_min_drop,
            silent_after=timedelta(seconds=settings.alert_silent_after_s),
            max_ingest_lag_s=float(settings.alert_ingest_lag_s),
        ),
    )
    wake = asyncio.Event()
    interval = max(settings.alert_interval_s, MIN_ALERT_INTERVAL_S)
    runtime.spawn(run_on_timer(alerter.evaluate, interval_s=interval, wake=wake), name="alert-timer")
    if settings.alert_webhook_url:
        client = httpx.AsyncClient()
        runtime.on_close(client.aclose)
        deliverer = Deliverer(
            engine=runtime.engine,
            url=settings.alert_webhook_url,
            # Production refuses to boot with a URL and no secret (settings);
            # development signs with an empty key rather than not at all.
            secret=settings.alert_webhook_secret or "",
            client=client,
        )
        runtime.spawn(run_deliveries(deliverer, wake=alerter.delivered, poll_s=DELIVERY_POLL_S), name="alert-delivery")
    return wake
