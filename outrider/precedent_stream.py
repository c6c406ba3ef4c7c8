"""Precedent searches over long-lived SearchPrecedents streams.

Shared by the engine SDK (PrecedentClient) and the gateway: both ask on
every decision, and a call per search costs the caller and the decisions
context more than the search itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import itertools
from collections.abc import AsyncIterator

import grpc

from outrider.rpc import PERMANENT_CODES, batches
from outrider.v1 import decisions_pb2, decisions_pb2_grpc


class SearchStreamBroken(Exception):
    """The SearchPrecedents stream ended before answering a search; `code`
    is its status, None when Outrider closed it without one."""

    def __init__(self, code: grpc.StatusCode | None) -> None:
        super().__init__(f"the precedent stream ended: {code.name if code else 'closed by Outrider'}")
        self.code = code


class PrecedentSearches:
    """Precedent searches over SearchPrecedents streams of a channel.

    A stream is opened at its first search and again after it breaks: a
    separate call per search would cost the caller and Outrider a call's
    setup and admission every time, which is more than the search itself.
    Searches take the `streams` in turn; each is a call of its own, so a
    balanced channel spreads them over the context's replicas as it would
    spread calls. A search whose stream broke is sent again on a new one (it
    only reads): until the caller's own timeout, or `attempts` streams in
    all, so losing the replica that held a stream costs a retry, not an
    answer.
    """

    def __init__(self, channel: grpc.aio.Channel, *, streams: int = 1, attempts: int | None = None) -> None:
        if streams < 1 or (attempts is not None and attempts < 1):
            raise ValueError("a search needs at least one stream and one attempt")
        self._stub = decisions_pb2_grpc.DecisionsStub(channel)
        self._tags = itertools.count(1)
        self._streams: list[_SearchStream | None] = [None] * streams
        self._attempts = attempts

    async def search(self, search: decisions_pb2.FindSimilarRequest) -> decisions_pb2.PrecedentAnswer:
        """Its answer, found or refused. Raises SearchStreamBroken when the
        stream ended with a status a new stream would meet again (a refused
        credential) or when the attempts are spent; bound the wait with a
        timeout of the caller's."""
        tried = 0
        while True:
            tag = next(self._tags)
            slot = tag % len(self._streams)
            stream = self._streams[slot]
            if stream is None or stream.ended:
                # Opened in a context of its own: the stream serves every
                # later search, so it must not carry whoever asked first.
                stream = self._streams[slot] = contextvars.Context().run(_SearchStream, self._stub)
            try:
                return await stream.ask(tag, search)
            except SearchStreamBroken as broken:
                tried += 1
                if broken.code in PERMANENT_CODES or tried == self._attempts:
                    raise
                await asyncio.sleep(0.01)

    async def close(self) -> None:
        for stream in self._streams:
            if stream is not None:
                await stream.close()
        self._streams = [None] * len(self._streams)


class _SearchStream:
    """One SearchPrecedents call: queries out through a queue, answers
    routed back to their waiting searches by tag."""

    def __init__(self, stub: decisions_pb2_grpc.DecisionsStub) -> None:
        self._outgoing: asyncio.Queue[decisions_pb2.PrecedentQuery | None] = asyncio.Queue()
        self._waiting: dict[int, asyncio.Future[decisions_pb2.PrecedentAnswer]] = {}
        self._call = stub.SearchPrecedents(self._queries())
        self._reader = asyncio.create_task(self._read())
        self.ended = False

    async def ask(self, tag: int, search: decisions_pb2.FindSimilarRequest) -> decisions_pb2.PrecedentAnswer:
        if self.ended:
            raise SearchStreamBroken(None)
        answer: asyncio.Future[decisions_pb2.PrecedentAnswer] = asyncio.get_running_loop().create_future()
        self._waiting[tag] = answer
        self._outgoing.put_nowait(decisions_pb2.PrecedentQuery(tag=tag, search=search))
        try:
            return await answer
        finally:
            # Answered, timed out or cancelled: a late answer finds no one.
            self._waiting.pop(tag, None)

    async def _queries(self) -> AsyncIterator[decisions_pb2.PrecedentQueries]:
        async for ready in batches(self._outgoing):
            yield decisions_pb2.PrecedentQueries(queries=ready)

    async def _read(self) -> None:
        code: grpc.StatusCode | None = None
        try:
            async for message in self._call:
                for answer in message.answers:
                    waiting = self._waiting.get(answer.tag)
                    if waiting is not None and not waiting.done():
                        waiting.set_result(answer)
        except grpc.aio.AioRpcError as error:
            code = error.code()
        except asyncio.CancelledError:
            code = grpc.StatusCode.CANCELLED
            raise
        finally:
            self.ended = True
            self._outgoing.put_nowait(None)
            for waiting in self._waiting.values():
                if not waiting.done():
                    waiting.set_exception(SearchStreamBroken(code))

    async def close(self) -> None:
        self._call.cancel()
        self._reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._reader
