"""Every answer names its request, so an operator who sees a 5xx can hand
support one id that finds its log lines.

The id is the caller's `X-Request-Id` when it is a short token (a proxy or
an engine that already traces its calls keeps its own), else a new one. A
caller's id that is not a token is replaced, not refused: it is a courtesy
header, and quoting arbitrary bytes back into logs and headers is how log
lines get forged.
"""

from __future__ import annotations

import re
import uuid
from contextvars import ContextVar

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

HEADER = "x-request-id"
_TOKEN = re.compile(r"[A-Za-z0-9._:-]{1,64}")

current: ContextVar[str] = ContextVar("request_id", default="")


def chosen_id(given: str | None) -> str:
    """The caller's id when it is a token, else a fresh one."""
    if given is not None and _TOKEN.fullmatch(given):
        return given
    return uuid.uuid4().hex


class RequestIds:
    """Pure ASGI (no BaseHTTPMiddleware): streamed answers, the SSE ones
    included, pass through untouched but for one header."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = next((value.decode("latin-1") for name, value in scope["headers"] if name == HEADER.encode()), None)
        request_id = chosen_id(given)
        # Kept on the request too: an unexpected error is answered outside
        # this middleware, once the context variable is reset.
        scope.setdefault("state", {})["request_id"] = request_id
        token = current.set(request_id)

        async def named(message: Message) -> None:
            if message["type"] == "http.response.start":
                MutableHeaders(scope=message)[HEADER] = request_id
            await send(message)

        try:
            await self.app(scope, receive, named)
        finally:
            current.reset(token)
