"""outrider.rpc.batches: what a stream sends together."""

from __future__ import annotations

import asyncio

from outrider.rpc import batches


async def test_what_waits_together_goes_together_and_none_ends_it():
    queue: asyncio.Queue[int | None] = asyncio.Queue()
    for item in (1, 2, 3):
        queue.put_nowait(item)
    taken = batches(queue)
    assert await anext(taken) == [1, 2, 3]
    queue.put_nowait(4)
    queue.put_nowait(None)
    queue.put_nowait(5)
    assert [ready async for ready in taken] == [[4]]
    # What came after the end is left for no one to send.
    assert queue.get_nowait() == 5


async def test_a_lone_item_goes_at_once_without_waiting_for_company():
    queue: asyncio.Queue[str | None] = asyncio.Queue()
    taken = batches(queue)
    waiting = asyncio.ensure_future(anext(taken))
    await asyncio.sleep(0)
    assert not waiting.done()
    queue.put_nowait("alone")
    assert await asyncio.wait_for(waiting, 1.0) == ["alone"]
    queue.put_nowait(None)
    assert [ready async for ready in taken] == []


async def test_an_end_with_nothing_ready_sends_nothing():
    queue: asyncio.Queue[int | None] = asyncio.Queue()
    queue.put_nowait(None)
    assert [ready async for ready in batches(queue)] == []
