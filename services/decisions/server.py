"""Wires the decisions context into a gRPC server."""

from __future__ import annotations

import grpc

from outrider.v1 import decisions_pb2, decisions_pb2_grpc

from services.common.runtime import Runtime

SERVICE_NAMES = (decisions_pb2.DESCRIPTOR.services_by_name["Decisions"].full_name,)
USES_NATS = False


async def attach(server: grpc.aio.Server, runtime: Runtime) -> None:
    decisions_pb2_grpc.add_DecisionsServicer_to_server(decisions_pb2_grpc.DecisionsServicer(), server)
