"""Registry messages to the gateway's JSON and back: agents, skills, tools, audit rows, rollouts."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from gateway.codec.common import page_request, timestamp_text
from gateway.contracts.paging import PageRequest
from gateway.contracts.registry import AgentPatch, AuditFilters, RolloutAction, RolloutDraft, SkillDraft, SkillPatch
from gateway.errors import invalid
from outrider.v1 import decisions_pb2, outcomes_pb2, registry_pb2, telemetry_pb2
from outrider.wire import json_bytes, json_value, timestamp

# ─── Out ───────────────────────────────────────────────────────────────────


def agent_json(agent: registry_pb2.Agent) -> dict[str, Any]:
    return {
        "id": agent.id,
        "name": agent.name,
        "class_ref": agent.class_ref,
        "runtime": agent.runtime,
        "purpose": agent.purpose,
        "wake_on": agent.wake_on,
        "writes_to": agent.writes_to,
        "status": agent.status,
        "status_note": agent.status_note,
        "has_autonomy_gate": agent.has_autonomy_gate,
        "autonomous": agent.autonomous,
        "model": agent.model or None,
        "autonomy_guard": agent.autonomy_guard,
        "skill_count": agent.skill_count,
        "tool_count": agent.tool_count,
    }


def agent_page_json(reply: registry_pb2.ListAgentsResponse) -> dict[str, Any]:
    return {"items": [agent_json(a) for a in reply.items], "next_cursor": None}


def agent_detail_json(reply: registry_pb2.AgentDetail) -> dict[str, Any]:
    return {
        **agent_json(reply.agent),
        "skills": [skill_json(s) for s in reply.skills],
        "tools": [tool_json(t) for t in reply.tools],
        "surfaces": [surface_json(s) for s in reply.surfaces],
    }


def _number(value: float, integer: bool) -> int | float:
    return int(value) if integer and value.is_integer() else value


def _spec_json(spec: registry_pb2.ThresholdSpec) -> dict[str, Any]:
    integer = spec.type == "integer"
    shaped: dict[str, Any] = {
        "type": spec.type,
        **{name: _number(getattr(spec, name), integer) for name in ("min", "max", "step", "default")},
    }
    if spec.description:
        shaped["description"] = spec.description
    return shaped


def skill_json(skill: registry_pb2.Skill) -> dict[str, Any]:
    schema = skill.thresholds_schema
    return {
        "id": skill.id,
        "agent_id": skill.agent_id,
        "title": skill.title,
        "category": skill.category,
        "description": skill.description,
        "sample_prompt": skill.sample_prompt,
        "source": skill.source,
        "enabled": skill.enabled,
        "disabled_reason": skill.disabled_reason or None,
        "thresholds": {
            key: _number(value, key in schema and schema[key].type == "integer")
            for key, value in sorted(skill.thresholds.items())
        },
        "thresholds_schema": {key: _spec_json(schema[key]) for key in sorted(schema)},
        "version": skill.version,
        "tool_names": list(skill.tool_names),
        "updated_by": skill.updated_by or None,
        "updated_at": timestamp_text(skill.updated_at),
    }


def skill_page_json(reply: registry_pb2.ListSkillsResponse) -> dict[str, Any]:
    return {"items": [skill_json(s) for s in reply.items], "next_cursor": None}


def tool_json(tool: registry_pb2.Tool) -> dict[str, Any]:
    return {
        "name": tool.name,
        "description": tool.description,
        "kind": tool.kind,
        "target": tool.target,
        "input_schema": json_value(tool.input_schema_json) or {},
        "requires_confirmation": tool.requires_confirmation,
        "requires_confirmation_by_agent": dict(sorted(tool.requires_confirmation_by_agent.items())),
        "owner_agents": list(tool.owner_agents),
        "implemented_at": tool.implemented_at,
        "executor": tool.executor,
        "base_url_key": tool.base_url_key or None,
        "http_path": tool.http_path or None,
    }


def tool_page_json(reply: registry_pb2.ListToolsResponse) -> dict[str, Any]:
    return {"items": [tool_json(t) for t in reply.items], "next_cursor": None}


def surface_json(surface: registry_pb2.Surface) -> dict[str, Any]:
    return {
        "id": surface.id,
        "name": surface.name,
        "path": surface.path or None,
        "description": surface.description,
        "agent_ids": list(surface.agent_ids),
    }


def audit_json(row: registry_pb2.AuditRow) -> dict[str, Any]:
    return {
        "id": row.id,
        "entity": row.entity,
        "entity_id": row.entity_id,
        "field": row.field,
        "old": json_value(row.old_json),
        "new": json_value(row.new_json),
        "changed_by": row.changed_by,
        "changed_by_email": row.changed_by_email,
        "changed_at": timestamp_text(row.changed_at),
    }


# A change as the export's columns hold it: the listing's fields, in its
# order; an old or new value that is an object or a list is its JSON.
AUDIT_EXPORT_COLUMNS = (
    "id",
    "changed_at",
    "changed_by",
    "changed_by_email",
    "entity",
    "entity_id",
    "field",
    "old",
    "new",
)


def audit_page_json(reply: registry_pb2.ListAuditResponse) -> dict[str, Any]:
    return {"items": [audit_json(r) for r in reply.items], "next_cursor": reply.next_cursor or None}


def _evidence_json(evidence: registry_pb2.ArmEvidence) -> dict[str, Any]:
    return {
        "judged": evidence.judged,
        "successes": evidence.successes,
        "failures": evidence.failures,
        "unknown": evidence.unknown,
        "pending": evidence.pending,
        "mean": evidence.mean,
        "low": evidence.low,
        "high": evidence.high,
    }


def _rollout_event_json(event: registry_pb2.RolloutEvent) -> dict[str, Any]:
    return {
        "event": event.event,
        "percent": event.percent,
        "at": timestamp_text(event.at),
        "by": event.by,
        "p_harm": event.p_harm if event.HasField("p_harm") else None,
        "reason": event.reason,
    }


def rollout_json(rollout: registry_pb2.Rollout) -> dict[str, Any]:
    return {
        "id": rollout.id,
        "agent_id": rollout.agent_id,
        "decision_type": rollout.decision_type,
        "change": json_value(rollout.change_json),
        "baseline": json_value(rollout.baseline_json),
        "steps": list(rollout.steps),
        "step": rollout.step,
        "percent": rollout.percent,
        "state": rollout.state,
        "guard": {
            "max_drop": rollout.guard.max_drop,
            "confidence": rollout.guard.confidence,
            "min_judged": rollout.guard.min_judged,
        },
        "arms": {"control": _evidence_json(rollout.control), "candidate": _evidence_json(rollout.candidate)},
        "p_harm": rollout.p_harm if rollout.HasField("p_harm") else None,
        "reason": rollout.reason,
        "created_by": rollout.created_by,
        "created_at": timestamp_text(rollout.created_at),
        "updated_at": timestamp_text(rollout.updated_at),
        "history": [_rollout_event_json(event) for event in rollout.history],
    }


def rollout_page_json(reply: registry_pb2.ListRolloutsResponse) -> dict[str, Any]:
    return {"items": [rollout_json(r) for r in reply.items], "next_cursor": reply.next_cursor or None}


# ─── In ────────────────────────────────────────────────────────────────────


# The order a model's evidence is listed in, strongest claim first.
MODEL_EVIDENCE = ("pin", "decisions", "routing", "telemetry")


def agent_models_json(
    agent: registry_pb2.AgentDetail,
    *,
    decisions: decisions_pb2.ListDecisionsResponse,
    routings: Iterable[outcomes_pb2.Routing],
    insights: telemetry_pb2.Insights,
    allowed_patterns: Iterable[str],
) -> dict[str, Any]:
    """Every model the platform has seen this agent use, and where: its pin,
    its decisions, routing's arms for its skills and decision types, and
    telemetry's model calls. An empty model name is no model and is left out."""
    seen: dict[str, set[str]] = {}

    def note(model: str, where: str) -> None:
        if model:
            seen.setdefault(model, set()).add(where)

    note(agent.agent.model, "pin")
    for decision in decisions.items:
        note(decision.model, "decisions")
    for routing in routings:
        for arm in routing.arms:
            note(arm.model, "routing")
    for usage in insights.models:
        if usage.agent_id == agent.agent.id:
            note(usage.model, "telemetry")
    ordered = sorted(seen.items(), key=lambda item: ("pin" not in item[1], -len(item[1]), item[0]))
    return {
        "agent_id": agent.agent.id,
        "pin": agent.agent.model or None,
        "models": [
            {"model": model, "seen_in": [where for where in MODEL_EVIDENCE if where in sources]}
            for model, sources in ordered
        ],
        "allowed_patterns": list(allowed_patterns),
    }


def agents_request() -> registry_pb2.ListAgentsRequest:
    return registry_pb2.ListAgentsRequest()


def agent_request(agent_id: str) -> registry_pb2.GetAgentRequest:
    return registry_pb2.GetAgentRequest(id=agent_id)


def agent_update(agent_id: str, body: AgentPatch) -> registry_pb2.UpdateAgentRequest:
    message = registry_pb2.UpdateAgentRequest(id=agent_id)
    sent = body.model_fields_set
    if "autonomous" in sent:
        message.autonomous = body.autonomous
    if "model" in sent:
        # null asks for the engine's default model, carried as an empty pin.
        message.model = body.model or ""
    if "autonomy_guard" in sent:
        message.autonomy_guard = body.autonomy_guard
    if "confirm" in sent:
        message.confirm = body.confirm or ""
    return message


def skills_request(agent_id: str) -> registry_pb2.ListSkillsRequest:
    return registry_pb2.ListSkillsRequest(agent_id=agent_id)


def skill_draft(body: SkillDraft) -> registry_pb2.CreateSkillRequest:
    message = registry_pb2.CreateSkillRequest(
        id=body.id,
        agent_id=body.agent_id,
        title=body.title,
        category=body.category or "",
        description=body.description or "",
        sample_prompt=body.sample_prompt or "",
        tool_names=body.tool_names,
    )
    if body.thresholds_schema is not None:
        message.thresholds_schema_json = json_bytes(
            {key: spec.model_dump(exclude_none=True) for key, spec in body.thresholds_schema.items()}
        )
    if body.thresholds is not None:
        message.thresholds_json = json_bytes(body.thresholds)
    if body.enabled is not None:
        message.enabled = body.enabled
    return message


def skill_update(skill_id: str, body: SkillPatch) -> registry_pb2.UpdateSkillRequest:
    message = registry_pb2.UpdateSkillRequest(id=skill_id)
    sent = body.model_fields_set
    if "enabled" in sent:
        message.enabled = body.enabled
    if "thresholds" in sent:
        message.thresholds_json = json_bytes(body.thresholds)
    if "version" in sent:
        message.expected_version = body.version
    return message


def tools_request(kind: str) -> registry_pb2.ListToolsRequest:
    return registry_pb2.ListToolsRequest(kind=kind)


def audit_request(filters: AuditFilters, page: PageRequest) -> registry_pb2.ListAuditRequest:
    """The listing asked for; a bound left out stays an unset field, not the epoch."""
    if (
        filters.changed_from is not None
        and filters.changed_to is not None
        and filters.changed_to <= filters.changed_from
    ):
        raise invalid("to", "must be later than from")
    return registry_pb2.ListAuditRequest(
        entity=filters.entity,
        entity_id=filters.entity_id,
        actor=filters.actor,
        changed_from=timestamp(filters.changed_from),
        changed_to=timestamp(filters.changed_to),
        page=page_request(page),
    )


def rollout_create(body: RolloutDraft) -> registry_pb2.CreateRolloutRequest:
    message = registry_pb2.CreateRolloutRequest(
        agent_id=body.agent_id,
        decision_type=body.decision_type,
        change_json=json_bytes(body.change),
        steps=body.steps,
    )
    if body.guard is not None:
        message.guard_json = json_bytes(body.guard.model_dump(exclude_unset=True))
    return message


def rollouts_request(*, agent_id: str, state: str, page: PageRequest) -> registry_pb2.ListRolloutsRequest:
    return registry_pb2.ListRolloutsRequest(agent_id=agent_id, state=state, page=page_request(page))


def rollout_request(rollout_id: str) -> registry_pb2.GetRolloutRequest:
    return registry_pb2.GetRolloutRequest(id=rollout_id)


def rollout_action(rollout_id: str, body: RolloutAction) -> registry_pb2.RolloutActionRequest:
    return registry_pb2.RolloutActionRequest(id=rollout_id, reason=body.reason or "")


def etag_matches(header: str | None, etag: str) -> bool:
    """If-None-Match against one strong etag: a list, weak forms and * all count."""
    if not header:
        return False
    quoted = f'"{etag}"'
    if header == quoted:
        return True
    for candidate in (listed.strip() for listed in header.split(",")):
        if candidate == "*" or candidate.removeprefix("W/") == quoted:
            return True
    return False
