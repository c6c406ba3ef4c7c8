"""How the gateway is served over HTTP: uvicorn's options from the settings,
and the connection rules uvicorn lacks.

uvicorn closes an idle keep-alive connection (`timeout_keep_alive`), but it
waits without end for a request head that never completes: a connection
that sends nothing, or drips a header a byte at a time, keeps its socket
until the peer leaves. Its `limit_concurrency` counts those connections
too, and refuses the real requests in their place, and only once their
head is complete; httptools takes a head of any size. So the gateway is
served by uvicorn's own httptools protocol with three rules added:

- a request's line and headers arrive within the head timeout, counted from
  the connection or from the request's first byte; else 408, closed;
- a head past MAX_HEAD_BYTES is answered 431, closed;
- past the connection cap a new connection is answered 503 and closed
  before anything is read: a flood costs an accept and a write each, and
  takes no connection's place.

`outrider gateway` and the test harness both serve the gateway with
`uvicorn_options`, so what the tests run is what production runs.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, ClassVar

from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol

from services.common.settings import Settings

# A console token and the headers a browser sends come to a few KiB; h11,
# uvicorn's other parser, stops at 16 KiB by default.
MAX_HEAD_BYTES = 64 * 1024
# What uvicorn waits on open requests when told to stop.
SHUTDOWN_GRACE_S = 5


class GatewayHttpProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with a head timeout, a head size cap and a connection cap."""

    head_timeout_s: ClassVar[float] = 5.0
    max_connections: ClassVar[int] = 512

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._head_deadline: asyncio.TimerHandle | None = None
        self._head_bytes = 0
        self._refused = False

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]  # uvicorn narrows it the same way
        if len(self.connections) >= self.max_connections:
            self._refused = True
            self.transport = transport
            self._answer_and_close(
                503,
                "CONNECTION_CAP_REACHED",
                f"the gateway holds {self.max_connections} connections, the most it takes; try again shortly",
                {"cap": "connections", "limit": self.max_connections},
            )
            return
        super().connection_made(transport)
        self._await_head()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_waiting()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._refused:
            return
        super().data_received(data)
        if self._head_deadline is None or self.transport.is_closing():
            return
        # Counted once the parser has had the bytes: a head still awaited
        # now holds every byte since it began.
        self._head_bytes += len(data)
        if self._head_bytes > MAX_HEAD_BYTES:
            self._stop_waiting()
            self._answer_and_close(
                431,
                "REQUEST_HEAD_TOO_LARGE",
                f"the request line and headers take more than {MAX_HEAD_BYTES} bytes",
                {"limit_bytes": MAX_HEAD_BYTES},
            )

    def on_message_begin(self) -> None:
        super().on_message_begin()
        # The first request's clock runs from the connection; a later one's
        # from its first byte (until then the keep-alive timeout applies).
        if self._head_deadline is None:
            self._await_head()

    def on_headers_complete(self) -> None:
        self._stop_waiting()
        super().on_headers_complete()

    def _await_head(self) -> None:
        self._head_bytes = 0
        self._head_deadline = self.loop.call_later(self.head_timeout_s, self._head_timed_out)

    def _stop_waiting(self) -> None:
        if self._head_deadline is not None:
            self._head_deadline.cancel()
            self._head_deadline = None

    def _head_timed_out(self) -> None:
        self._head_deadline = None
        if self.transport.is_closing():
            return
        if self.cycle is not None and not self.cycle.response_complete:
            # A pipelined head is late while an answer still goes out: the
            # answer finishes, then the connection closes.
            self.cycle.keep_alive = False
            return
        self._answer_and_close(
            408,
            "REQUEST_HEAD_TIMEOUT",
            f"the request line and headers did not arrive within {self.head_timeout_s:g} s",
            {"limit_s": self.head_timeout_s},
        )

    def _answer_and_close(self, status: int, code: str, message: str, details: dict[str, Any]) -> None:
        body = json.dumps({"error": {"code": code, "message": message, "details": details}}).encode()
        head = [STATUS_LINE[status]]
        for name, value in self.server_state.default_headers:
            head.extend([name, b": ", value, b"\r\n"])
        head.extend(
            [
                b"content-type: application/json\r\n",
                b"content-length: " + str(len(body)).encode() + b"\r\n",
                b"connection: close\r\n\r\n",
            ]
        )
        self.transport.write(b"".join(head) + body)
        self.transport.close()


def protocol(settings: Settings) -> type[GatewayHttpProtocol]:
    """The protocol class with the settings' limits (uvicorn makes one per connection)."""
    return type(
        "GatewayHttpProtocol",
        (GatewayHttpProtocol,),
        {"head_timeout_s": float(settings.http_head_timeout_s), "max_connections": settings.http_max_connections},
    )


def uvicorn_options(settings: Settings) -> dict[str, Any]:
    """uvicorn.Config's options for the gateway, but where it listens."""
    return {
        "http": protocol(settings),
        # The gateway serves no WebSocket; an upgrade is one more parser for nothing.
        "ws": "none",
        "timeout_keep_alive": settings.http_keepalive_s,
        "timeout_graceful_shutdown": SHUTDOWN_GRACE_S,
        "log_config": None,
        "access_log": False,
    }
