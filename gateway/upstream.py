"""How routes reach the contexts: one stub per context and class, made once,
and the precedent searches the gateway keeps open."""

from __future__ import annotations

import asyncio
from typing import Any, TypeVar

import grpc
from fastapi import Request

from gateway.errors import context_refusal
from outrider.precedent_stream import PrecedentSearches, SearchStreamBroken
from outrider.v1 import decisions_pb2

Stub = TypeVar("Stub")


def stub(request: Request, context: str, stub_class: type[Stub]) -> Stub:
    cache: dict[Any, Any] = request.app.state.stubs
    key = (context, stub_class)
    if key not in cache:
        cache[key] = request.app.state.clients.stub(context, stub_class)
    made: Stub = cache[key]
    return made


async def search_precedents(
    request: Request, search: decisions_pb2.FindSimilarRequest
) -> decisions_pb2.FindSimilarResponse:
    """A precedent search over the gateway's precedent streams, answered as
    a FindSimilar call would be: a refused search, a broken stream and the
    deadline each become the HTTP error the same failure of a call becomes."""
    searches: PrecedentSearches = request.app.state.precedents
    try:
        async with asyncio.timeout(request.app.state.settings.call_timeout_s):
            answer = await searches.search(search)
    except TimeoutError:
        raise context_refusal("decisions", grpc.StatusCode.DEADLINE_EXCEEDED, "the search took too long") from None
    except SearchStreamBroken as broken:
        raise context_refusal("decisions", broken.code or grpc.StatusCode.UNAVAILABLE, str(broken)) from None
    if answer.HasField("refused"):
        refused = answer.refused
        status = grpc.StatusCode.__members__.get(refused.status, grpc.StatusCode.UNKNOWN)
        raise context_refusal("decisions", status, refused.message, refused.code, refused.details_json)
    return answer.found
