"""Playground messages to the gateway's JSON and back: runs, their steps, and their events as Server-Sent Events."""

from __future__ import annotations

import json
from typing import Any

from gateway.codec.common import page_request, timestamp_text
from gateway.contracts.paging import PageRequest
from gateway.contracts.playground import RunIn
from gateway.errors import ApiError
from outrider.v1 import playground_pb2
from outrider.wire import json_value

# ─── Out ───────────────────────────────────────────────────────────────────


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


def run_page_json(reply: playground_pb2.ListRunsResponse) -> dict[str, Any]:
    return {"items": [trace_json(t, with_steps=False) for t in reply.items], "next_cursor": reply.next_cursor or None}


def _sse(name: str, data: dict[str, Any]) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


def event_sse(event: playground_pb2.RunEvent) -> bytes:
    """One event of a run as a Server-Sent Event: `started`, `step` or `done`."""
    kind = event.WhichOneof("event")
    if kind == "step":
        return _sse("step", step_json(event.step))
    if kind == "done":
        return _sse("done", trace_json(event.done))
    started = event.started
    return _sse(
        "started",
        {"id": started.id, "agent_id": started.agent_id, "skill_id": started.skill_id, "model": started.model},
    )


def error_sse(error: ApiError) -> bytes:
    """A failure after the stream began, as its last event, in the usual envelope."""
    return _sse("error", {"error": {"code": error.code, "message": error.message, "details": error.details}})


# ─── In ────────────────────────────────────────────────────────────────────


def run_request(body: RunIn) -> playground_pb2.RunRequest:
    return playground_pb2.RunRequest(agent_id=body.agent_id, skill_id=body.skill_id or "", prompt=body.prompt)


def runs_request(page: PageRequest) -> playground_pb2.ListRunsRequest:
    return playground_pb2.ListRunsRequest(page=page_request(page))


def stored_run_request(run_id: str) -> playground_pb2.GetRunRequest:
    return playground_pb2.GetRunRequest(id=run_id)


def status_request() -> playground_pb2.GetStatusRequest:
    return playground_pb2.GetStatusRequest()


def status_json(status: playground_pb2.PlaygroundStatus) -> dict[str, Any]:
    return {"configured": status.configured, "reason": status.reason, "default_model": status.default_model}
