"""The body cap: no request body past its limit is read, parsed or authenticated.

It runs before everything else in the gateway: a 20 MB body sent without a
key must cost the gateway 20 MB of nothing, not 80 MB of parsed JSON before
the 401. The declared Content-Length is checked first; a body that lies about
its length, or sends none, is counted as it streams in and cut off at the cap.

A route whose clients read only their own protocol's refusal caps its body
itself, with `capped_body`, and answers the 413 in that protocol.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from fastapi import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from gateway.errors import ApiError

CODE = "BODY_TOO_LARGE"


class BodyCap:
    """ASGI middleware: `default_bytes` for every route, tighter caps by path prefix."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        default_bytes: int,
        by_prefix: Sequence[tuple[str, int]] = (),
        capped_by_route: Sequence[str] = (),
    ) -> None:
        self.app = app
        self.default_bytes = default_bytes
        # Paths whose route reads and caps its own body, because its clients
        # understand only their protocol's refusal (OTLP exporters read a
        # google.rpc.Status, never this envelope).
        self.capped_by_route = tuple(capped_by_route)
        # Longest prefix first, so /internal/human-inputs beats /internal.
        self.by_prefix = sorted(by_prefix, key=lambda pair: len(pair[0]), reverse=True)

    def limit_for(self, path: str) -> int:
        return next((limit for prefix, limit in self.by_prefix if path.startswith(prefix)), self.default_bytes)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"].startswith(self.capped_by_route):
            await self.app(scope, receive, send)
            return
        limit = self.limit_for(scope["path"])
        declared = _content_length(scope)
        if declared is not None and declared > limit:
            await _refuse(send, limit)
            return
        # Read the whole body here, counting, before the app sees a byte of
        # it: the routes parse bodies whole anyway, and a body over the cap
        # must be refused before auth or parsing spends anything on it.
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                await _refuse(send, limit)
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        delivered = False

        async def replay() -> Message:
            nonlocal delivered
            if not delivered:
                delivered = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


async def _refuse(send: Send, limit: int) -> None:
    body: dict[str, Any] = {
        "error": {
            "code": CODE,
            "message": f"the request body is over the {limit:,}-byte limit for this route",
            "details": {"limit_bytes": limit},
        }
    }
    payload = json.dumps(body).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 413,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(payload)).encode()),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": payload})


async def capped_body(request: Request, cap: int) -> bytes:
    """The body as sent, refused past `cap` bytes without reading further."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > cap:
        raise ApiError(413, "TOO_LARGE", f"the body is {int(declared)} bytes; the limit is {cap}")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > cap:
            raise ApiError(413, "TOO_LARGE", f"the body is over the limit of {cap} bytes")
        chunks.append(chunk)
    return b"".join(chunks)
