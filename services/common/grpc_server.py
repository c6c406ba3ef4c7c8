"""gRPC server bootstrap shared by every context.

One interceptor does the two things every call needs: it checks the internal
key in constant time and turns domain errors into gRPC status (by the one
table below) with the machine-readable code in trailing metadata.
"""

from __future__ import annotations

import hmac
import json
import logging
from collections.abc import Callable, Iterable
from typing import Any

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from outrider.rpc import ERROR_CODE_KEY, ERROR_DETAILS_KEY, INTERNAL_KEY_HEADER
from services.common.clients import ContextCallError
from services.common.errors import (
    AlreadyExists,
    Conflict,
    DomainError,
    InvalidArgument,
    NotFound,
    PermissionDenied,
    RateLimited,
    Unauthenticated,
    Unavailable,
    UpstreamUnavailable,
)

_log = logging.getLogger(__name__)


# Probes and schema discovery answer without the key: a load balancer or
# grpcurl can tell a live server from a dead one without holding a secret.
_OPEN_PREFIXES = ("/grpc.health.v1.Health/", "/grpc.reflection.")


# Domain error → gRPC status. A subclass takes its nearest listed ancestor's
# status; anything unlisted is INTERNAL.
STATUS_OF_ERROR: dict[type[DomainError], grpc.StatusCode] = {
    InvalidArgument: grpc.StatusCode.INVALID_ARGUMENT,
    NotFound: grpc.StatusCode.NOT_FOUND,
    AlreadyExists: grpc.StatusCode.ALREADY_EXISTS,
    Conflict: grpc.StatusCode.FAILED_PRECONDITION,
    PermissionDenied: grpc.StatusCode.PERMISSION_DENIED,
    Unauthenticated: grpc.StatusCode.UNAUTHENTICATED,
    RateLimited: grpc.StatusCode.RESOURCE_EXHAUSTED,
    Unavailable: grpc.StatusCode.UNAVAILABLE,
}
_ERROR_OF_STATUS: dict[grpc.StatusCode, type[DomainError]] = {status: kind for kind, status in STATUS_OF_ERROR.items()}
# A context that did not answer in time is as unavailable as one that refused
# the connection: the caller can only try again later.
_UNANSWERED = frozenset({grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED})


def status_of(error: DomainError) -> grpc.StatusCode:
    for kind in type(error).__mro__:
        status = STATUS_OF_ERROR.get(kind)
        if status is not None:
            return status
    return grpc.StatusCode.INTERNAL


def upstream_error(failure: ContextCallError) -> DomainError | None:
    """Another context's refusal as this context's domain error; None for its internal failures.

    Its code, message and details pass on unchanged: they were written for
    the caller. Its transport text (peer addresses) does not.
    """
    status = failure.status
    if status in _UNANSWERED:
        return UpstreamUnavailable(failure.context)
    kind = _ERROR_OF_STATUS.get(status)
    if kind is None:
        return None
    trailing = dict(failure.error.trailing_metadata() or ())
    try:
        details = json.loads(trailing.get(ERROR_DETAILS_KEY) or "{}")
    except ValueError:
        details = {}
    return kind(failure.error.details() or "", code=trailing.get(ERROR_CODE_KEY) or None,
                details=details if isinstance(details, dict) else {})


def error_metadata(error: DomainError) -> tuple[tuple[str, str], ...]:
    return ((ERROR_CODE_KEY, error.code), (ERROR_DETAILS_KEY, json.dumps(error.details, default=str)))


async def _raise_domain(error: DomainError, context: grpc.aio.ServicerContext) -> None:
    context.set_trailing_metadata(error_metadata(error))
    await context.abort(status_of(error), error.message)


async def _raise_internal(error: Exception, context: grpc.aio.ServicerContext) -> None:
    # An unexpected failure's text can carry SQL and the data in it: it goes
    # to the log with its traceback, and the caller learns only that it failed.
    _log.error("unhandled error in a call", exc_info=error)
    context.set_trailing_metadata(((ERROR_CODE_KEY, "INTERNAL"),))
    await context.abort(grpc.StatusCode.INTERNAL, "internal error")


async def _raise_failure(error: Exception, context: grpc.aio.ServicerContext) -> None:
    """The one place a call's exception becomes a status; it always aborts."""
    if isinstance(error, ContextCallError):
        upgraded = upstream_error(error)
        if upgraded is not None:
            _log.warning("a call to another context failed", extra={"upstream": error.context,
                                                                   "grpc_code": error.status.name})
            error = upgraded
    if isinstance(error, DomainError):
        await _raise_domain(error, context)
    await _raise_internal(error, context)


def _wrap_unary(behavior: Callable[..., Any]) -> Callable[..., Any]:
    async def call(request: Any, context: grpc.aio.ServicerContext) -> Any:
        try:
            return await behavior(request, context)
        except grpc.aio.AbortError:
            raise
        except Exception as error:  # noqa: BLE001 - the last line of defence
            await _raise_failure(error, context)

    return call


def _wrap_stream(behavior: Callable[..., Any]) -> Callable[..., Any]:
    async def call(request: Any, context: grpc.aio.ServicerContext) -> Any:
        try:
            async for item in behavior(request, context):
                yield item
        except grpc.aio.AbortError:
            raise
        except Exception as error:  # noqa: BLE001 - the last line of defence
            await _raise_failure(error, context)

    return call


def _denied(handler: grpc.RpcMethodHandler) -> grpc.RpcMethodHandler:
    async def abort(request: Any, context: grpc.aio.ServicerContext) -> None:
        context.set_trailing_metadata(((ERROR_CODE_KEY, "UNAUTHENTICATED"),))
        await context.abort(grpc.StatusCode.UNAUTHENTICATED, "missing or wrong x-internal-key")

    if handler.response_streaming:
        async def abort_stream(request: Any, context: grpc.aio.ServicerContext) -> Any:
            await abort(request, context)
            yield  # pragma: no cover - abort raises

        return grpc.unary_stream_rpc_method_handler(
            abort_stream, request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer,
        )
    return grpc.unary_unary_rpc_method_handler(
        abort, request_deserializer=handler.request_deserializer, response_serializer=handler.response_serializer
    )


class GuardInterceptor(grpc.aio.ServerInterceptor):
    def __init__(self, internal_key: str) -> None:
        self._key = internal_key.encode()
        self._wrapped: dict[str, grpc.RpcMethodHandler] = {}

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Any],
        details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler | None:
        method = details.method
        handler = await continuation(details)
        if handler is None or method.startswith(_OPEN_PREFIXES):
            return handler
        presented = b""
        for key, value in details.invocation_metadata or ():
            if key == INTERNAL_KEY_HEADER:
                presented = value.encode() if isinstance(value, str) else value
                break
        if not hmac.compare_digest(presented, self._key):
            return _denied(handler)
        # Handlers are fixed per method, so wrap once and reuse.
        wrapped = self._wrapped.get(method)
        if wrapped is None:
            wrapped = self._wrap(handler)
            self._wrapped[method] = wrapped
        return wrapped

    @staticmethod
    def _wrap(handler: grpc.RpcMethodHandler) -> grpc.RpcMethodHandler:
        if handler.unary_unary:
            return grpc.unary_unary_rpc_method_handler(
                _wrap_unary(handler.unary_unary),
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        if handler.unary_stream:
            return grpc.unary_stream_rpc_method_handler(
                _wrap_stream(handler.unary_stream),
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        return handler


class PortInUse(Exception):
    pass


# Clients ping open streams every 30 s (see outrider.rpc); a server that
# refuses pings that often would close the very watches they keep honest.
KEEPALIVE_OPTIONS = (
    ("grpc.keepalive_time_ms", 30_000),
    ("grpc.keepalive_timeout_ms", 10_000),
    ("grpc.keepalive_permit_without_calls", 1),
    ("grpc.http2.min_recv_ping_interval_without_data_ms", 10_000),
)


def build_server(internal_key: str, *, max_request_bytes: int = 1024 * 1024,
                 max_concurrent_rpcs: int | None = None) -> tuple[grpc.aio.Server, health.aio.HealthServicer]:
    """A server refusing requests over `max_request_bytes` and calls past
    `max_concurrent_rpcs` (RESOURCE_EXHAUSTED), so one flood cannot take
    the memory every other caller needs."""
    server = grpc.aio.server(
        interceptors=[GuardInterceptor(internal_key)],
        options=[("grpc.so_reuseport", 0), ("grpc.max_receive_message_length", max_request_bytes),
                 *KEEPALIVE_OPTIONS],
        maximum_concurrent_rpcs=max_concurrent_rpcs,
    )
    health_servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    return server, health_servicer


def enable_reflection(server: grpc.aio.Server, service_names: Iterable[str]) -> None:
    reflection.enable_server_reflection(
        (*service_names, health_pb2.DESCRIPTOR.services_by_name["Health"].full_name, reflection.SERVICE_NAME), server
    )


def bind(server: grpc.aio.Server, address: str) -> int:
    """Bind or fail naming the address; grpc's own error is a bare 0."""
    try:
        port = server.add_insecure_port(address)
    except RuntimeError as exc:
        raise PortInUse(f"cannot listen on {address}: port already in use") from exc
    if port == 0:
        raise PortInUse(f"cannot listen on {address}: port already in use")
    return port
