"""Channels from one context (or the gateway) to another context's gRPC API.

This is the only way a context reaches another one's data: it never imports
the other context's code or reads its schema.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import grpc

from outrider.client.transport import keyed_channel as channel
from services.common.settings import Settings

Stub = TypeVar("Stub")


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
