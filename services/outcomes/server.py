"""Wires the outcomes context into a gRPC server."""

from __future__ import annotations

import grpc

from outrider.v1 import outcomes_pb2, outcomes_pb2_grpc

from services.common.runtime import Runtime

SERVICE_NAMES = (outcomes_pb2.DESCRIPTOR.services_by_name["Outcomes"].full_name,)
USES_NATS = False


async def attach(server: grpc.aio.Server, runtime: Runtime) -> None:
    outcomes_pb2_grpc.add_OutcomesServicer_to_server(outcomes_pb2_grpc.OutcomesServicer(), server)
