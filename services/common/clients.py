"""Channels from one context (or the gateway) to another context's gRPC API.

This is the only way a context reaches another one's data: it never imports
the other context's code or reads its schema.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import grpc

from services.common.grpc_server import INTERNAL_KEY_HEADER
from services.common.settings import Settings

Stub = TypeVar("Stub")


class _KeyInterceptor(grpc.aio.UnaryUnaryClientInterceptor, grpc.aio.UnaryStreamClientInterceptor):
    def __init__(self, key: str) -> None:
        self._pair = (INTERNAL_KEY_HEADER, key)

    def _details(self, details: grpc.aio.ClientCallDetails) -> grpc.aio.ClientCallDetails:
        metadata = grpc.aio.Metadata(*(details.metadata or ()), self._pair)
        return grpc.aio.ClientCallDetails(
            details.method, details.timeout, metadata, details.credentials, details.wait_for_ready
        )

    async def intercept_unary_unary(self, continuation: Callable[..., Any], details: Any, request: Any) -> Any:
        return await continuation(self._details(details), request)

    async def intercept_unary_stream(self, continuation: Callable[..., Any], details: Any, request: Any) -> Any:
        return await continuation(self._details(details), request)


def channel(address: str, internal_key: str) -> grpc.aio.Channel:
    return grpc.aio.insecure_channel(
        address,
        interceptors=[_KeyInterceptor(internal_key)],
        options=[("grpc.max_receive_message_length", 32 * 1024 * 1024), ("grpc.enable_retries", 1)],
    )


class ContextClients:
    """Lazily opened channels to the other contexts, closed together."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._channels: dict[str, grpc.aio.Channel] = {}

    def channel(self, context: str) -> grpc.aio.Channel:
        if context not in self._channels:
            self._channels[context] = channel(self._settings.addr(context), self._settings.internal_key)
        return self._channels[context]

    def stub(self, context: str, stub_class: Callable[[grpc.aio.Channel], Stub]) -> Stub:
        return stub_class(self.channel(context))

    async def close(self) -> None:
        for ch in self._channels.values():
            await ch.close()
        self._channels.clear()
