"""The playground's calls to other contexts, over gRPC: the registry for the
agent a run tests and for each run's audit row, and decision memory for the
find_precedents read.

A failed call raises `ContextCallError` (services.common.clients), which the
caller passes on or turns into what the model is told.
"""

from __future__ import annotations

from typing import Any

from outrider.v1 import decisions_pb2_grpc, registry_pb2_grpc
from services.playground import codec
from services.playground.store import UnauditedRun


class RegistryClient:
    """The registry as a run reads it (an agent's pinned model, skills and
    tools) and as it audits the run, under the person who asked for it."""

    def __init__(self, stub: registry_pb2_grpc.RegistryStub) -> None:
        self._stub = stub

    async def agent_tools(self, agent_id: str) -> codec.AgentTools:
        # The registry's refusal (AGENT_NOT_FOUND) or its absence passes on as it is.
        return codec.agent_tools(await self._stub.GetAgent(codec.agent_request(agent_id)))

    async def append_audit(self, run: UnauditedRun) -> None:
        await self._stub.AppendAudit(codec.run_audit_request(run))


class DecisionsClient:
    """Decision memory as the find_precedents read asks it."""

    def __init__(self, stub: decisions_pb2_grpc.DecisionsStub) -> None:
        self._stub = stub

    async def precedents(self, *, decision_type: str, context_json: bytes, k: int) -> dict[str, Any]:
        reply = await self._stub.FindSimilar(codec.similar_request(decision_type, context_json, k))
        return codec.precedents(reply)
