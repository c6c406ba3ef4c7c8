"""The first vertical slice: Postgres → registry gRPC → gateway REST, gated."""

from __future__ import annotations

import asyncpg
import grpc
import pytest

from outrider.v1 import registry_pb2, registry_pb2_grpc
from services.common.clients import channel
from tests.harness import INTERNAL_KEY, bearer, gateway_client, running


async def insert_agent(dsn: str, agent_id: str, status: str = "live") -> None:
    conn = await asyncpg.connect(dsn, server_settings={"search_path": "registry"})
    try:
        await conn.execute(
            "insert into agents (id, name, runtime, status, has_autonomy_gate) values ($1, $2, 'engine', $3, true)"
            " on conflict (id) do nothing",
            agent_id, agent_id.title(), status,
        )
    finally:
        await conn.close()


async def test_agents_flow_from_postgres_through_grpc_and_gateway(settings, template, database):
    async with running(settings, ["registry"]):
        await insert_agent(template.raw_dsn(database), "ZZ_SLICE_AGENT", "simulation")
        async with gateway_client(settings) as client:
            reply = await client.get("/admin/ai/agents", headers=bearer(role=3))
    assert reply.status_code == 200
    body = reply.json()
    assert body["next_cursor"] is None
    agent = next(a for a in body["items"] if a["id"] == "ZZ_SLICE_AGENT")
    assert agent["status"] == "simulation"
    assert agent["runtime"] == "engine"
    assert agent["skill_count"] == 0


async def test_grpc_refuses_a_wrong_internal_key(settings):
    async with running(settings, ["registry"]):
        async with channel(settings.addr("registry"), "not-the-key") as ch:
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await registry_pb2_grpc.RegistryStub(ch).ListAgents(registry_pb2.ListAgentsRequest())
        assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED
        async with channel(settings.addr("registry"), INTERNAL_KEY) as ch:
            reply = await registry_pb2_grpc.RegistryStub(ch).ListAgents(registry_pb2.ListAgentsRequest())
        assert isinstance(reply, registry_pb2.ListAgentsResponse)


async def test_readyz_reports_each_context(settings):
    async with running(settings, ["registry"]):
        async with gateway_client(settings) as client:
            reply = await client.get("/readyz")
            healthz = await client.get("/healthz")
    assert healthz.status_code == 200
    assert reply.status_code == 503
    contexts = reply.json()["contexts"]
    assert contexts["registry"] == "serving"
    assert contexts["decisions"].startswith("unavailable")
