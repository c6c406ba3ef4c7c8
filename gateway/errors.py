"""The error envelope and the one gRPC→HTTP table of DESIGN.md §3."""

from __future__ import annotations

import json
import logging
from typing import Any

import grpc
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

_log = logging.getLogger(__name__)

GRPC_TO_HTTP: dict[grpc.StatusCode, int] = {
    grpc.StatusCode.INVALID_ARGUMENT: 422,
    grpc.StatusCode.NOT_FOUND: 404,
    grpc.StatusCode.ALREADY_EXISTS: 409,
    grpc.StatusCode.FAILED_PRECONDITION: 409,
    grpc.StatusCode.ABORTED: 409,
    grpc.StatusCode.PERMISSION_DENIED: 403,
    grpc.StatusCode.UNAUTHENTICATED: 401,
    grpc.StatusCode.RESOURCE_EXHAUSTED: 429,
    grpc.StatusCode.UNAVAILABLE: 503,
    grpc.StatusCode.DEADLINE_EXCEEDED: 504,
    grpc.StatusCode.UNIMPLEMENTED: 501,
}


class ApiError(Exception):
    def __init__(self, status: int, code: str, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.details = status, code, message, details or {}


def envelope(status: int, code: str, message: str, details: dict[str, Any] | None = None,
             headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse(
        {"error": {"code": code, "message": message, "details": details or {}}}, status_code=status, headers=headers
    )


def from_rpc_error(error: grpc.aio.AioRpcError) -> ApiError:
    status = GRPC_TO_HTTP.get(error.code(), 500)
    trailing = dict(error.trailing_metadata() or ())
    code = trailing.get("outrider-error-code") or error.code().name
    try:
        details = json.loads(trailing.get("outrider-error-details") or "{}")
    except ValueError:
        details = {}
    message = error.details() or error.code().name.lower()
    if status == 500:
        # An internal failure's text may hold anything; log it, answer plainly.
        _log.error("upstream failure", extra={"grpc_code": error.code().name, "detail": message})
        code, message = "INTERNAL", "an internal error occurred"
    return ApiError(status, code, message, details)


def install(app: FastAPI) -> None:
    @app.exception_handler(ApiError)
    async def _api(_: Request, exc: ApiError) -> JSONResponse:
        return envelope(exc.status, exc.code, exc.message, exc.details)

    @app.exception_handler(grpc.aio.AioRpcError)
    async def _rpc(_: Request, exc: grpc.aio.AioRpcError) -> JSONResponse:
        err = from_rpc_error(exc)
        return envelope(err.status, err.code, err.message, err.details)

    @app.exception_handler(RequestValidationError)
    async def _invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        fields = {".".join(str(p) for p in e["loc"] if p != "body"): e["msg"] for e in exc.errors()}
        first = next(iter(fields), "request")
        return envelope(422, "INVALID_ARGUMENT", f"invalid {first}: {fields.get(first, '')}", {"fields": fields})

    @app.exception_handler(StarletteHTTPException)
    async def _http(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = {404: "NOT_FOUND", 405: "METHOD_NOT_ALLOWED"}.get(exc.status_code, "HTTP_ERROR")
        return envelope(exc.status_code, code, str(exc.detail))
