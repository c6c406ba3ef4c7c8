"""The reads the playground actually runs: GETs against configured backends,
and the reads Outrider serves itself, asked of decision memory (clients.py).

Every failure here becomes a ToolFailure, which the loop hands to the model
as the tool's error: a backend that is down is something the model should
hear about, not something that ends the run.

An HTTP answer is read as it streams, up to a byte cap, and refused whole
past it rather than cut: a cut JSON body no longer parses, and handed on as
plain text it would lose the key rules that redact a field by its name
(`customer_name`), leaving only the text patterns to guard it.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import httpx

from outrider.wire import MalformedJson, json_bytes
from services.common.clients import ContextCallError
from services.playground.clients import DecisionsClient
from services.playground.engine import ToolFailure, ToolSpec
from services.playground.rules import HTTP_READ_BYTES, ToolInputError, http_request_parts
from services.playground.tool_policy import ToolExecutor

PRECEDENTS_TOOL = "find_precedents"
MAX_PRECEDENTS = 20


class ToolExecutors:
    """Runs one executed read; the loop has already decided it may run."""

    def __init__(
        self,
        *,
        http: httpx.AsyncClient,
        base_urls: Mapping[str, str],
        decisions: DecisionsClient,
        max_body_bytes: int = HTTP_READ_BYTES,
    ) -> None:
        self._http = http
        self._base_urls = base_urls
        self._decisions = decisions
        self._max_body_bytes = max_body_bytes
        self._outrider: dict[str, Callable[[Mapping[str, Any]], Awaitable[Any]]] = {
            PRECEDENTS_TOOL: self._precedents,
        }

    async def __call__(self, spec: ToolSpec, tool_input: Mapping[str, Any]) -> Any:
        executor = spec.policy.executor
        if executor is ToolExecutor.HTTP:
            return await self._get(spec, tool_input)
        if executor is ToolExecutor.OUTRIDER and spec.policy.name in self._outrider:
            return await self._outrider[spec.policy.name](tool_input)
        raise ToolFailure(f"Outrider has no read called {spec.policy.name}")

    async def _get(self, spec: ToolSpec, tool_input: Mapping[str, Any]) -> Any:
        base = self._base_urls.get(spec.policy.base_url_key or "", "").strip()
        if not base or not spec.http_path:
            raise ToolFailure(f"{spec.policy.name} has no configured base URL and path")
        try:
            path, query = http_request_parts(spec.http_path, tool_input)
        except ToolInputError as exc:
            raise ToolFailure(str(exc)) from None
        try:
            # Redirects are not followed: the allow-list names a base URL,
            # and a redirect could lead anywhere. Identity encoding, so the
            # cap counts the bytes that arrive, not what they inflate to.
            async with self._http.stream(
                "GET",
                base.rstrip("/") + path,
                params=tuple(query),
                follow_redirects=False,
                headers={"Accept-Encoding": "identity"},
            ) as reply:
                if reply.status_code != 200:
                    raise ToolFailure(f"GET {path} answered {reply.status_code}")
                body = await read_capped(reply, self._max_body_bytes, what=f"GET {path}")
        except httpx.HTTPError as exc:
            raise ToolFailure(f"GET {path} failed: {type(exc).__name__}") from None
        return parse_body(body, reply.charset_encoding, what=f"GET {path}")

    async def _precedents(self, tool_input: Mapping[str, Any]) -> Any:
        decision_type = tool_input.get("decision_type")
        if not isinstance(decision_type, str) or not decision_type.strip():
            raise ToolFailure("decision_type is required")
        context = tool_input.get("context", {})
        if not isinstance(context, Mapping):
            raise ToolFailure("context must be an object")
        k = tool_input.get("k", 5)
        if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_PRECEDENTS:
            raise ToolFailure(f"k must be a whole number from 1 to {MAX_PRECEDENTS}")
        try:
            context_json = json_bytes(dict(context))
        except MalformedJson as error:
            raise ToolFailure(f"context {error}") from None
        try:
            return await self._decisions.precedents(decision_type=decision_type, context_json=context_json, k=k)
        except ContextCallError as exc:
            # The model learns the kind of failure, never the peer's address.
            raise ToolFailure(f"decision memory answered {exc.status.name}") from None


async def read_capped(reply: httpx.Response, limit: int, *, what: str) -> bytes:
    """The body of a streamed answer, refused once it passes `limit` bytes.

    A declared length over the limit is refused before a byte is read; a
    body that grows past it is refused as soon as it does, and the rest is
    never read (closing the stream drops the connection).
    """
    encoding = reply.headers.get("content-encoding", "identity").strip().lower()
    if encoding not in ("", "identity"):
        raise ToolFailure(f"{what} answered a {encoding}-encoded body; the playground reads plain bodies only")
    declared = reply.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise ToolFailure(f"{what} answered {int(declared):,} bytes; the playground reads at most {limit:,}")
    chunks: list[bytes] = []
    size = 0
    async for chunk in reply.aiter_bytes():
        size += len(chunk)
        if size > limit:
            raise ToolFailure(f"{what} answered more than {limit:,} bytes; reading stopped there, none of it used")
        chunks.append(chunk)
    return b"".join(chunks)


def parse_body(body: bytes, charset: str | None, *, what: str) -> Any:
    """JSON when the body is JSON, else its text.

    JSON nested past the interpreter's depth is refused: no part of it could
    be redacted or shown.
    """
    try:
        return json.loads(body)
    except RecursionError:
        raise ToolFailure(f"{what} answered JSON nested too deeply to read") from None
    except ValueError:
        pass
    try:
        return body.decode(charset or "utf-8", errors="replace")
    except LookupError:
        return body.decode("utf-8", errors="replace")
