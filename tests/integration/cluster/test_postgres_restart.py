"""Postgres restarted under load: the contexts say NOT_SERVING while it is
away, come back to SERVING by themselves, and every run published meanwhile
lands once. Nothing is restarted but Postgres."""

from __future__ import annotations

import asyncio
import json
import shutil
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import asyncpg
import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from outrider.client.telemetry import TelemetryPublisher
from outrider.nats_access import ENGINE_INBOX_PREFIX, open_connection
from outrider.rpc import ERROR_CODE_KEY, keyed_channel
from outrider.v1 import telemetry_pb2, telemetry_pb2_grpc
from services.common import runtime as runtime_module
from services.common.runtime import LIVENESS_SERVICE
from tests.harness import (
    INTERNAL_KEY,
    NATS_ENGINE,
    Stack,
    build_template,
    eventually,
    make_settings,
    reset_nats,
    running,
    service_channel,
)
from tests.integration.cluster.support import SeparatePostgres

pytestmark = pytest.mark.cluster

RUNS = 300
AGENT = "RESTART_AGENT"
SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING


@pytest.fixture
async def own_postgres(stack, monkeypatch):
    """A Postgres of this test's own, so stopping it stops no other test's."""
    monkeypatch.setattr(runtime_module, "DATABASE_CHECK_INTERVAL_S", 0.5)
    data_dir = Path(tempfile.mkdtemp(prefix="outrider-restart-"))
    server = SeparatePostgres(data_dir)
    try:
        own = Stack(data_dir, await server.start(), stack.nats_url)
        await build_template(own)
        yield own, server
    finally:
        server.close()
        shutil.rmtree(data_dir, ignore_errors=True)


async def health(stub: health_pb2_grpc.HealthStub, service: str = "") -> int:
    try:
        return (await stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=1)).status
    except Exception:  # noqa: BLE001 - no answer at all counts as unknown
        return health_pb2.HealthCheckResponse.UNKNOWN


async def test_contexts_ride_through_a_postgres_restart(own_postgres):
    own, postgres = own_postgres
    await reset_nats(own.nats_url)
    settings = make_settings(own, "outrider_template", OUTRIDER_TELEMETRY_BATCH_WAIT_MS="100")
    async with running(settings, ["registry", "telemetry"]) as servers:
        # Not health-checked: a replica that says NOT_SERVING must still be asked.
        channels = {name: keyed_channel(settings.addr(name), INTERNAL_KEY, health_checked=False) for name in servers}
        stubs = {name: health_pb2_grpc.HealthStub(channel) for name, channel in channels.items()}
        engine = await open_connection(
            own.nats_url,
            name="restart-test",
            user=NATS_ENGINE.name,
            password=NATS_ENGINE.password,
            inbox_prefix=ENGINE_INBOX_PREFIX,
            timeout=10,
        )
        publisher = TelemetryPublisher(engine)
        started = datetime(2026, 1, 1, tzinfo=UTC)
        sent = 0

        async def publish() -> None:
            nonlocal sent
            for n in range(RUNS):
                await publisher.task_run(
                    agent_id=AGENT,
                    task_id=f"run-{n}",
                    task_type="restart_check",
                    status="succeeded",
                    started_at=started,
                    finished_at=started + timedelta(milliseconds=n),
                )
                sent += 1
                await asyncio.sleep(0.02)

        try:
            publishing = asyncio.create_task(publish())
            await eventually(lambda: _now(sent), lambda count: count >= RUNS // 4, what="a quarter published")
            stopped_at = time.monotonic()
            await postgres.stop()
            for name, stub in stubs.items():
                await eventually(
                    lambda stub=stub: health(stub),
                    lambda status: status == NOT_SERVING,
                    timeout=15,
                    what=f"{name} NOT_SERVING without Postgres",
                )
                # Alive all the same: nothing to restart.
                assert await health(stub, LIVENESS_SERVICE) == SERVING
            noticed_s = time.monotonic() - stopped_at
            # Callers still reach it, through a balanced channel: what needs
            # no database answers, what needs it says why it cannot.
            async with service_channel(settings, "telemetry") as balanced:
                telemetry = telemetry_pb2_grpc.TelemetryStub(balanced)
                counters = await telemetry.GetCounters(telemetry_pb2.GetCountersRequest(), timeout=5)
                assert counters.received > 0
                with pytest.raises(grpc.aio.AioRpcError) as refused:
                    await telemetry.GetInsights(telemetry_pb2.GetInsightsRequest(), timeout=5)
                assert refused.value.code() == grpc.StatusCode.UNAVAILABLE
                assert dict(refused.value.trailing_metadata() or ()).get(ERROR_CODE_KEY) == "DATABASE_UNAVAILABLE"
            await asyncio.sleep(2.0)
            await postgres.start()
            restarted_at = time.monotonic()
            for name, stub in stubs.items():
                await eventually(
                    lambda stub=stub: health(stub),
                    lambda status: status == SERVING,
                    timeout=20,
                    what=f"{name} SERVING again",
                )
            recovered_s = time.monotonic() - restarted_at
            await publishing
            db = await asyncpg.connect(own.raw_dsn("outrider_template"))
            try:
                landed = await eventually(
                    lambda: db.fetchval("select count(*) from telemetry.runs where agent_id = $1", AGENT),
                    lambda count: count >= RUNS,
                    timeout=60,
                    what="every run in Postgres",
                )
            finally:
                await db.close()
            assert all(not server.runtime.failed.is_set() for server in servers.values())
        finally:
            await publisher.close()
            for channel in channels.values():
                await channel.close()

    figures = {
        "runs_sent": sent,
        "landed": landed,
        "not_serving_after_s": round(noticed_s, 1),
        "serving_again_after_s": round(recovered_s, 1),
    }
    print("postgres restart figures:", json.dumps(figures))
    assert (sent, landed) == (RUNS, RUNS), figures


async def _now(value: int) -> int:
    return value
