"""A balanced channel sends calls only to replicas whose health check says
SERVING: a replica whose background job died, and which says so, gets none."""

from __future__ import annotations

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from outrider.rpc import keyed_channel
from outrider.v1 import registry_pb2, registry_pb2_grpc
from services.common.runtime import ContextServer
from tests.harness import INTERNAL_KEY, eventually


async def test_calls_go_only_to_replicas_that_say_they_serve(settings):
    replicas = [ContextServer("registry", settings) for _ in range(2)]
    try:
        ports = [await replica.start("127.0.0.1:0") for replica in replicas]
        channel = keyed_channel(",".join(f"127.0.0.1:{port}" for port in ports), INTERNAL_KEY)
        stub = registry_pb2_grpc.RegistryStub(channel)

        async def answered() -> str:
            try:
                await stub.GetSnapshot(registry_pb2.GetSnapshotRequest(), timeout=2)
            except grpc.aio.AioRpcError as error:
                return error.code().name
            return "OK"

        try:
            assert await answered() == "OK"
            replicas[0].runtime.failed.set()
            # One replica left serving: every call still succeeds.
            assert [await answered() for _ in range(20)] == ["OK"] * 20
            # Both say NOT_SERVING, though both still listen and would answer:
            # the channel sends them nothing.
            replicas[1].runtime.failed.set()
            assert (
                await eventually(answered, lambda code: code != "OK", timeout=10, what="no replica picked")
                == "UNAVAILABLE"
            )
        finally:
            await channel.close()
    finally:
        for replica in replicas:
            await replica.stop(grace=0.2)


async def test_a_health_watch_streams_each_change(settings):
    """What a health-checked channel listens to: the Watch stream."""
    server = ContextServer("registry", settings)
    try:
        port = await server.start("127.0.0.1:0")
        channel = keyed_channel(f"127.0.0.1:{port}", INTERNAL_KEY, health_checked=False)
        try:
            watch = health_pb2_grpc.HealthStub(channel).Watch(health_pb2.HealthCheckRequest(), timeout=10)
            assert (await watch.read()).status == health_pb2.HealthCheckResponse.SERVING
            server.runtime.failed.set()
            assert (await watch.read()).status == health_pb2.HealthCheckResponse.NOT_SERVING
            watch.cancel()
        finally:
            await channel.close()
    finally:
        await server.stop(grace=0.2)
