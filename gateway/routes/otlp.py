"""POST /v1/traces: OTLP/HTTP traces in, for engines instrumented with OpenTelemetry.

An engine points its exporter here (`OTEL_EXPORTER_OTLP_ENDPOINT` at the
gateway, the engine key in `OTEL_EXPORTER_OTLP_HEADERS`, as `x-internal-key`
or `authorization=Bearer …`). The route decodes the export request
(protobuf or JSON, gzip or not), checks every span, and publishes the spans
that map to task runs or model calls to JetStream (`telemetry.otlp`),
reduced to the attributes the mapping reads: prompt and completion contents
never leave the gateway. It answers 200 only once JetStream has stored every
message, so an answer means the spans will be written; the telemetry
context writes them as it writes task runs.

Answers are OTLP's own: an ExportTraceServiceResponse (partial success with
the refused span count and reasons), and a google.rpc.Status for every
refusal (400 undecodable, 401 bad key, 413 over the body cap, 415 unknown
encoding, 503 JetStream unreachable), in the request's encoding.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import Response
from fastapi.routing import APIRoute

from gateway.auth import exporter
from gateway.codec import otlp as codec
from gateway.codec.otlp import JSON, PROTOBUF
from gateway.contracts.otlp import OtlpExportResponse, OtlpStatus, OtlpTracesRequest
from gateway.errors import ApiError
from gateway.intake import Intake, lifespan
from gateway.limits import capped_body
from services.common import callers

_log = logging.getLogger(__name__)

PATH = "/v1/traces"
RETRY_AFTER_S = 5


def _media_type(request: Request) -> str:
    return request.headers.get("content-type", "").split(";", 1)[0].strip().lower()


class OtlpRoute(APIRoute):
    """Answers every refusal of this route, its key check included, as OTLP's
    Status in the request's encoding (JSON when it is unknown): an exporter
    reads only that, never the error envelope."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def handle(request: Request) -> Response:
            try:
                return await handler(request)
            except ApiError as error:
                intake: Intake = request.app.state.otlp
                intake.count_refusal(error.status)
                _log.warning("OTLP export refused", extra={"status": error.status, "reason": error.message[:300]})
                json_encoded = _media_type(request) != PROTOBUF
                return Response(
                    codec.status_body(error.status, error.message, json_encoded),
                    status_code=error.status,
                    media_type=JSON if json_encoded else PROTOBUF,
                    headers={"Retry-After": str(RETRY_AFTER_S)} if error.status == 503 else None,
                )

        return handle


router = APIRouter(tags=["otlp"], route_class=OtlpRoute, lifespan=lifespan)

_BODY_DOC = {
    "required": True,
    "description": "An ExportTraceServiceRequest, protobuf or JSON, optionally gzip-compressed "
    "(`Content-Encoding: gzip`).",
    "content": {
        PROTOBUF: {
            "schema": {
                "type": "string",
                "format": "binary",
                "description": "ExportTraceServiceRequest, protobuf binary encoding",
            }
        },
        JSON: {"schema": OtlpTracesRequest.model_json_schema()},
    },
}
_STATUS_DOC = {
    "content": {
        PROTOBUF: {"schema": {"type": "string", "format": "binary", "description": "google.rpc.Status, protobuf"}}
    }
}


@router.post(
    PATH,
    summary="OTLP/HTTP traces in: spans become task runs and model calls; needs the engine key",
    description="X-Internal-Key or `Authorization: Bearer <key>`. Answers in the request's encoding. A span "
    "that cannot be used is refused alone and counted in `partialSuccess`; spans that are neither a "
    "task run nor a model call are accepted and not kept.",
    response_class=Response,
    openapi_extra={"requestBody": _BODY_DOC},
    responses={
        200: {
            "model": OtlpExportResponse,
            "description": "stored for ingest; refused spans are counted",
            "content": {
                PROTOBUF: {
                    "schema": {
                        "type": "string",
                        "format": "binary",
                        "description": "ExportTraceServiceResponse, protobuf",
                    }
                }
            },
        },
        400: {"model": OtlpStatus, "description": "the body does not decode as the encoding it names", **_STATUS_DOC},
        401: {"model": OtlpStatus, "description": "no or wrong engine key", **_STATUS_DOC},
        413: {
            "model": OtlpStatus,
            "description": "over OUTRIDER_OTLP_MAX_BODY_BYTES, as sent or inflated",
            **_STATUS_DOC,
        },
        415: {
            "model": OtlpStatus,
            "description": "a Content-Type or Content-Encoding OTLP/HTTP does not define",
            **_STATUS_DOC,
        },
        503: {
            "model": OtlpStatus,
            "description": "JetStream is unreachable; retry after Retry-After seconds",
            **_STATUS_DOC,
        },
    },
)
async def export_traces(request: Request, _: None = Depends(exporter)) -> Response:
    intake: Intake = request.app.state.otlp
    media_type = _media_type(request)
    if media_type not in (PROTOBUF, JSON):
        raise ApiError(
            415, "UNSUPPORTED_MEDIA_TYPE", f"Content-Type must be {PROTOBUF} or {JSON}, got {media_type or 'none'!r}"
        )
    encoding = request.headers.get("content-encoding", "identity").strip().lower()
    if encoding not in ("gzip", "identity"):
        raise ApiError(415, "UNSUPPORTED_MEDIA_TYPE", f"Content-Encoding must be gzip or identity, got {encoding!r}")
    cap = request.app.state.settings.otlp_max_body_bytes
    body = await capped_body(request, cap)
    json_encoded = media_type == JSON
    # Decoding a large export is CPU work; off the event loop, other requests
    # are answered meanwhile.
    if encoding == "gzip":
        body = await asyncio.to_thread(codec.gunzip, body, cap)
    # The agents the exporter's engine key may act for: a span naming another
    # is refused on its own, as a malformed one is.
    scope = callers.agent_scope(callers.engine_name(), request.app.state.settings.engine_agents)
    admission = await asyncio.to_thread(codec.admit, body, json_encoded, scope)
    if admission.messages:
        try:
            await intake.publish(admission.messages)
        except ApiError:
            raise
        except Exception as error:  # noqa: BLE001 - any failure to store is "retry later"
            _log.warning("OTLP spans not published", extra={"error": f"{type(error).__name__}: {error}"[:300]})
            raise ApiError(503, "OTLP_UNAVAILABLE", "the telemetry stream is unavailable; retry shortly") from None
    intake.requests["accepted"] += 1
    intake.spans.update(accepted=admission.accepted, rejected=admission.rejected, ignored=admission.ignored)
    intake.foreign_agent_spans += admission.foreign_agent
    return Response(codec.export_body(admission, json_encoded), media_type=JSON if json_encoded else PROTOBUF)
