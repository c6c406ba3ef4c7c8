"""The error envelope and the one gRPC→HTTP table of DESIGN.md §3.

Every answer that is not a success is
`{"error": {"code": "UPPER_SNAKE", "message": "…", "details": {…}}}`; a 422
always carries `details.fields` ({field path: reason}).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from typing import Any

import grpc
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.routing import iter_route_contexts
from starlette.exceptions import HTTPException as StarletteHTTPException

from gateway import request_ids
from outrider.rpc import refusal_metadata
from services.common.clients import ContextCallError
from services.common.redaction.preview import preview
from services.common.redaction.redactor import Redactor

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
    # A context that does not answer in time is, to the caller, one that is
    # not there: both say "try again shortly", naming the context.
    grpc.StatusCode.UNAVAILABLE: 503,
    grpc.StatusCode.DEADLINE_EXCEEDED: 503,
    grpc.StatusCode.UNIMPLEMENTED: 501,
}
_UNAVAILABLE = 503


class ApiError(Exception):
    def __init__(self, status: int, code: str, message: str, details: dict[str, Any] | None = None) -> None:
        # A refusal may quote what was sent; it is shown redacted wherever
        # it goes (the answer, a log line, an OTLP status).
        message, shown = _redacted(message, details or {})
        super().__init__(message)
        self.status, self.code, self.message, self.details = status, code, message, shown


def invalid(field: str, reason: str, code: str = "INVALID_ARGUMENT") -> ApiError:
    """A 422 naming one field, in the one details shape."""
    return ApiError(422, code, f"invalid {field}: {reason}", {"fields": {field: reason}})


def envelope(
    status: int,
    code: str,
    message: str,
    details: dict[str, Any] | None = None,
    headers: dict[str, str] | None = None,
    request_id: str | None = None,
) -> JSONResponse:
    message, shown = _redacted(message, details or {})
    if status >= 500:
        # A failure the caller cannot fix names the request, for the logs.
        shown = {**shown, "request_id": request_id or request_ids.current.get()}
    return JSONResponse(
        {"error": {"code": code, "message": message, "details": shown}}, status_code=status, headers=headers
    )


def _redacted(message: str, details: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """An error's message and details with every value from outside shown
    redacted; one value is one placeholder in both."""
    redactor = Redactor()
    return preview(message, None, redactor=redactor), _shown(details, redactor)


def _shown(value: Any, redactor: Redactor) -> Any:
    if isinstance(value, str):
        return preview(value, None, redactor=redactor)
    if isinstance(value, Mapping):
        return {preview(str(key), None, redactor=redactor): _shown(item, redactor) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_shown(item, redactor) for item in value]
    return value


def from_rpc_error(error: grpc.aio.AioRpcError, context: str) -> ApiError:
    """A context's refusal as HTTP; its transport text (addresses) stays in the log."""
    code, details = refusal_metadata(error)
    return context_refusal(context, error.code(), error.details() or "", code, details)


def context_refusal(
    context: str,
    status_code: grpc.StatusCode,
    message: str,
    code: str | None = None,
    details: Mapping[str, Any] | str | bytes | None = None,
) -> ApiError:
    """A failed call to a context as HTTP: its gRPC status, and the error
    code and details the context itself sent, which are absent when the
    context never answered (the message is then the transport's)."""
    status = GRPC_TO_HTTP.get(status_code, 500)
    if status == _UNAVAILABLE and not code:
        # No answer from the context itself: the transport's text names
        # addresses, so it goes to the log and the caller gets the context.
        _log.warning(
            "context unavailable", extra={"context": context, "grpc_code": status_code.name, "detail": message}
        )
        return ApiError(
            503,
            "UPSTREAM_UNAVAILABLE",
            f"the {context} service is unavailable; try again shortly",
            {"context": context},
        )
    if status == 500:
        # An internal failure's text may hold anything; log it, answer plainly.
        _log.error("context failure", extra={"context": context, "grpc_code": status_code.name, "detail": message})
        return ApiError(500, "INTERNAL", "an internal error occurred")
    shown = dict(details) if isinstance(details, Mapping) else _details_object(details)
    if status == 422:
        shown.setdefault("fields", {})
    if status == _UNAVAILABLE:
        # The context answered: something behind it is down; say which context.
        shown.setdefault("context", context)
    return ApiError(status, code or status_code.name, message or status_code.name.lower(), shown)


def _details_object(text: str | bytes | None) -> dict[str, Any]:
    try:
        details = json.loads(text or "{}")
    except ValueError:
        return {}
    return details if isinstance(details, dict) else {}


def field_path(location: Sequence[Any]) -> str:
    """A validation error's location as a field path: `turns[2].role`, `limit`, `body`."""
    parts = list(location)
    if parts and parts[0] in ("body", "query", "path", "header"):
        parts = parts[1:]
    path = ""
    for part in parts:
        if part == "[key]":
            continue
        if isinstance(part, int):
            path += f"[{part}]"
        else:
            path += f".{part}" if path else str(part)
    return path if path and not path.startswith("[") else f"body{path}"


def validation_fields(errors: Sequence[dict[str, Any]]) -> dict[str, str]:
    fields: dict[str, str] = {}
    for error in errors:
        # Undecodable JSON is located by character offset, not by field.
        path = "body" if error.get("type") == "json_invalid" else field_path(error.get("loc", ()))
        # A union reports each branch; the first reason per field is enough.
        fields.setdefault(path, str(error.get("msg", "is not valid")))
    return fields


def install(app: FastAPI) -> None:
    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        # Starlette answers these outside every middleware, so the id goes
        # on the answer here as well as in its body and the log line.
        request_id = getattr(request.state, "request_id", "")
        _log.error("unexpected error answering a request", exc_info=exc, extra={"request_id": request_id})
        return envelope(
            500,
            "INTERNAL",
            "the gateway failed to answer; quote the request id",
            headers={request_ids.HEADER: request_id},
            request_id=request_id,
        )

    @app.exception_handler(ApiError)
    async def _api(_: Request, exc: ApiError) -> JSONResponse:
        return envelope(exc.status, exc.code, exc.message, exc.details)

    @app.exception_handler(ContextCallError)
    async def _context(_: Request, exc: ContextCallError) -> JSONResponse:
        err = from_rpc_error(exc.error, exc.context)
        return envelope(err.status, err.code, err.message, err.details)

    @app.exception_handler(RequestValidationError)
    async def _invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        errors = exc.errors()
        fields = validation_fields(errors)
        first = next(iter(fields), "body")
        code, details = "INVALID_ARGUMENT", {"fields": fields}
        # A contract rule with a documented code of its own (PROMPT_TOO_LONG)
        # names its error type in that code and carries its particulars.
        coded = next((error for error in errors if str(error.get("type", "")).isupper()), None)
        if coded is not None:
            code = coded["type"]
            details.update({key: value for key, value in (coded.get("ctx") or {}).items() if key != "fields"})
        return envelope(422, code, f"invalid {first}: {fields.get(first, '')}", details)

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        if exc.status_code == 400 and exc.__cause__ is not None:
            # FastAPI could not read the body as JSON at all (not UTF-8,
            # nested past the parser's depth, a number past its digits).
            reason = f"is not readable JSON ({type(exc.__cause__).__name__})"
            return envelope(422, "INVALID_ARGUMENT", f"invalid body: {reason}", {"fields": {"body": reason}})
        code = {404: "NOT_FOUND", 405: "METHOD_NOT_ALLOWED"}.get(exc.status_code, "HTTP_ERROR")
        headers = dict(getattr(exc, "headers", None) or {})
        if exc.status_code == 405:
            # Every method of the path, not only the first route's: one path
            # may be served by a GET route and a PATCH route.
            # Included routers sit nested in app.routes; iter_route_contexts
            # is FastAPI's walk over the routes as they are served.
            headers["Allow"] = ", ".join(
                sorted(
                    {
                        method
                        for route in iter_route_contexts(request.app.routes)
                        if route.methods and route.path_regex.match(request.url.path)
                        for method in route.methods
                    }
                )
            )
        return envelope(exc.status_code, code, str(exc.detail), headers=headers)
