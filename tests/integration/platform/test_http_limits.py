"""The gateway's connections over real sockets, served as `outrider gateway`
serves them: a request head that does not arrive in time is answered 408
and closed, an idle keep-alive connection is closed, a head too large is
refused, and past the connection cap a new connection is refused at once
while the ones inside it, and the requests after, are served."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx

from gateway.serving import MAX_HEAD_BYTES
from services.common.settings import Settings, load
from tests.harness import eventually, serving_gateway, with_env

HALF_OPEN = 300
# How long the test waits for an answer the gateway owes at once.
PROMPT_S = 5.0

Connection = tuple[asyncio.StreamReader, asyncio.StreamWriter]


def gateway_settings(tmp_path: Path, **changes: Any) -> Settings:
    return with_env(load({"OUTRIDER_DATA_DIR": str(tmp_path)}), **changes)


@asynccontextmanager
async def gateway(settings: Settings) -> AsyncIterator[tuple[str, str, int]]:
    async with serving_gateway(settings) as url:
        host, port = url.removeprefix("http://").split(":")
        yield url, host, int(port)


async def connections(host: str, port: int, count: int) -> list[Connection]:
    return [await asyncio.open_connection(host, port) for _ in range(count)]


def refusal(answer: bytes) -> tuple[int, dict[str, Any]]:
    """The status and error envelope of an answer the gateway wrote and closed after."""
    head, _, body = answer.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    assert b"connection: close" in head.lower()
    return status, json.loads(body)["error"]


async def test_half_open_connections_are_closed_after_the_head_timeout_and_requests_are_still_served(tmp_path):
    async with gateway(gateway_settings(tmp_path, http_head_timeout_s=1)) as (url, host, port):
        silent = await connections(host, port, HALF_OPEN)
        partial = await connections(host, port, HALF_OPEN // 10)
        for _, writer in partial:
            writer.write(b"GET /healthz HTTP/1.1\r\nHost: gateway\r\nX-Waiting: ")
        dripped = await connections(host, port, 1)
        sent: list[bytes] = []
        drip = asyncio.create_task(_drip(dripped[0][1], sent, byte_count=40, every_s=0.25))
        async with httpx.AsyncClient(base_url=url) as http:
            served = await http.get("/healthz")
        answers = await asyncio.gather(*(asyncio.wait_for(reader.read(), 10) for reader, _ in [*silent, *partial]))
        drip_ended = await asyncio.wait_for(_ended(dripped[0][0]), 10)
        drip.cancel()
        async with httpx.AsyncClient(base_url=url) as http:
            after = await http.get("/healthz")

    assert served.status_code == 200 and after.status_code == 200
    assert {refusal(answer)[0] for answer in answers} == {408}
    assert refusal(answers[0])[1] == {
        "code": "REQUEST_HEAD_TIMEOUT",
        "message": "the request line and headers did not arrive within 1 s",
        "details": {"limit_s": 1.0},
    }
    # A header dripped a byte at a time does not buy more time: the clock
    # runs from the connection, and closed it with most of the drip unsent.
    assert drip_ended in ("408", "reset") and len(sent) < 40


async def _ended(reader: asyncio.StreamReader) -> str:
    """How a connection that kept sending ended: its 408 read, or reset, as a
    socket closed with bytes still arriving may be before they are read."""
    try:
        return str(refusal(await reader.read())[0])
    except ConnectionResetError:
        return "reset"


async def _drip(writer: asyncio.StreamWriter, sent: list[bytes], *, byte_count: int, every_s: float) -> None:
    """Send a request head a byte at a time, keeping each byte sent in `sent`."""
    writer.write(b"GET /healthz HTTP/1.1\r\nX-Slow: ")
    for _ in range(byte_count):
        await asyncio.sleep(every_s)
        writer.write(b"a")
        sent.append(b"a")


async def test_an_idle_keep_alive_connection_is_closed_without_an_answer(tmp_path):
    # The head timeout is the shorter: an idle connection between requests
    # is the keep-alive timeout's, and is never answered as a late head.
    settings = gateway_settings(tmp_path, http_keepalive_s=2, http_head_timeout_s=1)
    async with gateway(settings) as (_, host, port):
        [(reader, writer)] = await connections(host, port, 1)
        writer.write(b"GET /healthz HTTP/1.1\r\nHost: gateway\r\n\r\n")
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), PROMPT_S)
        length = next(
            int(line.split(b":", 1)[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")
        )
        body = await asyncio.wait_for(reader.readexactly(length), PROMPT_S)
        rest = await asyncio.wait_for(reader.read(), 10)

    assert head.startswith(b"HTTP/1.1 200") and json.loads(body) == {"status": "ok"}
    assert rest == b""


async def test_a_request_head_past_the_size_cap_is_refused(tmp_path):
    async with gateway(gateway_settings(tmp_path)) as (_, host, port):
        [(reader, writer)] = await connections(host, port, 1)
        writer.write(b"GET /healthz HTTP/1.1\r\nX-Large: " + b"a" * (MAX_HEAD_BYTES + 1024))
        answer = await asyncio.wait_for(reader.read(), PROMPT_S)

    status, error = refusal(answer)
    assert (status, error["code"], error["details"]) == (431, "REQUEST_HEAD_TOO_LARGE", {"limit_bytes": MAX_HEAD_BYTES})


async def test_past_the_connection_cap_a_connection_is_refused_at_once_and_the_held_ones_still_count(tmp_path):
    cap = 20
    settings = gateway_settings(tmp_path, http_max_connections=cap, http_head_timeout_s=60)
    async with gateway(settings) as (url, host, port):
        held = await connections(host, port, cap)
        # Far more than the cap at once: each answered long before any head timeout.
        over = await connections(host, port, 200)
        refused = await asyncio.gather(*(asyncio.wait_for(reader.read(), PROMPT_S) for reader, _ in over))
        # The held connections are served as any connection is.
        reader, writer = held[0]
        writer.write(b"GET /healthz HTTP/1.1\r\nHost: gateway\r\n\r\n")
        served = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), PROMPT_S)
        for _, writer in held:
            writer.close()

        async def healthz() -> int:
            async with httpx.AsyncClient(base_url=url) as http:
                try:
                    return (await http.get("/healthz")).status_code
                except httpx.TransportError:
                    return 0

        after = await eventually(healthz, lambda status: status == 200, what="a request served once the held closed")

    assert {refusal(answer)[0] for answer in refused} == {503}
    assert refusal(refused[0])[1] == {
        "code": "CONNECTION_CAP_REACHED",
        "message": f"the gateway holds {cap} connections, the most it takes; try again shortly",
        "details": {"cap": "connections", "limit": cap},
    }
    assert served.startswith(b"HTTP/1.1 200")
    assert after == 200
