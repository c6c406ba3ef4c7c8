"""Telemetry's calls to other contexts, over gRPC: the registry's agents and
decision memory's outcome counts, both read for insights.

A failed call raises `ContextCallError` (services.common.clients); insights
decide what a missing source costs.
"""

from __future__ import annotations

from datetime import datetime

from outrider.v1 import decisions_pb2_grpc, registry_pb2_grpc
from services.telemetry import codec, rules

# Each call's deadline: insights wait this long for a source before they
# leave it out and name it degraded.
UPSTREAM_TIMEOUT_S = 2.0


class RegistryClient:
    """The registry as insights read it: which agents are expected to report."""

    def __init__(self, stub: registry_pb2_grpc.RegistryStub) -> None:
        self._stub = stub

    async def agents(self) -> list[rules.RegistryAgent]:
        reply = await self._stub.ListAgents(codec.all_agents(), timeout=UPSTREAM_TIMEOUT_S)
        return codec.registry_agents(reply)


class DecisionsClient:
    """Decision memory as insights read it: outcome counts over a span."""

    def __init__(self, stub: decisions_pb2_grpc.DecisionsStub) -> None:
        self._stub = stub

    async def outcome_counts(self, since: datetime, before: datetime | None) -> list[tuple[str, str, int]]:
        reply = await self._stub.CountOutcomes(codec.decided_between(since, before), timeout=UPSTREAM_TIMEOUT_S)
        return codec.outcome_counts(reply)
