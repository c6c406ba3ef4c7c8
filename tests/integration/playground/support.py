"""The playground wired for a test: the registry, decision memory and the
playground as real contexts, the gateway in front, a scripted model API and
a Doormile-like backend behind it."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import asyncpg
import httpx
from starlette.applications import Starlette

from gateway.app import create_app
from services.common.settings import Settings
from tests.harness import bearer, gateway_client, running, with_env
from tests.integration.playground.scripted import Backend, ScriptedModel, serving

SEED = json.loads((Path(__file__).resolve().parents[3] / "services" / "registry" / "seed.json").read_text())
RUN = "/admin/ai/playground/run"


@dataclass
class Playground:
    client: httpx.AsyncClient
    model: ScriptedModel
    backend: Backend
    settings: Settings

    async def run(
        self,
        agent_id: str,
        prompt: str,
        *,
        skill_id: str | None = None,
        sub: str = "u-1",
        role: int = 1,
        headers: dict[str, str] | None = None,
    ) -> httpx.Response:
        body: dict[str, Any] = {"agent_id": agent_id, "prompt": prompt}
        if skill_id is not None:
            body["skill_id"] = skill_id
        return await self.client.post(RUN, json=body, headers={**bearer(role=role, sub=sub), **(headers or {})})


@asynccontextmanager
async def playground(
    settings: Settings,
    *,
    api_key: str | None = "test-anthropic-key",
    backend: bool = True,
    contexts: tuple[str, ...] = ("registry", "decisions", "playground"),
    backend_app: Starlette | None = None,
) -> AsyncIterator[Playground]:
    """backend_app replaces the scripted backend, e.g. with the demo's."""
    model, doormile = ScriptedModel(), Backend()
    async with AsyncExitStack() as stack:
        model_url = await stack.enter_async_context(serving(model.app()))
        backend_url = await stack.enter_async_context(serving(backend_app or doormile.app()))
        configured = with_env(
            settings,
            anthropic_api_key=api_key,
            anthropic_base_url=model_url,
            tool_base_urls={"doormile_api": backend_url} if backend else {},
        )
        await stack.enter_async_context(running(configured, contexts))
        client = await stack.enter_async_context(gateway_client(configured))
        yield Playground(client, model, doormile, configured)


@asynccontextmanager
async def served_gateway(settings: Settings) -> AsyncIterator[str]:
    """The gateway over real HTTP, so a client can hang up mid-stream (the
    in-process transport hands over a response only once it is complete)."""
    app = create_app(settings)
    async with app.router.lifespan_context(app), serving(app) as url:
        yield url


async def sse_events(reply: httpx.Response) -> AsyncIterator[tuple[str, dict[str, Any]]]:
    """Server-Sent Events as they arrive: (event name, its JSON data)."""
    name = ""
    async for line in reply.aiter_lines():
        if line.startswith("event: "):
            name = line.removeprefix("event: ")
        elif line.startswith("data: "):
            yield name, json.loads(line.removeprefix("data: "))


def seed_tool(name: str) -> dict[str, Any]:
    """A seed tool as the model must receive it."""
    tool = next(t for t in SEED["tools"] if t["name"] == name)
    return {"name": name, "description": tool["description"], "input_schema": tool["input_schema"]}


def seed_skill(skill_id: str) -> dict[str, Any]:
    return next(s for s in SEED["skills"] if s["id"] == skill_id)


async def count_rows(dsn: str, table: str) -> int:
    conn = await asyncpg.connect(dsn, server_settings={"search_path": "playground"})
    try:
        return await conn.fetchval(f"select count(*) from {table}")
    finally:
        await conn.close()
