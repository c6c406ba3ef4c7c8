"""Playground records to and from protobuf, and the registry's and decision
memory's answers read into the run's terms: the only module that sees wire
types."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from google.protobuf.timestamp_pb2 import Timestamp

from outrider.v1 import decisions_pb2, playground_pb2, registry_pb2
from outrider.wire import json_bytes, json_object
from services.common import paging
from services.common.errors import InvalidArgument
from services.playground.engine import RunPlan, Step, ToolSpec
from services.playground.rules import SkillChoice, Status
from services.playground.store import RunRow, UnauditedRun
from services.playground.tool_policy import PlaygroundTool, ToolExecutor, ToolKind

_KINDS = frozenset(kind.value for kind in ToolKind)
_EXECUTORS = frozenset(executor.value for executor in ToolExecutor)


# ─── Requests ──────────────────────────────────────────────────────────────


@dataclass(frozen=True, slots=True)
class RunRequest:
    """A run as asked for, trimmed but not yet checked: admission checks it, in its order."""

    agent_id: str
    prompt: str
    # '' when the caller named none.
    skill_id: str


def run_request(request: playground_pb2.RunRequest) -> RunRequest:
    return RunRequest(agent_id=request.agent_id.strip(), prompt=request.prompt, skill_id=request.skill_id.strip())


def run_id(request: playground_pb2.GetRunRequest) -> uuid.UUID:
    try:
        return uuid.UUID(request.id)
    except ValueError:
        raise InvalidArgument(f"id must be a run id (UUID), got {request.id!r}", field="id") from None


def runs_page(request: playground_pb2.ListRunsRequest) -> tuple[int, tuple[datetime, uuid.UUID] | None]:
    """The page size, and the (created_at, id) the page starts after (None for the first page)."""
    limit = paging.page_limit(request.page.limit)
    return limit, paging.decode_cursor(request.page.cursor, paging.instant_and_uuid)


# ─── Other contexts ────────────────────────────────────────────────────────


def agent_request(agent_id: str) -> registry_pb2.GetAgentRequest:
    return registry_pb2.GetAgentRequest(id=agent_id)


# A run's audit row: entity "run" under the run's id, what it ran in one
# field. Its request id is the run's, so a retried append keeps one row.
RUN_AUDIT_ENTITY = "run"
RUN_AUDIT_FIELD = "run"


def run_audit_request(run: UnauditedRun) -> registry_pb2.AppendAuditRequest:
    """The run's agent, skill and model; never its prompt, which may quote a customer."""
    return registry_pb2.AppendAuditRequest(
        request_id=str(run.id),
        entity=RUN_AUDIT_ENTITY,
        entity_id=str(run.id),
        field=RUN_AUDIT_FIELD,
        new_json=json_bytes({"agent_id": run.agent_id, "skill_id": run.skill_id, "model": run.model}),
    )


@dataclass(frozen=True, slots=True)
class AgentTools:
    """What a run needs from the registry's GetAgent answer."""

    agent_id: str
    pinned_model: str
    skills: tuple[SkillChoice, ...]
    catalog: Mapping[str, ToolSpec]


def agent_tools(detail: registry_pb2.AgentDetail) -> AgentTools:
    skills = tuple(
        SkillChoice(id=s.id, title=s.title, description=s.description, tool_names=tuple(s.tool_names))
        for s in detail.skills
    )
    catalog = {tool.name: tool_spec(tool) for tool in detail.tools}
    return AgentTools(agent_id=detail.agent.id, pinned_model=detail.agent.model, skills=skills, catalog=catalog)


def tool_spec(tool: registry_pb2.Tool) -> ToolSpec:
    # A kind or executor this code does not know is read the safe way: as a
    # write (only ever proposed) run by the engine (never reachable here).
    kind = ToolKind(tool.kind) if tool.kind in _KINDS else ToolKind.WRITE
    executor = ToolExecutor(tool.executor) if tool.executor in _EXECUTORS else ToolExecutor.ENGINE
    policy = PlaygroundTool(name=tool.name, kind=kind, executor=executor, base_url_key=tool.base_url_key or None)
    return ToolSpec(
        policy=policy,
        description=tool.description,
        input_schema=json_object(tool.input_schema_json) or {},
        http_path=tool.http_path,
    )


def similar_request(decision_type: str, context_json: bytes, k: int) -> decisions_pb2.FindSimilarRequest:
    return decisions_pb2.FindSimilarRequest(decision_type=decision_type, context_json=context_json, k=k)


def precedents(reply: decisions_pb2.FindSimilarResponse) -> dict[str, Any]:
    """Decision memory's answer as the find_precedents read hands it to the model."""
    summary = reply.summary
    return {
        "precedents": [_precedent(item) for item in reply.items],
        "summary": {
            "successes": summary.successes,
            "failures": summary.failures,
            "success_rate": summary.success_rate if summary.HasField("success_rate") else None,
        },
    }


def _precedent(decision: decisions_pb2.Decision) -> dict[str, Any]:
    # Named non-personal fields only. A past decision's context and reasoning
    # carry rider and customer details in free text and under keys no
    # pattern knows, so they are never selected; redaction is the second
    # guard, not the first.
    return {
        "decision_id": decision.id,
        "action": decision.action,
        "confidence": decision.confidence,
        "similarity": round(decision.similarity, 4),
        "outcome": decision.outcome,
        "decided_at": decision.decided_at.ToDatetime(tzinfo=UTC).isoformat(),
    }


# ─── Runs ──────────────────────────────────────────────────────────────────


def step_to_json(step: Step) -> dict[str, Any]:
    return {
        "turn": step.turn,
        "tool": step.tool,
        "input": dict(step.input),
        "outcome": step.outcome,
        "reason": step.reason,
        "result": step.result,
        "ms": step.ms,
        "error": step.error,
        "proposal": dict(step.proposal) if step.proposal is not None else None,
    }


def step_to_proto(step: Mapping[str, Any]) -> playground_pb2.TraceStep:
    """A step in its stored JSON form to the wire."""
    return playground_pb2.TraceStep(
        turn=step["turn"],
        tool=step["tool"],
        outcome=step["outcome"],
        reason=step.get("reason", ""),
        result=step["result"],
        ms=step["ms"],
        error=step.get("error", ""),
        input_json=json_bytes(step.get("input") or {}),
        proposal_json=json_bytes(step["proposal"]) if step.get("proposal") is not None else b"",
    )


def run_to_proto(row: RunRow) -> playground_pb2.RunTrace:
    created_at = Timestamp()
    created_at.FromDatetime(row.created_at)
    return playground_pb2.RunTrace(
        id=str(row.id),
        agent_id=row.agent_id,
        skill_id=row.skill_id,
        model=row.model,
        prompt=row.prompt,
        turns=row.turns,
        input_tokens=row.input_tokens,
        output_tokens=row.output_tokens,
        total_ms=row.total_ms,
        final_text=row.final_text,
        stop_reason=row.stop_reason,
        error=row.error,
        steps=[step_to_proto(step) for step in row.steps],
        step_count=row.step_count,
        created_by=row.created_by,
        created_by_email=row.created_by_email,
        created_at=created_at,
        redactions=row.redactions,
        status=row.status,
    )


def runs_response(rows: Iterable[RunRow], next_cursor: str) -> playground_pb2.ListRunsResponse:
    return playground_pb2.ListRunsResponse(items=[run_to_proto(row) for row in rows], next_cursor=next_cursor)


def status_to_proto(status: Status) -> playground_pb2.PlaygroundStatus:
    return playground_pb2.PlaygroundStatus(
        configured=status.configured, reason=status.reason, default_model=status.default_model
    )


def started_event(run_id: uuid.UUID, plan: RunPlan) -> playground_pb2.RunEvent:
    return playground_pb2.RunEvent(
        started=playground_pb2.RunStarted(
            id=str(run_id), agent_id=plan.agent_id, skill_id=plan.skill_id, model=plan.model
        )
    )


def step_event(step: Step) -> playground_pb2.RunEvent:
    return playground_pb2.RunEvent(step=step_to_proto(step_to_json(step)))


def done_event(row: RunRow) -> playground_pb2.RunEvent:
    return playground_pb2.RunEvent(done=run_to_proto(row))
