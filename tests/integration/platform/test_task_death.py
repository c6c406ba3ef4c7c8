"""A background job that dies is a context that is down: health says so at
once, and the process exits so whatever runs it starts a fresh one."""

from __future__ import annotations

import asyncio

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from outrider.rpc import keyed_channel as channel
from services.common.runtime import ContextServer, serve_forever
from tests.harness import INTERNAL_KEY, eventually, gateway_client


async def health(settings, context: str) -> int | None:
    """The context's health status; None while nothing listens yet."""
    async with channel(settings.addr(context), INTERNAL_KEY, health_checked=False) as ch:
        try:
            reply = await health_pb2_grpc.HealthStub(ch).Check(health_pb2.HealthCheckRequest(), timeout=2)
        except grpc.aio.AioRpcError:
            return None
    return reply.status


async def readiness(settings) -> tuple[int, dict]:
    async with gateway_client(settings) as client:
        reply = await client.get("/readyz")
    return reply.status_code, reply.json()


@pytest.mark.parametrize(
    ("context", "job"),
    [
        ("telemetry", "telemetry.ingest"),
        ("outcomes", "outcomes.facts-consumer"),
        ("outcomes", "outcomes.rollout-guard"),
    ],
)
async def test_a_killed_consumer_turns_readiness_red_until_the_context_restarts(settings, context, job):
    server = ContextServer(context, settings)
    await server.start()
    try:
        assert await health(settings, context) == health_pb2.HealthCheckResponse.SERVING
        victim = next(task for task in server.runtime.tasks if task.get_name() == job)
        victim.cancel()
        await eventually(
            lambda: health(settings, context),
            lambda status: status == health_pb2.HealthCheckResponse.NOT_SERVING,
            what=f"{context} health turns NOT_SERVING",
        )
        status, body = await readiness(settings)
        assert status == 503 and body["contexts"][context] == "not_serving"
    finally:
        await server.stop(grace=0.2)
    # What a supervisor does: a fresh process of the same context.
    fresh = ContextServer(context, settings)
    await fresh.start()
    try:
        await eventually(
            lambda: health(settings, context),
            lambda status: status == health_pb2.HealthCheckResponse.SERVING,
            what=f"{context} serving again",
        )
        status, body = await readiness(settings)
        assert body["contexts"][context] == "serving"
    finally:
        await fresh.stop(grace=0.2)


async def test_serving_ends_with_status_1_when_a_job_dies(settings):
    serving = asyncio.create_task(serve_forever("telemetry", settings))
    await eventually(
        lambda: health(settings, "telemetry"),
        lambda status: status == health_pb2.HealthCheckResponse.SERVING,
        what="telemetry up",
    )
    ingest = next(task for task in asyncio.all_tasks() if task.get_name() == "telemetry.ingest")
    ingest.cancel()
    assert await asyncio.wait_for(serving, timeout=30) == 1


async def test_a_job_stopped_by_shutdown_is_not_a_failure(settings):
    server = ContextServer("telemetry", settings)
    await server.start()
    runtime = server.runtime
    await server.stop(grace=0.2)
    assert not runtime.failed.is_set()
