"""What both ends of an Outrider gRPC call agree on: the key header, the
error metadata keys, and a channel that presents the key on every call.

The engine client and the services both import this module and nothing of
each other's, so an engine never pulls server code and a service never pulls
the engine SDK.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import grpc

INTERNAL_KEY_HEADER = "x-internal-key"

# Trailing metadata of a refused call: the machine-readable error code
# (UPPER_SNAKE) and its details as a JSON object.
ERROR_CODE_KEY = "outrider-error-code"
ERROR_DETAILS_KEY = "outrider-error-details"


class _KeyInterceptor:
    def __init__(self, key: str) -> None:
        self._pair = (INTERNAL_KEY_HEADER, key)

    def _details(self, details: grpc.aio.ClientCallDetails) -> grpc.aio.ClientCallDetails:
        metadata = grpc.aio.Metadata(*(details.metadata or ()), self._pair)
        return grpc.aio.ClientCallDetails(
            details.method, details.timeout, metadata, details.credentials, details.wait_for_ready
        )


# One class per call kind: grpc.aio files an interceptor under the first
# kind it is an instance of, so a single class serving both would never see
# a streaming call, and those would go out without the key.
class _UnaryKeyInterceptor(_KeyInterceptor, grpc.aio.UnaryUnaryClientInterceptor):
    async def intercept_unary_unary(self, continuation: Callable[..., Any], details: Any, request: Any) -> Any:
        return await continuation(self._details(details), request)


class _StreamKeyInterceptor(_KeyInterceptor, grpc.aio.UnaryStreamClientInterceptor):
    async def intercept_unary_stream(self, continuation: Callable[..., Any], details: Any, request: Any) -> Any:
        return await continuation(self._details(details), request)


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


def keyed_channel(address: str, internal_key: str) -> grpc.aio.Channel:
    """An insecure channel to `host:port` that sends `x-internal-key` on every call."""
    return grpc.aio.insecure_channel(
        address,
        interceptors=[_UnaryKeyInterceptor(internal_key), _StreamKeyInterceptor(internal_key)],
        options=list(CHANNEL_OPTIONS),
    )
