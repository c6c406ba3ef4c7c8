"""gRPC server bootstrap shared by every context.

One interceptor does the two things every call needs: it checks the internal
key in constant time and turns domain errors into gRPC status with the
machine-readable code in trailing metadata.
"""

from __future__ import annotations

import hmac
import logging
from collections.abc import Callable, Iterable
from typing import Any

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from outrider.client.transport import INTERNAL_KEY_HEADER
from services.common.errors import DomainError, error_metadata

_log = logging.getLogger(__name__)


# Probes and schema discovery answer without the key: a load balancer or
# grpcurl can tell a live server from a dead one without holding a secret.
_OPEN_PREFIXES = ("/grpc.health.v1.Health/", "/grpc.reflection.")


async def _raise_domain(error: DomainError, context: grpc.aio.ServicerContext) -> None:
    context.set_trailing_metadata(error_metadata(error))
    await context.abort(error.status, error.message)


async def _raise_internal(error: Exception, context: grpc.aio.ServicerContext) -> None:
    # An unexpected failure's text can carry SQL and the data in it: it goes
    # to the log with its traceback, and the caller learns only that it failed.
    _log.error("unhandled error in a call", exc_info=error)
    context.set_trailing_metadata((("outrider-error-code", "INTERNAL"),))
    await context.abort(grpc.StatusCode.INTERNAL, "internal error")


def _wrap_unary(behavior: Callable[..., Any]) -> Callable[..., Any]:
    async def call(request: Any, context: grpc.aio.ServicerContext) -> Any:
        try:
            return await behavior(request, context)
        except DomainError as error:
            await _raise_domain(error, context)
        except grpc.aio.AbortError:
            raise
        except Exception as error:  # noqa: BLE001 - the last line of defence
            await _raise_internal(error, context)

    return call


def _wrap_stream(behavior: Callable[..., Any]) -> Callable[..., Any]:
    async def call(request: Any, context: grpc.aio.ServicerContext) -> Any:
        try:
            async for item in behavior(request, context):
                yield item
        except DomainError as error:
            await _raise_domain(error, context)
        except grpc.aio.AbortError:
            raise
        except Exception as error:  # noqa: BLE001 - the last line of defence
            await _raise_internal(error, context)

    return call


def _denied(handler: grpc.RpcMethodHandler) -> grpc.RpcMethodHandler:
    async def abort(request: Any, context: grpc.aio.ServicerContext) -> None:
        context.set_trailing_metadata((("outrider-error-code", "UNAUTHENTICATED"),))
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


def build_server(internal_key: str) -> tuple[grpc.aio.Server, health.aio.HealthServicer]:
    server = grpc.aio.server(
        interceptors=[GuardInterceptor(internal_key)],
        options=[("grpc.so_reuseport", 0), ("grpc.max_receive_message_length", 32 * 1024 * 1024)],
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
