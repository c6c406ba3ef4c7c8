"""Wires the registry context into a gRPC server."""

from __future__ import annotations

import grpc

from outrider.v1 import registry_pb2, registry_pb2_grpc

from services.common.runtime import Runtime
from services.registry.service import RegistryService

SERVICE_NAMES = (registry_pb2.DESCRIPTOR.services_by_name["Registry"].full_name,)
USES_NATS = False


async def attach(server: grpc.aio.Server, runtime: Runtime) -> None:
    registry_pb2_grpc.add_RegistryServicer_to_server(RegistryService(runtime.engine), server)
