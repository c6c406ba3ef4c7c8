"""The telemetry service killed with SIGKILL in the middle of writing a batch,
then started again: the table ends holding each published run exactly once."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import asyncpg
import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from services.common.settings import Settings
from tests.harness import INTERNAL_KEY, JWT_SECRET, NATS_SERVICE, SERVICE_KEY, Stack, eventually
from tests.integration.telemetry.support import (
    broker,
    consumer_state,
    counters,
    run_keys,
    task,
)

ROOT = Path(__file__).resolve().parents[3]


def service_env(settings: Settings) -> dict[str, str]:
    return {
        **os.environ,
        "DATABASE_URL": settings.database_url or "",
        "NATS_URL": settings.nats_url or "",
        "OUTRIDER_NATS_PASSWORD": NATS_SERVICE.password,
        "OUTRIDER_INTERNAL_KEY": INTERNAL_KEY,
        "OUTRIDER_SERVICE_KEY": SERVICE_KEY,
        "OUTRIDER_JWT_SECRET": JWT_SECRET,
        "OUTRIDER_TELEMETRY_ADDR": settings.addr("telemetry"),
        "OUTRIDER_DATA_DIR": str(settings.data_dir),
        "OUTRIDER_TELEMETRY_BATCH_SIZE": "50",
        "OUTRIDER_TELEMETRY_BATCH_WAIT_MS": "200",
        # Short, so the runs the killed process held come back within the test.
        "OUTRIDER_TELEMETRY_ACK_WAIT_S": "3",
    }


async def serving(address: str) -> bool:
    try:
        async with grpc.aio.insecure_channel(address) as ch:
            reply = await health_pb2_grpc.HealthStub(ch).Check(health_pb2.HealthCheckRequest(), timeout=0.5)
        return reply.status == health_pb2.HealthCheckResponse.SERVING
    except grpc.aio.AioRpcError:
        return False


async def start_service(settings: Settings, log: Path) -> asyncio.subprocess.Process:
    with log.open("ab") as sink:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "launcher.cli",
            "serve",
            "telemetry",
            cwd=ROOT,
            env=service_env(settings),
            stdout=sink,
            stderr=sink,
        )
    await eventually(
        lambda: serving(settings.addr("telemetry")), timeout=30, what=f"telemetry subprocess serving (log: {log})"
    )
    return process


@asynccontextmanager
async def table_locked(stack: Stack, database: str) -> AsyncIterator[None]:
    """Hold the runs table so the service's next insert blocks mid-batch."""
    conn = await asyncpg.connect(stack.raw_dsn(database), server_settings={"search_path": "telemetry"})
    try:
        transaction = conn.transaction()
        await transaction.start()
        await conn.execute("lock table runs in access exclusive mode")
        try:
            yield
        finally:
            await transaction.rollback()
    finally:
        await conn.close()


async def test_sigkill_mid_batch_then_restart_keeps_every_run_once(settings, template, database, tmp_path):
    log = tmp_path / "telemetry.log"
    published: set[tuple[str, str]] = set()
    process = await start_service(settings, log)
    try:
        async with broker(settings) as (_nc, js):

            async def publish(first: int, last: int) -> None:
                for n in range(first, last):
                    agent = f"AGENT_{n % 4}"
                    await js.publish("telemetry.task", task(agent, f"t-{n}", ms=50 + n))
                    published.add((agent, f"t-{n}"))

            await publish(0, 100)
            await eventually(lambda: _rows_are(template, database, published), what="runs before the crash")
            before_crash = sorted(published)

            async with table_locked(template, database):
                await publish(100, 300)

                async def mid_batch() -> bool:
                    _, held = await consumer_state(js)
                    return held > 0

                await eventually(mid_batch, what="a batch delivered and being written")
                process.send_signal(signal.SIGKILL)
                assert await process.wait() == -signal.SIGKILL
            # Sent again by an engine that never heard back, after the crash.
            await js.publish("telemetry.task", task("AGENT_1", "t-101", ms=151))
            await publish(300, 350)
            # The batch the process was writing died uncommitted with it.
            assert await run_keys(template, database) == before_crash

            process = await start_service(settings, log)
            await eventually(
                lambda: _rows_are(template, database, published),
                timeout=30,
                what="every published run landed after the restart",
            )
            await eventually(lambda: _drained(js), what="consumer drained")
            # The batch the dead process held came back to the new one.
            restarted = await counters(settings)
            assert restarted["redelivered"] >= 1
            assert restarted["inserted"] == len(published) - len(before_crash)
        assert len(await run_keys(template, database)) == len(published) == 350
    finally:
        if process.returncode is None:
            process.terminate()
            await process.wait()


async def _rows_are(stack, database, expected) -> bool:
    return set(await run_keys(stack, database)) == expected


async def _drained(js) -> bool:
    return await consumer_state(js) == (0, 0)
