"""The playground's gRPC servicer: decode, hand the run to runs.py, encode.

RunStream sends the run's steps as they are stored, and stops the run when
its caller hangs up: nobody would read the rest, and every further turn is
paid for.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any, TypeAlias

import grpc

from outrider.v1 import playground_pb2, playground_pb2_grpc
from services.playground import codec
from services.playground.engine import Step
from services.playground.runs import Runs

# What every method is handed; none of them reads it.
Context: TypeAlias = grpc.aio.ServicerContext[Any, Any]


class PlaygroundService(playground_pb2_grpc.PlaygroundServicer):
    def __init__(self, runs: Runs) -> None:
        self._runs = runs

    async def Run(self, request: playground_pb2.RunRequest, context: Context) -> playground_pb2.RunTrace:
        admitted = await self._runs.admit(codec.run_request(request))
        return codec.run_to_proto(await self._runs.run(admitted, on_step=None))

    async def RunStream(
        self, request: playground_pb2.RunRequest, context: Context
    ) -> AsyncIterator[playground_pb2.RunEvent]:
        admitted = await self._runs.admit(codec.run_request(request))
        steps: asyncio.Queue[Step | None] = asyncio.Queue()
        task = asyncio.create_task(self._runs.run(admitted, on_step=steps.put))
        task.add_done_callback(lambda _: steps.put_nowait(None))
        try:
            yield codec.started_event(admitted.id, admitted.plan)
            while (step := await steps.get()) is not None:
                yield codec.step_event(step)
            yield codec.done_event(await task)
        finally:
            if not task.done():
                task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            # Cancelled before the run's task began: it never got to write its own end.
            await self._runs.end_abandoned(admitted)

    async def ListRuns(
        self, request: playground_pb2.ListRunsRequest, context: Context
    ) -> playground_pb2.ListRunsResponse:
        limit, after = codec.runs_page(request)
        page, cursor = await self._runs.page(limit=limit, after=after)
        return codec.runs_response(page, cursor)

    async def GetRun(self, request: playground_pb2.GetRunRequest, context: Context) -> playground_pb2.RunTrace:
        return codec.run_to_proto(await self._runs.stored(codec.run_id(request)))

    async def GetStatus(
        self, request: playground_pb2.GetStatusRequest, context: Context
    ) -> playground_pb2.PlaygroundStatus:
        return codec.status_to_proto(self._runs.status())
