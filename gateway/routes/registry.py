"""Registry routes: /admin/ai/agents, skills, tools, audit and the engine snapshot."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Request

from gateway.auth import Principal, staff
from gateway.upstream import stub
from outrider.v1 import registry_pb2, registry_pb2_grpc

router = APIRouter(tags=["registry"])


def agent_json(agent: registry_pb2.Agent) -> dict[str, Any]:
    return {
        "id": agent.id,
        "name": agent.name,
        "runtime": agent.runtime,
        "purpose": agent.purpose,
        "wake_on": agent.wake_on,
        "status": agent.status,
        "has_autonomy_gate": agent.has_autonomy_gate,
        "autonomous": agent.autonomous,
        "model": agent.model or None,
        "skill_count": agent.skill_count,
        "tool_count": agent.tool_count,
    }


@router.get("/admin/ai/agents", summary="Every agent with its status badge and skill and tool counts")
async def list_agents(request: Request, _: Principal = Depends(staff)) -> dict[str, Any]:
    registry = stub(request, "registry", registry_pb2_grpc.RegistryStub)
    reply = await registry.ListAgents(registry_pb2.ListAgentsRequest())
    return {"items": [agent_json(a) for a in reply.items], "next_cursor": None}
