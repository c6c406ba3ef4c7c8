"""Wires the playground context into a gRPC server."""

from __future__ import annotations

import grpc

from outrider.v1 import playground_pb2, playground_pb2_grpc

from services.common.runtime import Runtime

SERVICE_NAMES = (playground_pb2.DESCRIPTOR.services_by_name["Playground"].full_name,)
USES_NATS = False


async def attach(server: grpc.aio.Server, runtime: Runtime) -> None:
    playground_pb2_grpc.add_PlaygroundServicer_to_server(playground_pb2_grpc.PlaygroundServicer(), server)
