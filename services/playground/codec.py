"""Playground records to and from protobuf, and the registry's answer read
into the run's terms: the only module that sees wire types."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from google.protobuf.timestamp_pb2 import Timestamp

from outrider.v1 import playground_pb2, registry_pb2
from outrider.wire import json_bytes, json_object
from services.playground.engine import Step, ToolSpec
from services.playground.rules import SkillChoice
from services.playground.store import RunRow
from services.playground.tool_policy import PlaygroundTool, ToolExecutor, ToolKind

_KINDS = frozenset(kind.value for kind in ToolKind)
_EXECUTORS = frozenset(executor.value for executor in ToolExecutor)


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
