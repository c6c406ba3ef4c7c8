"""The FastAPI gateway: authenticates, gates, translates REST to gRPC.

It holds no business rules and no database; every answer comes from a
context's gRPC API.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from grpc_health.v1 import health_pb2, health_pb2_grpc

from gateway import console, errors
from gateway.routes import decision_humans, decisions, outcomes, playground, registry, telemetry
from services.common.clients import ContextClients
from services.common.settings import CONTEXTS, Settings

READINESS_TIMEOUT_S = 2.0


def create_app(settings: Settings) -> FastAPI:
    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        app.state.clients = ContextClients(settings)
        app.state.stubs = {}
        try:
            yield
        finally:
            await app.state.clients.close()

    app = FastAPI(
        title="Outrider",
        version="0.1.0",
        description="Control plane for a fleet of operational AI agents.",
        lifespan=lifespan,
        docs_url="/docs",
    )
    app.state.settings = settings
    errors.install(app)
    for module in (registry, decisions, decision_humans, outcomes, playground, telemetry):
        app.include_router(module.router)
    console.mount(app)

    @app.get("/healthz", tags=["health"], summary="The gateway process is up")
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/readyz", tags=["health"], summary="Every context answers its health check")
    async def readyz(request: Request) -> JSONResponse:
        async def check(context: str) -> tuple[str, str]:
            health = health_pb2_grpc.HealthStub(request.app.state.clients.channel(context))
            try:
                reply = await health.Check(health_pb2.HealthCheckRequest(), timeout=READINESS_TIMEOUT_S)
            except Exception as exc:  # noqa: BLE001 - any failure is "not ready"
                return context, f"unavailable: {type(exc).__name__}"
            return context, health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status).lower()

        results: dict[str, Any] = dict(await asyncio.gather(*(check(c) for c in CONTEXTS)))
        ready = all(state == "serving" for state in results.values())
        return JSONResponse({"ready": ready, "contexts": results}, status_code=200 if ready else 503)

    return app
