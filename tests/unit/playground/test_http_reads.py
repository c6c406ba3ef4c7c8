"""HTTP reads refuse an answer past the byte cap while it streams, before
anything of it is parsed or redacted (an in-memory transport, no network)."""

from __future__ import annotations

import json

import httpx
import pytest

from services.playground.engine import ToolFailure, ToolSpec
from services.playground.executors import ToolExecutors, parse_body
from services.playground.tool_policy import PlaygroundTool, ToolExecutor, ToolKind

BOOKING = ToolSpec(
    PlaygroundTool("get_booking", ToolKind.READ, ToolExecutor.HTTP, base_url_key="doormile"),
    "Read a booking.",
    {"type": "object"},
    http_path="/bookings/{booking_id}",
)
CAP = 4096
CHUNK = b"x" * 1000


class Endless:
    """A body that never ends, counting the chunks anyone pulled from it."""

    def __init__(self) -> None:
        self.pulled = 0

    async def __aiter__(self):
        while True:
            self.pulled += 1
            yield CHUNK


def executors(handler) -> ToolExecutors:
    http = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    return ToolExecutors(http=http, base_urls={"doormile": "http://doormile.test"}, decisions=None, max_body_bytes=CAP)


async def test_an_answer_within_the_cap_is_read_and_parsed():
    seen = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={"booking_id": 7, "status": "in_transit"})

    assert await executors(handler)(BOOKING, {"booking_id": 7}) == {"booking_id": 7, "status": "in_transit"}
    assert seen[0].headers["accept-encoding"] == "identity"


async def test_a_declared_length_over_the_cap_is_refused_unread():
    body = Endless()

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-length": str(CAP + 1)}, content=body)

    with pytest.raises(ToolFailure, match="answered 4,097 bytes; the playground reads at most 4,096"):
        await executors(handler)(BOOKING, {"booking_id": 7})
    assert body.pulled == 0


async def test_a_body_growing_past_the_cap_stops_being_read_there():
    body = Endless()

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=body)

    with pytest.raises(ToolFailure, match="answered more than 4,096 bytes; reading stopped there, none of it used"):
        await executors(handler)(BOOKING, {"booking_id": 7})
    # The chunk that crossed the cap is the last one read.
    assert body.pulled == CAP // len(CHUNK) + 1


async def test_a_compressed_answer_is_refused_since_its_size_says_nothing_of_what_it_inflates_to():
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-encoding": "gzip"}, content=b"\x1f\x8b")

    with pytest.raises(ToolFailure, match="gzip-encoded body"):
        await executors(handler)(BOOKING, {"booking_id": 7})


@pytest.mark.parametrize(
    ("body", "charset", "parsed"),
    [
        (b'{"a": [1, 2]}', None, {"a": [1, 2]}),
        (b"plain words", None, "plain words"),
        (b"caf\xe9", "latin-1", "café"),
        (b"caf\xff", None, "caf\ufffd"),
        (b"caf\xff", "no-such-charset", "caf\ufffd"),
        (b"1" * 5000, None, "1" * 5000),
    ],
)
def test_a_body_is_json_when_it_parses_and_text_otherwise(body, charset, parsed):
    assert parse_body(body, charset, what="GET /x") == parsed


def test_json_nested_past_the_interpreter_s_depth_is_refused():
    deep = ("[" * 100_000 + "]" * 100_000).encode()

    with pytest.raises(ToolFailure, match="nested too deeply"):
        parse_body(deep, None, what="GET /x")
    assert parse_body(json.dumps([[[1]]]).encode(), None, what="GET /x") == [[[1]]]
