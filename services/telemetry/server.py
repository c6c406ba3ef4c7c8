"""Wires the telemetry context into a gRPC server."""

from __future__ import annotations

import grpc

from outrider.v1 import telemetry_pb2, telemetry_pb2_grpc

from services.common.runtime import Runtime

SERVICE_NAMES = (telemetry_pb2.DESCRIPTOR.services_by_name["Telemetry"].full_name,)
USES_NATS = False


async def attach(server: grpc.aio.Server, runtime: Runtime) -> None:
    telemetry_pb2_grpc.add_TelemetryServicer_to_server(telemetry_pb2_grpc.TelemetryServicer(), server)
