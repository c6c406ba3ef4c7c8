"""Playground routes (DESIGN.md §4): run a prompt through a skill's tools, and
read the stored runs.

A console that sends `Accept: text/event-stream` gets the run as Server-Sent
Events: `started`, one `step` per tool call as it happens, then `done` with
the whole trace (or `error` with the usual envelope). Anything else gets the
trace as one JSON answer when the run ends. A console that closes the
stream ends the run; it is stored with its steps and stop reason `cancelled`.
Event streams are capped per person and in total (gateway.event_streams).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Annotated, Any

import grpc
from fastapi import APIRouter, Depends, Path, Request
from fastapi.responses import StreamingResponse

from gateway import event_streams
from gateway.auth import Principal, staff, writer
from gateway.codec import playground as codec
from gateway.contracts.common import STAFF_ERRORS, errors
from gateway.contracts.decisions import UUID_PATTERN
from gateway.contracts.paging import PageQuery
from gateway.contracts.playground import PlaygroundStatus, RunIn, RunPage, RunTrace
from gateway.errors import ApiError, from_rpc_error
from gateway.routing import JsonBodyRoute
from gateway.upstream import stub
from outrider.v1 import playground_pb2_grpc
from services.common.stream_caps import StreamSlot

router = APIRouter(tags=["playground"], route_class=JsonBodyRoute)

EVENT_STREAM = "text/event-stream"
# The kind of event stream a run is, as its cap names it.
RUN_STREAMS = "playground run"
# Time past the run deadline for the playground to store the run's end and answer.
RUN_DEADLINE_MARGIN_S = 15

RunId = Annotated[str, Path(pattern=UUID_PATTERN, description="the run's UUID")]

END_OF_STREAM: object = grpc.aio.EOF  # type: ignore[attr-defined]  # grpc-stubs names its type, not the sentinel


def _playground(request: Request) -> playground_pb2_grpc.PlaygroundStub:
    return stub(request, "playground", playground_pb2_grpc.PlaygroundStub)


async def _stream(call: Any, first: bytes, slot: StreamSlot) -> AsyncIterator[bytes]:
    try:
        yield first
        while (event := await call.read()) is not END_OF_STREAM:
            yield codec.event_sse(event)
    except grpc.aio.AioRpcError as exc:
        # The status line has gone out already; the failure travels as an event.
        yield codec.error_sse(from_rpc_error(exc, "playground"))
    finally:
        # A console that closes the stream cancels the run upstream.
        call.cancel()
        slot.release()


@router.post(
    "/admin/ai/playground/run",
    summary="Run one prompt through a skill's tools, safely",
    response_model=RunTrace,
    responses={
        200: {
            "content": {EVENT_STREAM: {"schema": {"type": "string", "description": "started, step…, done | error"}}},
            "description": "the trace; as Server-Sent Events when the request accepts text/event-stream",
        },
        **errors(401, 403, 404, 422, 429, 503),
    },
)
async def run(body: RunIn, request: Request, person: Principal = Depends(writer)) -> Any:
    message = codec.run_request(body)
    if EVENT_STREAM in request.headers.get("accept", ""):
        slot = event_streams.admit(request, RUN_STREAMS, person)
        try:
            call = _playground(request).RunStream(message)
        except BaseException:
            slot.release()
            raise
        # However the run ends (done, refused, cancelled, its console gone
        # before the body was ever read), its call's end frees the slot.
        call.add_done_callback(lambda _: slot.release())
        # The first event is awaited before answering, so a refused run
        # (503, 422, 429) still gets its own status code, not a 200 stream.
        try:
            first = await call.read()
        except grpc.aio.AioRpcError as exc:
            raise from_rpc_error(exc, "playground") from None
        except asyncio.CancelledError:
            # The console left before the run started: the run ends, as it
            # does when a console closes the stream, and frees its slot.
            call.cancel()
            raise
        if first is END_OF_STREAM:
            raise ApiError(502, "UPSTREAM_CLOSED", "the playground closed the stream before the run started")
        return StreamingResponse(
            _stream(call, codec.event_sse(first), slot), media_type=EVENT_STREAM, headers={"Cache-Control": "no-cache"}
        )
    # The run keeps its own deadline (the same setting the playground reads);
    # the call waits that long and a little more, so the run ends as the
    # playground's `deadline`, stored, rather than as this call's timeout.
    deadline_s = request.app.state.settings.playground_run_deadline_s
    return codec.trace_json(await _playground(request).Run(message, timeout=deadline_s + RUN_DEADLINE_MARGIN_S))


@router.get(
    "/admin/ai/playground/status",
    summary="Whether a run can call the model now, and the default model",
    response_model=PlaygroundStatus,
    responses=STAFF_ERRORS,
)
async def status(request: Request, _: Principal = Depends(staff)) -> dict[str, Any]:
    return codec.status_json(await _playground(request).GetStatus(codec.status_request()))


@router.get(
    "/admin/ai/playground/runs",
    summary="Stored playground runs, newest first",
    response_model=RunPage,
    responses=STAFF_ERRORS,
)
async def list_runs(request: Request, page: PageQuery, _: Principal = Depends(staff)) -> dict[str, Any]:
    return codec.run_page_json(await _playground(request).ListRuns(codec.runs_request(page)))


@router.get(
    "/admin/ai/playground/runs/{run_id}",
    summary="One stored run with every step",
    response_model=RunTrace,
    responses={**STAFF_ERRORS, **errors(404)},
)
async def get_run(request: Request, run_id: RunId, _: Principal = Depends(staff)) -> dict[str, Any]:
    return codec.trace_json(await _playground(request).GetRun(codec.stored_run_request(run_id)))
