"""A scripted Anthropic Messages endpoint and a Doormile-like backend, both
real HTTP for the SDK and the playground's executors to talk to.

The model answers POST /v1/messages from a script, one reply per request,
and keeps every request body so a test can check exactly what was sent.
The same script also serves an httpx2 mock transport, for tests of the run
loop that need no server.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx2
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from tests import harness

_ids = itertools.count(1)


@dataclass
class Reply:
    status: int
    body: dict[str, Any]
    delay_s: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)


def _message(
    body: dict[str, Any], content: list[dict[str, Any]], stop_reason: str, usage: tuple[int, int]
) -> dict[str, Any]:
    return {
        "id": f"msg_{next(_ids)}",
        "type": "message",
        "role": "assistant",
        "model": body.get("model", ""),
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {"input_tokens": usage[0], "output_tokens": usage[1]},
    }


class Say:
    """The model ends its turn with text."""

    def __init__(self, text: str, *, usage: tuple[int, int] = (100, 20), delay_s: float = 0.0) -> None:
        self.text, self.usage, self.delay_s = text, usage, delay_s

    def reply(self, body: dict[str, Any]) -> Reply:
        content = [{"type": "text", "text": self.text}]
        return Reply(200, _message(body, content, "end_turn", self.usage), self.delay_s)


class Call:
    """The model asks for one or more tools: Call(("name", {input}), ...)."""

    def __init__(
        self,
        *calls: tuple[str, dict[str, Any]],
        text: str = "",
        usage: tuple[int, int] = (150, 30),
        delay_s: float = 0.0,
    ) -> None:
        self.calls, self.text, self.usage, self.delay_s = calls, text, usage, delay_s

    def reply(self, body: dict[str, Any]) -> Reply:
        content: list[dict[str, Any]] = [{"type": "text", "text": self.text}] if self.text else []
        content += [
            {"type": "tool_use", "id": f"toolu_{next(_ids)}", "name": name, "input": tool_input}
            for name, tool_input in self.calls
        ]
        return Reply(200, _message(body, content, "tool_use", self.usage), self.delay_s)


class Fail:
    """The API answers an error, and tells the SDK not to retry it."""

    def __init__(self, status: int, message: str, *, kind: str = "api_error") -> None:
        self.status, self.message, self.kind = status, message, kind

    def reply(self, body: dict[str, Any]) -> Reply:
        error = {"type": "error", "error": {"type": self.kind, "message": self.message}}
        return Reply(self.status, error, headers={"x-should-retry": "false"})


class ScriptedModel:
    def __init__(self, *steps: Any, repeat_last: bool = False) -> None:
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self._steps: list[Any] = []
        self._repeat_last = False
        self.script(*steps, repeat_last=repeat_last)

    def script(self, *steps: Any, repeat_last: bool = False) -> None:
        """Replace what the model answers next; with repeat_last the last reply never runs out."""
        self._steps = list(steps)
        self._repeat_last = repeat_last

    def sent_text(self) -> str:
        """Every request body the model received, as one string to search."""
        return "\n".join(json.dumps(body, ensure_ascii=False) for body in self.requests)

    async def answer(self, body: dict[str, Any], headers: dict[str, str]) -> Reply:
        self.requests.append(body)
        self.headers.append(headers)
        if not self._steps:
            return Fail(500, "the test script has no reply left").reply(body)
        step = self._steps[0] if self._repeat_last and len(self._steps) == 1 else self._steps.pop(0)
        reply = step.reply(body)
        if reply.delay_s:
            await asyncio.sleep(reply.delay_s)
        return reply

    def transport(self) -> httpx2.MockTransport:
        async def handle(request: httpx2.Request) -> httpx2.Response:
            reply = await self.answer(json.loads(request.content), dict(request.headers))
            return httpx2.Response(reply.status, json=reply.body, headers=reply.headers)

        return httpx2.MockTransport(handle)

    def app(self) -> Starlette:
        async def messages(request: Request) -> JSONResponse:
            reply = await self.answer(await request.json(), dict(request.headers))
            return JSONResponse(reply.body, status_code=reply.status, headers=reply.headers)

        return Starlette(routes=[Route("/v1/messages", messages, methods=["POST"])])


# What the backend's booking endpoint holds: personal data of every kind the
# redaction must stop, next to the facts the model is meant to see.
BOOKING = {
    "booking_id": 1001,
    "status": "in_transit",
    "customer_name": "Ananya Rao",
    "customer_phone": "+91 98450 12345",
    "drop_address": "14 Residency Road, Bengaluru",
    "contact": {"email": "ananya.rao@example.in"},
    "notes": "ring twice, ask for Ananya",
    "status_text": "customer wrote from ananya.rao@example.in, call back on 9845012345",
    "promised_by": "2026-09-29T18:30:00+05:30",
    "miler": {"miler_id": 77, "lat": 12.971599, "lon": 77.594566},
}
PERSONAL = ("Ananya", "Rao", "98450", "9845012345", "ananya.rao@example.in", "Residency Road", "12.971599", "77.594566")


class Backend:
    """The Doormile API as the playground's HTTP reads see it."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str, str]] = []

    def app(self) -> Starlette:
        async def booking(request: Request) -> JSONResponse:
            self.requests.append((request.method, request.url.path, request.url.query))
            if request.path_params["booking_id"] != str(BOOKING["booking_id"]):
                return JSONResponse({"error": "no such booking"}, status_code=404)
            return JSONResponse(BOOKING)

        async def anything(request: Request) -> JSONResponse:
            self.requests.append((request.method, request.url.path, request.url.query))
            return JSONResponse({"ok": True})

        return Starlette(
            routes=[
                Route("/bookings/cache/{booking_id}", booking, methods=["GET"]),
                Route("/{rest:path}", anything, methods=["GET", "POST", "PUT", "PATCH", "DELETE"]),
            ]
        )


@asynccontextmanager
async def serving(app: Starlette) -> AsyncIterator[str]:
    """Serve an app on 127.0.0.1 in this event loop; yields its base URL."""
    async with harness.serving(app, log_level="warning", lifespan="off") as base:
        yield base
