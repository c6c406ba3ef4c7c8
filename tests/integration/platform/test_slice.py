"""The first vertical slice: Postgres → registry gRPC → gateway REST, gated."""

from __future__ import annotations

import asyncpg
import grpc
import pytest

from outrider.v1 import registry_pb2, registry_pb2_grpc
from tests.harness import (
    bearer,
    engine_channel,
    gateway_client,
    running,
    service_channel,
)


async def insert_agent(dsn: str, agent_id: str, status: str = "live") -> None:
    conn = await asyncpg.connect(dsn, server_settings={"search_path": "registry"})
    try:
        await conn.execute(
            "insert into agents (id, name, runtime, status, has_autonomy_gate) values ($1, $2, 'engine', $3, true)"
            " on conflict (id) do nothing",
            agent_id,
            agent_id.title(),
            status,
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


async def test_grpc_refuses_a_wrong_key_and_an_engine_key_reading_the_console(settings):
    async with running(settings, ["registry"]):
        async with engine_channel(settings, "registry", "not-the-key-0123456789abcdefghij") as ch:
            with pytest.raises(grpc.aio.AioRpcError) as wrong:
                await registry_pb2_grpc.RegistryStub(ch).ListAgents(registry_pb2.ListAgentsRequest())
        async with engine_channel(settings, "registry") as ch:
            with pytest.raises(grpc.aio.AioRpcError) as engine:
                await registry_pb2_grpc.RegistryStub(ch).ListAgents(registry_pb2.ListAgentsRequest())
            snapshot = await registry_pb2_grpc.RegistryStub(ch).GetSnapshot(registry_pb2.GetSnapshotRequest())
        async with service_channel(settings, "registry") as ch:
            reply = await registry_pb2_grpc.RegistryStub(ch).ListAgents(registry_pb2.ListAgentsRequest())
    assert wrong.value.code() == grpc.StatusCode.UNAUTHENTICATED
    assert engine.value.code() == grpc.StatusCode.PERMISSION_DENIED
    assert snapshot.snapshot.etag and isinstance(reply, registry_pb2.ListAgentsResponse)


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
