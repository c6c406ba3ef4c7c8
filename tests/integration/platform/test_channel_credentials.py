"""A channel from `channel_with` puts its credential on every call of every
kind, after the caller's own metadata, read when the call is made: the
caller a context acts for changes from one call to the next."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextvars import ContextVar

import grpc
import pytest

from outrider.rpc import channel_with

acting_for: ContextVar[str] = ContextVar("acting_for", default="nobody")


def pairs() -> tuple[tuple[str, str], ...]:
    return (("x-credential", "key"), ("x-acting-for", acting_for.get()))


def seen(context: grpc.aio.ServicerContext) -> bytes:
    wanted = ("x-mine", "x-credential", "x-acting-for")
    return repr([(key, value) for key, value in context.invocation_metadata() if key in wanted]).encode()


async def unary_unary(request: bytes, context: grpc.aio.ServicerContext) -> bytes:
    return seen(context)


async def unary_stream(request: bytes, context: grpc.aio.ServicerContext) -> AsyncIterator[bytes]:
    yield seen(context)


async def stream_unary(requests: AsyncIterator[bytes], context: grpc.aio.ServicerContext) -> bytes:
    async for _ in requests:
        pass
    return seen(context)


async def stream_stream(requests: AsyncIterator[bytes], context: grpc.aio.ServicerContext) -> AsyncIterator[bytes]:
    async for _ in requests:
        pass
    yield seen(context)


@pytest.fixture
async def address() -> AsyncIterator[str]:
    server = grpc.aio.server()
    server.add_generic_rpc_handlers(
        [
            grpc.method_handlers_generic_handler(
                "test.Echo",
                {
                    "UnaryUnary": grpc.unary_unary_rpc_method_handler(unary_unary),
                    "UnaryStream": grpc.unary_stream_rpc_method_handler(unary_stream),
                    "StreamUnary": grpc.stream_unary_rpc_method_handler(stream_unary),
                    "StreamStream": grpc.stream_stream_rpc_method_handler(stream_stream),
                },
            )
        ]
    )
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        yield f"127.0.0.1:{port}"
    finally:
        await server.stop(None)


async def test_every_kind_of_call_carries_the_credential_after_the_callers_own(address: str) -> None:
    async def requests() -> AsyncIterator[bytes]:
        yield b"x"

    async with channel_with(address, pairs, health_checked=False) as channel:
        mine = (("x-mine", "1"),)
        streamed = [
            m
            async for m in channel.unary_stream("/test.Echo/UnaryStream")(
                b"x", metadata=grpc.aio.Metadata(*mine), timeout=10
            )
        ]
        both_streamed = [
            m async for m in channel.stream_stream("/test.Echo/StreamStream")(requests(), metadata=mine, timeout=10)
        ]
        answers = {
            "unary-unary": await channel.unary_unary("/test.Echo/UnaryUnary")(b"x", metadata=mine, timeout=10),
            "unary-stream": streamed[0],
            "stream-unary": await channel.stream_unary("/test.Echo/StreamUnary")(requests(), metadata=mine, timeout=10),
            "stream-stream": both_streamed[0],
        }
        expected = repr([("x-mine", "1"), ("x-credential", "key"), ("x-acting-for", "nobody")]).encode()
        assert answers == dict.fromkeys(answers, expected)
        bare = await channel.unary_unary("/test.Echo/UnaryUnary")(b"x", timeout=10)
        assert bare == repr([("x-credential", "key"), ("x-acting-for", "nobody")]).encode()


async def test_the_credential_is_read_at_each_call(address: str) -> None:
    async with channel_with(address, pairs, health_checked=False) as channel:
        call = channel.unary_unary("/test.Echo/UnaryUnary")
        answers = []
        for person in ("ada", "grace"):
            acting_for.set(person)
            answers.append(await call(b"x", timeout=10))
        assert [b"'ada'" in answers[0], b"'grace'" in answers[1]] == [True, True]
        assert channel.get_state() is grpc.ChannelConnectivity.READY
