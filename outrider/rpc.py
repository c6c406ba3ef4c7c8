"""What both ends of an Outrider gRPC call agree on: the key header, the
error metadata keys, and a channel that presents a credential on every call,
over TLS when asked, and how a stream sends what is ready together.

The engine client and the services both import this module and nothing of
each other's, so an engine never pulls server code and a service never pulls
the engine SDK.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import grpc

from outrider import balancing

INTERNAL_KEY_HEADER = "x-internal-key"
Item = TypeVar("Item")

# Trailing metadata of a refused call: the machine-readable error code
# (UPPER_SNAKE) and its details as a JSON object.
ERROR_CODE_KEY = "outrider-error-code"
ERROR_DETAILS_KEY = "outrider-error-details"


Pairs = Callable[[], Sequence[tuple[str, str]]]


@dataclass(frozen=True, slots=True)
class TlsFiles:
    """PEM files for a TLS channel: the CA to trust the server by (None: the
    system's), and a client certificate and key when the server asks for one."""

    ca: Path | None = None
    cert: Path | None = None
    key: Path | None = None

    def credentials(self) -> grpc.ChannelCredentials:
        def read(path: Path | None) -> bytes | None:
            return path.read_bytes() if path is not None else None

        return grpc.ssl_channel_credentials(
            root_certificates=read(self.ca), private_key=read(self.key), certificate_chain=read(self.cert)
        )


class _MetadataInterceptor:
    def __init__(self, pairs: Pairs) -> None:
        self._pairs = pairs

    def _details(self, details: grpc.aio.ClientCallDetails) -> grpc.aio.ClientCallDetails:
        metadata = grpc.aio.Metadata(*(details.metadata or ()), *self._pairs())
        return grpc.aio.ClientCallDetails(
            details.method, details.timeout, metadata, details.credentials, details.wait_for_ready
        )


# One class per call kind: grpc.aio files an interceptor under the first
# kind it is an instance of, so a single class serving every kind would never
# see a streaming call, and those would go out without their credential.
class _Unary(_MetadataInterceptor, grpc.aio.UnaryUnaryClientInterceptor):
    async def intercept_unary_unary(self, continuation: Callable[..., Any], details: Any, request: Any) -> Any:
        return await continuation(self._details(details), request)


class _UnaryStream(_MetadataInterceptor, grpc.aio.UnaryStreamClientInterceptor):
    async def intercept_unary_stream(self, continuation: Callable[..., Any], details: Any, request: Any) -> Any:
        return await continuation(self._details(details), request)


class _StreamUnary(_MetadataInterceptor, grpc.aio.StreamUnaryClientInterceptor):
    async def intercept_stream_unary(self, continuation: Callable[..., Any], details: Any, requests: Any) -> Any:
        return await continuation(self._details(details), requests)


class _StreamStream(_MetadataInterceptor, grpc.aio.StreamStreamClientInterceptor):
    async def intercept_stream_stream(self, continuation: Callable[..., Any], details: Any, requests: Any) -> Any:
        return await continuation(self._details(details), requests)


# While a call is open (a registry watch can stay open for days), ping the
# server every 30 s: a peer that vanished without closing the connection is
# noticed within 40 s and the call fails, instead of a watch waiting forever
# on a stream that will never deliver again.
CHANNEL_OPTIONS = (
    ("grpc.max_receive_message_length", 32 * 1024 * 1024),
    ("grpc.keepalive_time_ms", 30_000),
    ("grpc.keepalive_timeout_ms", 10_000),
    ("grpc.keepalive_permit_without_calls", 0),
)


def channel_with(address: str, pairs: Pairs, tls: TlsFiles | None = None, *,
                 health_checked: bool = True) -> grpc.aio.Channel:
    """A channel to `host:port` (or several replicas' addresses, see
    outrider.balancing) that adds `pairs()` to every call's metadata; TLS
    when `tls` is given."""
    interceptors = [_Unary(pairs), _UnaryStream(pairs), _StreamUnary(pairs), _StreamStream(pairs)]
    target = balancing.target(address)
    options = [*CHANNEL_OPTIONS, *balancing.options(health_checked=health_checked)]
    if tls is not None:
        return grpc.aio.secure_channel(target, tls.credentials(), interceptors=interceptors, options=options)
    return grpc.aio.insecure_channel(target, interceptors=interceptors, options=options)


def keyed_channel(address: str, internal_key: str, *, tls: TlsFiles | None = None,
                  health_checked: bool = True) -> grpc.aio.Channel:
    """A channel that presents an engine key (`x-internal-key`) on every call."""
    pair = ((INTERNAL_KEY_HEADER, internal_key),)
    return channel_with(address, lambda: pair, tls, health_checked=health_checked)


async def batches(queue: asyncio.Queue[Item | None]) -> AsyncIterator[list[Item]]:
    """What a queue holds, a list at a time: the next item and every one
    already waiting behind it, until None is taken. A stream that sends what
    is ready in one message pays a message's cost once per handful of items
    when busy, and still sends a lone item at once when quiet."""
    ended = False
    while not ended:
        ready: list[Item] = []
        item = await queue.get()
        while item is not None:
            ready.append(item)
            if queue.empty():
                break
            item = queue.get_nowait()
        ended = item is None
        if ready:
            yield ready
