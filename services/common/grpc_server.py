"""gRPC server bootstrap shared by every context.

One interceptor does the things every call needs: it checks the internal
key in constant time, counts an engine's streams against their caps
(services.common.stream_caps), and turns domain errors into gRPC status (by
the one table below) with the machine-readable code in trailing metadata.
"""

from __future__ import annotations

import inspect
import json
import logging
from collections.abc import Callable, Iterable, Mapping
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any, NoReturn

import grpc
from grpc_health.v1 import _async as health_aio  # health.aio re-exports this module under a name mypy cannot follow
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from outrider.rpc import ERROR_CODE_KEY, ERROR_DETAILS_KEY, refusal_metadata
from services.common import callers
from services.common.callers import Access, Caller, Refusal, authorize, identify
from services.common.clients import ContextCallError
from services.common.db import unreachable
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
from services.common.stream_caps import StreamCaps, StreamSlot

_log = logging.getLogger(__name__)


# Probes and schema discovery answer without the key: a load balancer or
# grpcurl can tell a live server from a dead one without holding a secret.
# (Reflection is only served outside production; see ContextServer.)
_OPEN_PREFIXES = ("/grpc.health.v1.Health/", "/grpc.reflection.")
HEALTH_WATCH = "/grpc.health.v1.Health/Watch"
HEALTH_WATCH_CAP = 64


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
    code, details = refusal_metadata(failure.error)
    return kind(failure.error.details() or "", code=code, details=details)


def error_metadata(error: DomainError) -> tuple[tuple[str, str], ...]:
    return ((ERROR_CODE_KEY, error.code), (ERROR_DETAILS_KEY, json.dumps(error.details, default=str)))


async def _raise_domain(error: DomainError, context: grpc.aio.ServicerContext) -> None:
    context.set_trailing_metadata(error_metadata(error))
    await context.abort(status_of(error), error.message)


def answerable(error: Exception) -> DomainError | None:
    """The domain error a caller may read for a failed call, or None for an
    unexpected failure, which is logged here with its traceback.

    An unexpected failure's text can carry SQL and the data in it: it goes
    to the log, and the caller learns only that it failed.
    """
    if isinstance(error, ContextCallError):
        upgraded = upstream_error(error)
        if upgraded is not None:
            _log.warning(
                "a call to another context failed", extra={"upstream": error.context, "grpc_code": error.status.name}
            )
            error = upgraded
    if isinstance(error, DomainError):
        return error
    if unreachable(error):
        # Postgres went away under the call: the caller should try again
        # shortly, as every context promises, not report a bug.
        _log.warning("the database did not answer a call", extra={"error": type(error).__name__})
        return Unavailable("the database is not answering; try again shortly", code="DATABASE_UNAVAILABLE")
    _log.error("unhandled error in a call", exc_info=error)
    return None


async def _raise_failure(error: Exception, context: grpc.aio.ServicerContext) -> None:
    """The one place a call's exception becomes a status; it always aborts."""
    known = answerable(error)
    if known is not None:
        await _raise_domain(known, context)
    context.set_trailing_metadata(((ERROR_CODE_KEY, "INTERNAL"),))
    await context.abort(grpc.StatusCode.INTERNAL, "internal error")


async def not_served(context: grpc.aio.ServicerContext, method: str) -> NoReturn:
    """UNIMPLEMENTED for a method its contract declares and this context does
    not serve yet: a clean status a caller can test for, where the generated
    servicer's NotImplementedError would reach the caller as an internal error."""
    context.set_trailing_metadata(((ERROR_CODE_KEY, grpc.StatusCode.UNIMPLEMENTED.name),))
    await context.abort(grpc.StatusCode.UNIMPLEMENTED, f"{method} is not served by this release")


async def _refuse(refusal: Refusal, context: grpc.aio.ServicerContext) -> NoReturn:
    status = (
        grpc.StatusCode.UNAUTHENTICATED if refusal.status == "unauthenticated" else grpc.StatusCode.PERMISSION_DENIED
    )
    context.set_trailing_metadata(((ERROR_CODE_KEY, status.name),))
    await context.abort(status, refusal.message)


class _Gate:
    """Who may call one method, checked on every call before its handler
    runs; for a stream, also whether its engine may open one more."""

    def __init__(self, access: Access | None, keys: Keys, streams: StreamCaps | None = None) -> None:
        self.access = access
        self.keys = keys
        self.streams = streams

    async def admit(self, context: grpc.aio.ServicerContext) -> Caller:
        try:
            if self.access is None:
                # Served but not in the context's access table: refused
                # until someone decides who may call it.
                raise Refusal("permission_denied", "this method is not open to any caller")
            return authorize(
                self.access,
                identify(
                    context.invocation_metadata() or (), engine_keys=self.keys.engine, service_keys=self.keys.service
                ),
            )
        except Refusal as refusal:
            await _refuse(refusal, context)

    def unary(self, behavior: Callable[..., Any]) -> Callable[..., Any]:
        async def call(request: Any, context: grpc.aio.ServicerContext) -> Any:
            caller = await self.admit(context)
            token = callers.current.set(caller)
            try:
                return await behavior(request, context)
            except grpc.aio.AbortError:
                raise
            except Exception as error:  # noqa: BLE001 - the last line of defence
                await _raise_failure(error, context)
            finally:
                callers.current.reset(token)

        return call

    def stream(self, behavior: Callable[..., Any]) -> Callable[..., Any]:
        async def call(request: Any, context: grpc.aio.ServicerContext) -> Any:
            caller = await self.admit(context)
            token = callers.current.set(caller)
            try:
                with self._slot(caller, context):
                    async for item in behavior(request, context):
                        yield item
            except grpc.aio.AbortError:
                raise
            except Exception as error:  # noqa: BLE001 - the last line of defence
                await _raise_failure(error, context)
            finally:
                callers.current.reset(token)

        return call

    def _slot(self, caller: Caller, context: grpc.aio.ServicerContext) -> StreamSlot | nullcontext[None]:
        """The stream's slot, released when the call ends however it ends.

        Only engine keys are counted: the platform's own streams (the
        gateway's one watch, its few precedent streams, the console's runs,
        capped where the gateway opens them) are what the room left below
        the engines' total is for. The call's end is the server's to tell:
        a client that vanishes leaves the handler parked at a `yield`, where
        no `finally` of its runs until the generator is collected.
        """
        if self.streams is None or caller.kind != "engine":
            return nullcontext()
        slot = self.streams.admit(f"engine:{caller.engine}")
        _release_when_done(slot, context)
        return slot


def _release_when_done(slot: StreamSlot, context: grpc.aio.ServicerContext) -> None:
    context.add_done_callback(lambda _: slot.release())  # type: ignore[arg-type]  # grpc-stubs declares the callback a class, which no function matches; grpc takes any callable


@dataclass(frozen=True, slots=True)
class Keys:
    """The credentials a server accepts: engine keys by engine, the service keys."""

    engine: Mapping[str, tuple[str, ...]]
    service: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class EngineStreamCaps:
    """How many streams of one kind (one streaming method) engines may hold
    open on one server: each engine key, and all of them together."""

    per_engine: int
    all_engines: int


class _WatchLimit:
    """Caps the health Watch streams open at once: they are open without a
    key, and each holds a slot of the server until its client leaves. With
    no key there is no caller to tell apart, so the cap is one, for all."""

    def __init__(self, cap: int) -> None:
        self.caps = StreamCaps("health Watch", per_caller=cap, total=cap)

    def wrap(self, behavior: Callable[..., Any]) -> Callable[..., Any]:
        async def call(request: Any, context: grpc.aio.ServicerContext) -> None:
            try:
                slot = self.caps.admit("anyone")
            except RateLimited as refused:
                context.set_trailing_metadata(error_metadata(refused))
                await context.abort(
                    grpc.StatusCode.RESOURCE_EXHAUSTED,
                    f"at most {self.caps.total} health watches at once; poll Check instead",
                )
            _release_when_done(slot, context)
            with slot:
                # grpc_health's Watch writes with context.write and returns
                # nothing; iterating it as a generator would fail every
                # watch, and with it every client that balances on health.
                answered = behavior(request, context)
                if inspect.isasyncgen(answered):
                    async for item in answered:
                        await context.write(item)
                else:
                    await answered

        return call


class GuardInterceptor(grpc.aio.ServerInterceptor):
    """Admits each call by its credential and the method's access (services.common.callers)."""

    def __init__(
        self,
        access: Mapping[str, Access],
        keys: Keys,
        *,
        engine_streams: EngineStreamCaps,
        health_watch_cap: int = HEALTH_WATCH_CAP,
    ) -> None:
        self._access = access
        self._keys = keys
        self._watches = _WatchLimit(health_watch_cap)
        self._engine_streams = engine_streams
        self._wrapped: dict[str, grpc.RpcMethodHandler] = {}

    async def intercept_service(  # type: ignore[override]  # None (no such method) is grpc's UNIMPLEMENTED; the stubs omit it
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Any],
        details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler | None:
        method = details.method
        handler = await continuation(details)
        if handler is None:
            return handler
        # Handlers are fixed per method, so wrap once and reuse.
        wrapped = self._wrapped.get(method)
        if wrapped is None:
            wrapped = self._wrap(method, handler)
            self._wrapped[method] = wrapped
        return wrapped

    def _wrap(self, method: str, handler: grpc.RpcMethodHandler) -> grpc.RpcMethodHandler:
        if method == HEALTH_WATCH and handler.unary_stream is not None:
            return grpc.unary_stream_rpc_method_handler(
                self._watches.wrap(handler.unary_stream),
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        if method.startswith(_OPEN_PREFIXES):
            return handler
        streams = None
        if handler.unary_stream is not None or handler.stream_stream is not None:
            caps = self._engine_streams
            streams = StreamCaps(method.rsplit("/", 1)[-1], per_caller=caps.per_engine, total=caps.all_engines)
        gate = _Gate(self._access.get(method), self._keys, streams)
        kinds = {
            "unary_unary": (grpc.unary_unary_rpc_method_handler, gate.unary),
            "unary_stream": (grpc.unary_stream_rpc_method_handler, gate.stream),
            "stream_unary": (grpc.stream_unary_rpc_method_handler, gate.unary),
            "stream_stream": (grpc.stream_stream_rpc_method_handler, gate.stream),
        }
        for kind, (make, wrap) in kinds.items():
            behavior = getattr(handler, kind)
            if behavior is not None:
                return make(
                    wrap(behavior),
                    request_deserializer=handler.request_deserializer,
                    response_serializer=handler.response_serializer,
                )
        return handler


class PortInUse(Exception):
    pass


# Clients ping open streams every 30 s (see outrider.rpc); a server that
# refuses pings that often would close the very watches they keep honest.
# The last option is gRPC core's GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_\
# WITHOUT_DATA_MS, whose string lacks "recv": a name gRPC does not know is
# ignored without a word, leaving its 5-minute default.
KEEPALIVE_OPTIONS = (
    ("grpc.keepalive_time_ms", 30_000),
    ("grpc.keepalive_timeout_ms", 10_000),
    ("grpc.keepalive_permit_without_calls", 1),
    ("grpc.http2.min_ping_interval_without_data_ms", 10_000),
)


def build_server(
    access: Mapping[str, Access],
    keys: Keys,
    *,
    max_request_bytes: int = 1024 * 1024,
    engine_streams: EngineStreamCaps,
    max_concurrent_rpcs: int | None = None,
) -> tuple[grpc.aio.Server, health_aio.HealthServicer]:
    """A server refusing requests over `max_request_bytes`, calls past
    `max_concurrent_rpcs` and an engine's streams past `engine_streams`
    (RESOURCE_EXHAUSTED), so one flood cannot take the memory and the slots
    every other caller needs."""
    server = grpc.aio.server(
        interceptors=[GuardInterceptor(access, keys, engine_streams=engine_streams)],
        options=[("grpc.so_reuseport", 0), ("grpc.max_receive_message_length", max_request_bytes), *KEEPALIVE_OPTIONS],
        maximum_concurrent_rpcs=max_concurrent_rpcs,
    )
    health_servicer = health_aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    return server, health_servicer


def enable_reflection(server: grpc.aio.Server, service_names: Iterable[str]) -> None:
    reflection.enable_server_reflection(
        (*service_names, health_pb2.DESCRIPTOR.services_by_name["Health"].full_name, reflection.SERVICE_NAME), server
    )


def bind(server: grpc.aio.Server, address: str, credentials: grpc.ServerCredentials | None = None) -> int:
    """Bind (with TLS when given credentials) or fail naming the address; grpc's own error is a bare 0."""
    try:
        port = (
            server.add_secure_port(address, credentials)
            if credentials is not None
            else server.add_insecure_port(address)
        )
    except RuntimeError as exc:
        raise PortInUse(f"cannot listen on {address}: port already in use") from exc
    if port == 0:
        raise PortInUse(f"cannot listen on {address}: port already in use")
    return port
