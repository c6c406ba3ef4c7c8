"""Channels from one context (or the gateway) to another context's gRPC API.

This is the only way a context reaches another one's data: it never imports
the other context's code or reads its schema.

A failed call raises `ContextCallError`, which names the context that failed
and keeps grpc's own error (with its peer address) for the log only. Each
edge then maps it once: the gateway by status to HTTP, a context back into a
domain error (`services.common.grpc_server`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar

import grpc

from outrider.rpc import TlsFiles, channel_with
from services.common import callers
from services.common.settings import Settings

Stub = TypeVar("Stub")


class ContextCallError(Exception):
    """A call to another context failed; `context` says which one."""

    def __init__(self, context: str, error: grpc.aio.AioRpcError) -> None:
        super().__init__(f"{context} answered {error.code().name}")
        self.context = context
        self.error = error

    @property
    def status(self) -> grpc.StatusCode:
        return self.error.code()


class ContextStub(Generic[Stub]):
    """A stub whose unary calls raise ContextCallError instead of grpc's error.

    Streaming calls are handed through untouched: their callers read them
    step by step and handle a broken stream where it breaks.
    """

    def __init__(self, context: str, stub: Stub, *, timeout_s: float | None = None) -> None:
        self._context = context
        self._stub = stub
        self._timeout_s = timeout_s
        self._calls: dict[str, Callable[..., Any]] = {}

    def __getattr__(self, name: str) -> Any:
        call = self._calls.get(name)
        if call is None:
            method = getattr(self._stub, name)
            call = self._unary(method) if isinstance(method, grpc.aio.UnaryUnaryMultiCallable) else method
            self._calls[name] = call
        return call

    def _unary(self, method: grpc.aio.UnaryUnaryMultiCallable) -> Callable[..., Any]:
        context, default_timeout = self._context, self._timeout_s

        async def call(request: Any, *, timeout: float | None = None, **kwargs: Any) -> Any:
            # Every call has a deadline: a context that hangs must cost its
            # caller a bounded wait, then an answer naming it.
            try:
                return await method(request, timeout=timeout or default_timeout, **kwargs)
            except grpc.aio.AioRpcError as error:
                raise ContextCallError(context, error) from error

        return call


def service_credentials(settings: Settings) -> callers.Pairs:
    """The metadata a part of the platform sends: the service key, and the
    caller it acts for (the person, the engine), sealed with that key."""
    key_pair = (callers.SERVICE_KEY_HEADER, settings.service_key)

    def pairs() -> tuple[tuple[str, str], ...]:
        caller = callers.current.get()
        if caller is None or (caller.principal is None and caller.engine is None):
            return (key_pair,)
        return (key_pair, *callers.seal(caller, settings.service_key))

    return pairs


def tls_files(settings: Settings) -> TlsFiles | None:
    """How the parts reach each other: TLS when the contexts serve it."""
    if settings.grpc_tls_cert is None:
        return None
    # With client auth on, each part presents its own serving certificate.
    client = settings.grpc_tls_client_auth
    return TlsFiles(
        ca=settings.grpc_tls_ca,
        cert=settings.grpc_tls_cert if client else None,
        key=settings.grpc_tls_key if client else None,
    )


def service_channel(address: str, settings: Settings, *, health_checked: bool = True) -> grpc.aio.Channel:
    return channel_with(address, service_credentials(settings), tls_files(settings), health_checked=health_checked)


class ContextClients:
    """Lazily opened channels to the other contexts, closed together."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._channels: dict[str, grpc.aio.Channel] = {}
        self._probes: dict[str, grpc.aio.Channel] = {}

    def channel(self, context: str) -> grpc.aio.Channel:
        if context not in self._channels:
            self._channels[context] = service_channel(self._settings.addr(context), self._settings)
        return self._channels[context]

    def probe_channel(self, context: str) -> grpc.aio.Channel:
        """A channel that reaches replicas whatever their health says: for
        asking the health service itself (see outrider.balancing)."""
        if context not in self._probes:
            self._probes[context] = service_channel(self._settings.addr(context), self._settings, health_checked=False)
        return self._probes[context]

    def stub(self, context: str, stub_class: Callable[[grpc.aio.Channel], Stub]) -> Stub:
        return ContextStub(  # type: ignore[return-value]  # it forwards every call, so callers use it as the stub
            context, stub_class(self.channel(context)), timeout_s=self._settings.call_timeout_s
        )

    async def close(self) -> None:
        for ch in [*self._channels.values(), *self._probes.values()]:
            await ch.close(grace=None)
        self._channels.clear()
        self._probes.clear()
