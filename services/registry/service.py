"""The registry's gRPC servicer: parse, call the store or a rule, encode."""

from __future__ import annotations

import grpc
from sqlalchemy.ext.asyncio import AsyncEngine

from outrider.v1 import registry_pb2, registry_pb2_grpc

from services.registry import codec, store


class RegistryService(registry_pb2_grpc.RegistryServicer):
    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine

    async def ListAgents(
        self, request: registry_pb2.ListAgentsRequest, context: grpc.aio.ServicerContext
    ) -> registry_pb2.ListAgentsResponse:
        async with self._engine.connect() as conn:
            rows = await store.list_agents(conn)
        return registry_pb2.ListAgentsResponse(items=[codec.agent_to_proto(row) for row in rows])
