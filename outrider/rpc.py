"""What both ends of an Outrider gRPC call agree on: the key header, the
error metadata keys, and a channel that presents a credential on every call,
over TLS when asked, and how a stream sends what is ready together.

The engine client and the services both import this module and nothing of
each other's, so an engine never pulls server code and a service never pulls
the engine SDK.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

import grpc

from outrider import balancing

INTERNAL_KEY_HEADER = "x-internal-key"
Item = TypeVar("Item")

# Trailing metadata of a refused call: the machine-readable error code
# (UPPER_SNAKE) and its details as a JSON object.
ERROR_CODE_KEY = "outrider-error-code"
ERROR_DETAILS_KEY = "outrider-error-details"


def refusal_metadata(error: grpc.aio.AioRpcError) -> tuple[str | None, dict[str, Any]]:
    """The error code and details a refusing server sent in the trailing
    metadata: (None, {}) when it sent none (the transport refused the call),
    and {} for details that are not a JSON object."""
    # grpc-stubs types it as the sync API's metadatum objects; grpc.aio hands
    # (key, value) pairs.
    pairs = cast("Iterable[tuple[str, str | bytes]]", error.trailing_metadata() or ())
    trailing = dict(pairs)
    code = _text(trailing.get(ERROR_CODE_KEY))
    try:
        details = json.loads(_text(trailing.get(ERROR_DETAILS_KEY)) or "{}")
    except ValueError:
        details = {}
    return code or None, details if isinstance(details, dict) else {}


def _text(value: str | bytes | None) -> str | None:
    return value.decode(errors="replace") if isinstance(value, bytes) else value


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


# The credential goes into each call's metadata where the call is made,
# not through a grpc.aio interceptor: an intercepted unary call runs as a
# task of its own around the real call, which cost the gateway 5-10% of its
# CPU per forwarded request. Every kind of call is
# wrapped, so no stub made on the channel can call without the credential.
class _WithPairs:
    def __init__(self, call: Callable[..., Any], pairs: Pairs) -> None:
        self._call, self._pairs = call, pairs

    def __call__(self, *args: Any, metadata: Any = None, **kwargs: Any) -> Any:
        return self._call(*args, metadata=(*(metadata or ()), *self._pairs()), **kwargs)


if TYPE_CHECKING:
    # Generic in grpc-stubs only: at run time grpc.aio's classes take no parameters.
    _UnaryUnaryKind = grpc.aio.UnaryUnaryMultiCallable[Any, Any]
    _UnaryStreamKind = grpc.aio.UnaryStreamMultiCallable[Any, Any]
    _StreamUnaryKind = grpc.aio.StreamUnaryMultiCallable[Any, Any]
    _StreamStreamKind = grpc.aio.StreamStreamMultiCallable[Any, Any]
else:
    _UnaryUnaryKind = grpc.aio.UnaryUnaryMultiCallable
    _UnaryStreamKind = grpc.aio.UnaryStreamMultiCallable
    _StreamUnaryKind = grpc.aio.StreamUnaryMultiCallable
    _StreamStreamKind = grpc.aio.StreamStreamMultiCallable


# Each an instance of its kind's class, as a stub's callables are.
class _Unary(_WithPairs, _UnaryUnaryKind):
    pass


class _UnaryStream(_WithPairs, _UnaryStreamKind):
    pass


class _StreamUnary(_WithPairs, _StreamUnaryKind):
    pass


class _StreamStream(_WithPairs, _StreamStreamKind):
    pass


class _CredentialedChannel(grpc.aio.Channel):
    """A channel whose every call carries `pairs()` after the caller's own metadata."""

    def __init__(self, channel: grpc.aio.Channel, pairs: Pairs) -> None:
        self._channel, self._pairs = channel, pairs

    async def __aenter__(self) -> _CredentialedChannel:
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        await self._channel.close(None)

    async def close(self, grace: float | None = None) -> None:
        await self._channel.close(grace)

    def get_state(self, try_to_connect: bool = False) -> grpc.ChannelConnectivity:
        return self._channel.get_state(try_to_connect)

    async def wait_for_state_change(self, last_observed_state: grpc.ChannelConnectivity) -> None:
        await self._channel.wait_for_state_change(last_observed_state)

    async def channel_ready(self) -> None:
        await self._channel.channel_ready()

    def unary_unary(self, method: str, *args: Any, **kwargs: Any) -> Any:
        return _Unary(self._channel.unary_unary(method, *args, **kwargs), self._pairs)

    def unary_stream(self, method: str, *args: Any, **kwargs: Any) -> Any:
        return _UnaryStream(self._channel.unary_stream(method, *args, **kwargs), self._pairs)

    def stream_unary(self, method: str, *args: Any, **kwargs: Any) -> Any:
        return _StreamUnary(self._channel.stream_unary(method, *args, **kwargs), self._pairs)

    def stream_stream(self, method: str, *args: Any, **kwargs: Any) -> Any:
        return _StreamStream(self._channel.stream_stream(method, *args, **kwargs), self._pairs)


# A call refused with one of these meets the same refusal if sent again:
# the request itself, or the caller's credential, is what was refused.
PERMANENT_CODES = frozenset(
    {
        grpc.StatusCode.INVALID_ARGUMENT,
        grpc.StatusCode.FAILED_PRECONDITION,
        grpc.StatusCode.PERMISSION_DENIED,
        grpc.StatusCode.UNAUTHENTICATED,
        grpc.StatusCode.NOT_FOUND,
    }
)

# While a call is open (a registry watch can stay open for days), ping the
# server every 30 s: a peer that vanished without closing the connection is
# noticed within 40 s and the call fails, instead of a watch waiting forever
# on a stream that will never deliver again.
# A peer that comes back is connected to again within 3 s: gRPC's own
# backoff grows to 2 minutes between attempts, and every call meanwhile is
# refused unsent, so a context restarted after a long outage would stay
# unreachable for minutes after it is back.
CHANNEL_OPTIONS = (
    ("grpc.max_receive_message_length", 32 * 1024 * 1024),
    ("grpc.keepalive_time_ms", 30_000),
    ("grpc.keepalive_timeout_ms", 10_000),
    ("grpc.keepalive_permit_without_calls", 0),
    ("grpc.initial_reconnect_backoff_ms", 250),
    ("grpc.max_reconnect_backoff_ms", 3_000),
)


def channel_with(
    address: str, pairs: Pairs, tls: TlsFiles | None = None, *, health_checked: bool = True
) -> grpc.aio.Channel:
    """A channel to `host:port` (or several replicas' addresses, see
    outrider.balancing) that adds `pairs()` to every call's metadata; TLS
    when `tls` is given."""
    target = balancing.target(address)
    options = [*CHANNEL_OPTIONS, *balancing.options(health_checked=health_checked)]
    if tls is not None:
        return _CredentialedChannel(grpc.aio.secure_channel(target, tls.credentials(), options=options), pairs)
    return _CredentialedChannel(grpc.aio.insecure_channel(target, options=options), pairs)


def keyed_channel(
    address: str, internal_key: str, *, tls: TlsFiles | None = None, health_checked: bool = True
) -> grpc.aio.Channel:
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
