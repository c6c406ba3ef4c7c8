"""The FastAPI gateway: authenticates, gates, translates REST to gRPC.

It holds no business rules and no database; every answer comes from a
context's gRPC API.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Literal

from fastapi import FastAPI, Request
from fastapi.openapi.utils import get_openapi
from fastapi.responses import JSONResponse
from pydantic import Field

from gateway import console, errors, readiness
from gateway.contracts.common import Reply
from gateway.contracts.decisions import EMBEDDING_SCHEMA_NAME
from gateway.limits import BodyCap
from gateway.request_ids import RequestIds
from gateway.responses import CountedResponses, ResponseCounts
from gateway.routes import (
    decision_humans,
    decisions,
    otlp,
    outcomes,
    playground,
    registry,
    telemetry,
)
from outrider.balancing import MAX_ATTEMPTS
from outrider.precedent_stream import PrecedentSearches
from services.common.clients import ContextClients
from services.common.settings import Settings
from services.outcomes.rules import MAX_EVENT_BYTES

# Precedent searches go over a few long-lived streams rather than a call
# each (engines search on every decision): several, so that a balanced
# channel spreads them over the decisions replicas, and a search tries as
# many streams as a read call has attempts.
PRECEDENT_STREAMS = 4
# A person's message is a few lines; 64 KiB is hundreds of them.
HUMAN_INPUT_BODY_BYTES = 64 * 1024


class Health(Reply):
    status: Literal["ok"]


class StreamsReadiness(Reply):
    ready: bool = Field(description="false while a stream is 90 % full or more, or a consumer lags past its bound")
    reasons: list[str] = Field(description="why not ready, one line each: the stream or consumer and its figures")
    fullness: dict[str, float] = Field(
        description="each stream's fullness, 0 to 1, by its nearest limit: bytes, messages, or its fullest subject"
    )
    lag: dict[str, int] = Field(
        description="each durable consumer (`STREAM/consumer`): messages stored and not yet delivered to it; "
        "more than OUTRIDER_INGEST_LAG_MAX is not ready"
    )


class Readiness(Reply):
    ready: bool
    contexts: dict[str, str] = Field(
        description="each context's health: serving, not_serving (`not_serving: lost nats, postgres` names the "
        "dependencies it cannot reach) or unavailable: …"
    )
    gateway: dict[str, str] = Field(
        description="the gateway's own dependencies: `nats` (the OTLP intake's connection, once it has one) is "
        "connected or lost"
    )
    streams: StreamsReadiness = Field(description="the JetStream streams the contexts consume, and their consumers")


def openapi_document(app: FastAPI) -> dict[str, Any]:
    """The OpenAPI document, with what only this deployment knows filled in."""
    if app.openapi_schema is None:
        document = get_openapi(title=app.title, version=app.version, description=app.description, routes=app.routes)
        schemas = document.setdefault("components", {}).setdefault("schemas", {})
        # FastAPI documents its own 422 body on every route with parameters;
        # this gateway answers every 422 in the envelope instead.
        for item in document["paths"].values():
            for operation in item.values():
                if "requestBody" in operation:
                    operation["responses"].setdefault(
                        "413",
                        {
                            "description": "the body is over the size limit; `details.limit_bytes` says the limit",
                            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorEnvelope"}}},
                        },
                    )
                for answer in operation.get("responses", {}).values():
                    content = answer.get("content", {})
                    # FastAPI adds an untyped JSON answer to every route; beside
                    # the media type a route declares (Prometheus text) it would
                    # promise a JSON body no answer of the route ever is.
                    if len(content) > 1 and content.get("application/json", {}).get("schema") == {}:
                        del content["application/json"]
                answer = operation.get("responses", {}).get("422")
                if answer is not None:
                    answer["description"] = "the request breaks a rule; `details.fields` names each field at fault"
                    answer["content"] = {
                        "application/json": {"schema": {"$ref": "#/components/schemas/ValidationErrorEnvelope"}}
                    }
        for name in ("HTTPValidationError", "ValidationError"):
            schemas.pop(name, None)
        dimension = app.state.settings.embedding_dimension
        for schema in schemas.values():
            for field in schema.get("properties", {}).values():
                for option in field.get("anyOf", [field]):
                    if option.get("title") == EMBEDDING_SCHEMA_NAME:
                        option["minItems"] = option["maxItems"] = dimension
        app.openapi_schema = document
    return app.openapi_schema


def create_app(settings: Settings) -> FastAPI:
    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        app.state.clients = ContextClients(settings)
        app.state.stubs = {}
        app.state.precedents = PrecedentSearches(
            app.state.clients.channel("decisions"), streams=PRECEDENT_STREAMS, attempts=MAX_ATTEMPTS
        )
        try:
            yield
        finally:
            await app.state.precedents.close()
            await app.state.clients.close()

    app = FastAPI(
        title="Outrider",
        version="0.1.0",
        description="Control plane for a fleet of operational AI agents.",
        lifespan=lifespan,
        # The document a console and an attacker alike would read first;
        # production may switch it off (OUTRIDER_API_DOCS=false).
        docs_url="/docs" if settings.api_docs else None,
        openapi_url="/openapi.json" if settings.api_docs else None,
        redoc_url=None,
        # Engines post JSON without a Content-Type often enough; the console
        # authenticates with a Bearer header, never a cookie, so a body a
        # browser form could send unbidden gains nothing.
        strict_content_type=False,
    )
    app.state.settings = settings
    errors.install(app)
    for module in (registry, decisions, decision_humans, outcomes, playground, telemetry, otlp):
        app.include_router(module.router)
    app.openapi = lambda: openapi_document(app)  # type: ignore[method-assign]  # FastAPI's documented way to replace the document
    console.mount(app)
    app.add_middleware(
        BodyCap,
        default_bytes=settings.max_body_kb * 1024,
        by_prefix=[("/internal/human-inputs", HUMAN_INPUT_BODY_BYTES), ("/internal/facts", MAX_EVENT_BYTES)],
        capped_by_route=[otlp.PATH],
    )
    # Outside the cap, so a body refused by it is named too.
    app.add_middleware(RequestIds)
    app.state.responses = ResponseCounts()
    # Outside RequestIds too: every answer it names is counted.
    app.add_middleware(CountedResponses, counts=app.state.responses)

    @app.get("/healthz", tags=["health"], summary="The gateway process is up", response_model=Health)
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get(
        "/readyz",
        tags=["health"],
        summary="Every context answers its health check, and the streams have room and keep up",
        response_model=Readiness,
        responses={
            503: {
                "model": Readiness,
                "description": "a context is not serving, or a stream is near full or lagging; its entry says why",
            }
        },
    )
    async def readyz(request: Request) -> JSONResponse:
        state = await readiness.readiness(
            request.app.state.clients, getattr(request.app.state, "otlp", None), lag_max=settings.ingest_lag_max
        )
        return JSONResponse(state.json(), status_code=200 if state.ready else 503)

    return app
