"""Playground routes (DESIGN.md §4): run a prompt through a skill's tools, and
read the stored runs.

A console that sends `Accept: text/event-stream` gets the run as Server-Sent
Events: `started`, one `step` per tool call as it happens, then `done` with
the whole trace (or `error` with the usual envelope). Anything else gets the
trace as one JSON answer when the run ends. A console that closes the
stream ends the run; it is stored with its steps and stop reason `cancelled`.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Annotated, Any

import grpc
from fastapi import APIRouter, Depends, Path, Request
from fastapi.responses import StreamingResponse

from gateway.auth import Principal, staff, writer
from gateway.contracts.common import STAFF_ERRORS, errors
from gateway.contracts.decisions import UUID_PATTERN
from gateway.contracts.paging import PageQuery
from gateway.contracts.playground import RunIn, RunPage, RunTrace
from gateway.errors import ApiError, from_rpc_error
from gateway.routing import JsonBodyRoute
from gateway.upstream import stub, timestamp_text
from outrider.v1 import playground_pb2, playground_pb2_grpc
from outrider.wire import json_value

router = APIRouter(tags=["playground"], route_class=JsonBodyRoute)

EVENT_STREAM = "text/event-stream"
# Time past the run deadline for the playground to store the run's end and answer.
RUN_DEADLINE_MARGIN_S = 15

RunId = Annotated[str, Path(pattern=UUID_PATTERN, description="the run's UUID")]


def _playground(request: Request) -> playground_pb2_grpc.PlaygroundStub:
    return stub(request, "playground", playground_pb2_grpc.PlaygroundStub)


def step_json(step: playground_pb2.TraceStep) -> dict[str, Any]:
    return {
        "turn": step.turn,
        "tool": step.tool,
        "input": json_value(step.input_json) or {},
        "outcome": step.outcome,
        "reason": step.reason,
        "result": step.result,
        "error": step.error or None,
        "proposal": json_value(step.proposal_json),
        "ms": step.ms,
    }


def trace_json(trace: playground_pb2.RunTrace, *, with_steps: bool = True) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": trace.id,
        "agent_id": trace.agent_id,
        "skill_id": trace.skill_id,
        "model": trace.model,
        "prompt": trace.prompt,
        "turns": trace.turns,
        "input_tokens": trace.input_tokens,
        "output_tokens": trace.output_tokens,
        "total_ms": trace.total_ms,
        "final_text": trace.final_text,
        "status": trace.status,
        "stop_reason": trace.stop_reason,
        "error": trace.error or None,
        "step_count": trace.step_count,
        "created_by": trace.created_by,
        "created_by_email": trace.created_by_email,
        "created_at": timestamp_text(trace.created_at),
        # Counts per kind of the personal values replaced in this run.
        "redactions": dict(sorted(trace.redactions.items())),
    }
    if with_steps:
        body["steps"] = [step_json(step) for step in trace.steps]
    return body


def _event(name: str, data: dict[str, Any]) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


def _event_json(event: playground_pb2.RunEvent) -> tuple[str, dict[str, Any]]:
    kind = event.WhichOneof("event")
    if kind == "step":
        return "step", step_json(event.step)
    if kind == "done":
        return "done", trace_json(event.done)
    started = event.started
    return "started", {
        "id": started.id,
        "agent_id": started.agent_id,
        "skill_id": started.skill_id,
        "model": started.model,
    }


async def _stream(call: Any, first: playground_pb2.RunEvent) -> AsyncIterator[bytes]:
    try:
        yield _event(*_event_json(first))
        while (event := await call.read()) is not grpc.aio.EOF:
            yield _event(*_event_json(event))
    except grpc.aio.AioRpcError as exc:
        # The status line has gone out already; the failure travels as an event.
        error = from_rpc_error(exc, "playground")
        yield _event("error", {"error": {"code": error.code, "message": error.message, "details": error.details}})
    finally:
        # A console that closes the stream cancels the run upstream.
        call.cancel()


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
async def run(body: RunIn, request: Request, _: Principal = Depends(writer)) -> Any:
    message = playground_pb2.RunRequest(agent_id=body.agent_id, skill_id=body.skill_id or "", prompt=body.prompt)
    if EVENT_STREAM in request.headers.get("accept", ""):
        call = _playground(request).RunStream(message)
        # The first event is awaited before answering, so a refused run
        # (503, 422, 429) still gets its own status code, not a 200 stream.
        try:
            first = await call.read()
        except grpc.aio.AioRpcError as exc:
            raise from_rpc_error(exc, "playground") from None
        if first is grpc.aio.EOF:
            raise ApiError(502, "UPSTREAM_CLOSED", "the playground closed the stream before the run started")
        return StreamingResponse(_stream(call, first), media_type=EVENT_STREAM, headers={"Cache-Control": "no-cache"})
    # The run keeps its own deadline (the same setting the playground reads);
    # the call waits that long and a little more, so the run ends as the
    # playground's `deadline`, stored, rather than as this call's timeout.
    deadline_s = request.app.state.settings.playground_run_deadline_s
    return trace_json(await _playground(request).Run(message, timeout=deadline_s + RUN_DEADLINE_MARGIN_S))


@router.get(
    "/admin/ai/playground/runs",
    summary="Stored playground runs, newest first",
    response_model=RunPage,
    responses=STAFF_ERRORS,
)
async def list_runs(request: Request, page: PageQuery, _: Principal = Depends(staff)) -> dict[str, Any]:
    reply = await _playground(request).ListRuns(playground_pb2.ListRunsRequest(page=page.proto()))
    return {"items": [trace_json(t, with_steps=False) for t in reply.items], "next_cursor": reply.next_cursor or None}


@router.get(
    "/admin/ai/playground/runs/{run_id}",
    summary="One stored run with every step",
    response_model=RunTrace,
    responses={**STAFF_ERRORS, **errors(404)},
)
async def get_run(request: Request, run_id: RunId, _: Principal = Depends(staff)) -> dict[str, Any]:
    return trace_json(await _playground(request).GetRun(playground_pb2.GetRunRequest(id=run_id)))
