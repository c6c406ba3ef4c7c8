"""Registry records to and from protobuf: the only module that sees wire types."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any, Final

from google.protobuf.timestamp_pb2 import Timestamp

from outrider.v1 import registry_pb2
from outrider.wire import MalformedJson, json_bytes, json_value, timestamp
from services.common import callers, guards, paging
from services.common.errors import InvalidArgument, PermissionDenied
from services.registry import rules
from services.registry.inventory import Surface
from services.registry.reads import AgentDetail, ConfirmedTool
from services.registry.rollouts import rules as rollout_rules
from services.registry.rollouts.changes import RolloutDraft
from services.registry.rollouts.store import RolloutRow
from services.registry.rules import AppendedChange, Tool
from services.registry.snapshot import EncodedSnapshot
from services.registry.store import Actor, AgentRow, AuditRow, SkillRow

# ─── Out ───────────────────────────────────────────────────────────────────


def agent_to_proto(row: AgentRow) -> registry_pb2.Agent:
    agent = row.agent
    return registry_pb2.Agent(
        id=agent.id,
        name=agent.name,
        class_ref=agent.class_ref,
        runtime=agent.runtime.value,
        purpose=agent.purpose,
        wake_on=agent.wake_on,
        status=agent.status.value,
        status_note=agent.status_note,
        writes_to=agent.writes_to,
        has_autonomy_gate=agent.has_autonomy_gate,
        autonomous=agent.autonomous,
        model=agent.model or "",
        autonomy_guard=agent.autonomy_guard,
        skill_count=row.skill_count,
        tool_count=row.tool_count,
    )


def skill_to_proto(row: SkillRow) -> registry_pb2.Skill:
    skill = row.skill
    updated_at = Timestamp()
    updated_at.FromDatetime(row.updated_at)
    return registry_pb2.Skill(
        id=skill.id,
        agent_id=skill.agent_id,
        title=skill.title,
        category=skill.category,
        description=skill.description,
        sample_prompt=skill.sample_prompt,
        source=skill.source.value,
        enabled=skill.enabled,
        disabled_reason=skill.disabled_reason or "",
        thresholds={key: float(value) for key, value in skill.thresholds.items()},
        thresholds_schema={key: _spec(spec) for key, spec in skill.thresholds_schema.items()},
        version=skill.version,
        tool_names=list(skill.tool_names),
        updated_by=row.updated_by,
        updated_at=updated_at,
    )


def _spec(spec: Mapping[str, Any]) -> registry_pb2.ThresholdSpec:
    return registry_pb2.ThresholdSpec(
        type=spec["type"],
        min=spec["min"],
        max=spec["max"],
        step=spec["step"],
        default=spec["default"],
        description=spec.get("description", ""),
    )


def tool_to_proto(tool: Tool, *, requires_confirmation: bool, by_agent: Mapping[str, bool]) -> registry_pb2.Tool:
    return registry_pb2.Tool(
        name=tool.name,
        description=tool.description,
        kind=tool.kind.value,
        target=tool.target,
        input_schema_json=json_bytes(dict(tool.input_schema)),
        requires_confirmation=requires_confirmation,
        implemented_at=tool.implemented_at,
        executor=tool.executor.value,
        owner_agents=list(tool.owner_agents),
        requires_confirmation_by_agent=dict(by_agent),
        base_url_key=tool.base_url_key or "",
        http_path=tool.http_path or "",
    )


def surface_to_proto(surface: Surface) -> registry_pb2.Surface:
    return registry_pb2.Surface(
        id=surface.id,
        name=surface.name,
        path=surface.path or "",
        description=surface.description,
        agent_ids=list(surface.agent_ids),
    )


def audit_to_proto(row: AuditRow) -> registry_pb2.AuditRow:
    changed_at = Timestamp()
    changed_at.FromDatetime(row.changed_at)
    return registry_pb2.AuditRow(
        id=row.id,
        entity=row.entity,
        entity_id=row.entity_id,
        field=row.field,
        old_json=json_bytes(row.old),
        new_json=json_bytes(row.new),
        changed_by=row.changed_by,
        changed_by_email=row.changed_by_email,
        changed_at=changed_at,
    )


def agents_response(rows: Iterable[AgentRow]) -> registry_pb2.ListAgentsResponse:
    return registry_pb2.ListAgentsResponse(items=[agent_to_proto(row) for row in rows])


def agent_detail_to_proto(detail: AgentDetail) -> registry_pb2.AgentDetail:
    return registry_pb2.AgentDetail(
        agent=agent_to_proto(detail.agent),
        skills=[skill_to_proto(skill) for skill in detail.skills],
        tools=[confirmed_tool_to_proto(tool) for tool in detail.tools],
        surfaces=[surface_to_proto(surface) for surface in detail.surfaces],
    )


def skills_response(rows: Iterable[SkillRow]) -> registry_pb2.ListSkillsResponse:
    return registry_pb2.ListSkillsResponse(items=[skill_to_proto(row) for row in rows])


def confirmed_tool_to_proto(confirmed: ConfirmedTool) -> registry_pb2.Tool:
    return tool_to_proto(
        confirmed.tool, requires_confirmation=confirmed.requires_confirmation, by_agent=confirmed.by_agent
    )


def tools_response(tools: Iterable[ConfirmedTool]) -> registry_pb2.ListToolsResponse:
    return registry_pb2.ListToolsResponse(items=[confirmed_tool_to_proto(tool) for tool in tools])


def audit_response(rows: Iterable[AuditRow], next_cursor: str) -> registry_pb2.ListAuditResponse:
    return registry_pb2.ListAuditResponse(items=[audit_to_proto(row) for row in rows], next_cursor=next_cursor)


def snapshot_to_proto(encoded: EncodedSnapshot) -> registry_pb2.Snapshot:
    return registry_pb2.Snapshot(etag=encoded.etag, document=encoded.document)


def snapshot_reply(encoded: EncodedSnapshot) -> registry_pb2.GetSnapshotResponse:
    return registry_pb2.GetSnapshotResponse(snapshot=snapshot_to_proto(encoded))


NOT_MODIFIED: Final = registry_pb2.GetSnapshotResponse(not_modified=True)


# ─── In ────────────────────────────────────────────────────────────────────


def watched_etag(request: registry_pb2.WatchSnapshotRequest) -> str:
    """The etag of the watcher's copy: the snapshot it need not be sent again ('' for none)."""
    return request.if_none_match


def actor() -> Actor:
    """The person behind a write: the verified caller, never a request field.

    A write reaches the registry only with the service key acting for a
    role-1 person (the WRITE access of server.ACCESS), so one is always here.
    """
    person = callers.principal()
    if person is None:
        raise PermissionDenied("a registry change must be made on behalf of a signed-in person")
    return Actor(sub=person.sub, email=person.email)


def agent_writer() -> Actor | None:
    """The person behind an agent change, or None when the platform itself
    makes it (the autonomy guard: the service key acting for nobody).

    An engine named in a sealed envelope is not the platform: it could turn
    another agent's autonomy off on evidence it never had.
    """
    if callers.principal() is not None:
        return actor()
    if callers.engine_name() is not None:
        raise PermissionDenied("an engine may not change an agent", code="GUARD_DEMOTES_ONLY")
    return None


def requested_agent(request: registry_pb2.GetAgentRequest) -> str:
    return request.id


def skills_agent(request: registry_pb2.ListSkillsRequest) -> str | None:
    """The agent whose skills are asked for; None (unset) for every skill."""
    return request.agent_id or None


def tool_kind(request: registry_pb2.ListToolsRequest) -> str | None:
    """The kind of tool asked for; None (unset) for every kind."""
    return request.kind or None


@dataclass(frozen=True, slots=True)
class AuditFilter:
    """What an audit listing is narrowed to; None is no filter."""

    entity: str | None
    entity_id: str | None
    actor: str | None
    changed_from: datetime | None = None
    changed_to: datetime | None = None


def audit_filter(request: registry_pb2.ListAuditRequest) -> AuditFilter:
    changed_from = _instant(request.changed_from, request.HasField("changed_from"), "changed_from")
    changed_to = _instant(request.changed_to, request.HasField("changed_to"), "changed_to")
    rules.check_audit_span(changed_from, changed_to)
    return AuditFilter(
        entity=request.entity or None,
        entity_id=request.entity_id or None,
        actor=request.actor or None,
        changed_from=changed_from,
        changed_to=changed_to,
    )


def _instant(stamp: Timestamp, present: bool, field: str) -> datetime | None:
    """A listing bound, held to DESIGN §3's bounds; unset (or the epoch itself) is no bound.

    A bound may lie ahead of now: "changes until tomorrow" is a fair question.
    """
    if not present or (stamp.seconds == 0 and stamp.nanos == 0):
        return None
    return guards.epoch_instant(field, stamp.seconds, stamp.nanos, now=datetime.now(UTC))


def audit_page(request: registry_pb2.ListAuditRequest) -> tuple[int, int | None]:
    """The page size, and the audit row id the page starts below (None for the newest)."""
    limit = paging.page_limit(request.page.limit)
    return limit, paging.decode_cursor(request.page.cursor, audit_position)


def appended_change(request: registry_pb2.AppendAuditRequest) -> AppendedChange:
    return rules.appended_change(
        request_id=request.request_id,
        entity=request.entity,
        entity_id=request.entity_id,
        field=request.field,
        old=_json(request.old_json, "old_json"),
        new=_json(request.new_json, "new_json"),
    )


@dataclass(frozen=True, slots=True)
class SkillEdit:
    skill_id: str
    patch: dict[str, Any]


def skill_edit(request: registry_pb2.UpdateSkillRequest) -> SkillEdit:
    return SkillEdit(skill_id=request.id, patch=skill_patch(request))


@dataclass(frozen=True, slots=True)
class AgentEdit:
    agent_id: str
    patch: dict[str, Any]
    # The agent id typed to switch autonomy on; None when not sent.
    confirm: str | None


def agent_edit(request: registry_pb2.UpdateAgentRequest) -> AgentEdit:
    return AgentEdit(agent_id=request.id, patch=agent_patch(request), confirm=request.confirm or None)


def skill_patch(request: registry_pb2.UpdateSkillRequest) -> dict[str, Any]:
    """The patch exactly as sent: only the fields present, unknown ones included for the rules to name."""
    patch: dict[str, Any] = dict.fromkeys(request.unknown_fields)
    if request.HasField("enabled"):
        patch["enabled"] = request.enabled
    if request.thresholds_json:
        patch["thresholds"] = _json(request.thresholds_json, "thresholds")
    if request.HasField("expected_version"):
        patch["version"] = request.expected_version
    return patch


def agent_patch(request: registry_pb2.UpdateAgentRequest) -> dict[str, Any]:
    patch: dict[str, Any] = dict.fromkeys(request.unknown_fields)
    if request.HasField("autonomous"):
        patch["autonomous"] = request.autonomous
    if request.HasField("model"):
        patch["model"] = request.model
    if request.HasField("autonomy_guard"):
        patch["autonomy_guard"] = request.autonomy_guard
    return patch


def skill_draft(request: registry_pb2.CreateSkillRequest) -> dict[str, Any]:
    """A new skill as drafted; an empty text field counts as not sent, so the rules say "required"."""
    draft: dict[str, Any] = dict.fromkeys(request.unknown_fields)
    for name in ("id", "agent_id", "title", "category", "description", "sample_prompt"):
        value = getattr(request, name)
        if value:
            draft[name] = value
    draft["tool_names"] = list(request.tool_names)
    if request.thresholds_schema_json:
        draft["thresholds_schema"] = _json(request.thresholds_schema_json, "thresholds_schema")
    if request.thresholds_json:
        draft["thresholds"] = _json(request.thresholds_json, "thresholds")
    if request.HasField("enabled"):
        draft["enabled"] = request.enabled
    return draft


def _json(data: bytes, field: str) -> Any:
    # Any JSON value: the rules name a wrong type themselves ("must be an
    # object"). Its text and numbers are guarded here, each by its path: it
    # is stored as jsonb, which holds no lone surrogate, and a rule does
    # float arithmetic on its numbers, which a 4,000-digit integer overflows.
    try:
        value = json_value(data)
    except MalformedJson as error:
        raise InvalidArgument(f"{field}: {error}", field=field) from None
    guards.texts_in(field, value)
    guards.numbers_in(field, value)
    return value


def audit_position(parts: list[str]) -> int:
    """The audit row id an audit cursor stands for."""
    (row_id,) = parts
    value = int(row_id)
    if value < 1:
        raise ValueError("audit row ids start at 1")
    return value


# ─── Rollouts ──────────────────────────────────────────────────────────────


def _evidence_to_proto(evidence: rollout_rules.ArmEvidence) -> registry_pb2.ArmEvidence:
    return registry_pb2.ArmEvidence(**asdict(evidence))


def _event_to_proto(event: rollout_rules.RolloutEvent) -> registry_pb2.RolloutEvent:
    return registry_pb2.RolloutEvent(
        event=event.event,
        percent=event.percent,
        at=timestamp(event.at),
        by=event.by,
        p_harm=event.p_harm,
        reason=event.reason,
    )


def rollout_to_proto(row: RolloutRow) -> registry_pb2.Rollout:
    rollout = row.rollout
    return registry_pb2.Rollout(
        id=rollout.id,
        agent_id=rollout.agent_id,
        decision_type=rollout.decision_type,
        change_json=json_bytes(dict(rollout.change)),
        baseline_json=json_bytes(dict(rollout.baseline)),
        steps=list(rollout.steps),
        step=rollout.step,
        percent=rollout.percent,
        state=rollout.state.value,
        guard=registry_pb2.RolloutGuard(**asdict(rollout.guard)),
        control=_evidence_to_proto(rollout.control),
        candidate=_evidence_to_proto(rollout.candidate),
        p_harm=rollout.p_harm,
        reason=rollout.reason,
        created_by=row.created_by,
        created_at=timestamp(row.created_at),
        updated_at=timestamp(row.updated_at),
        history=[_event_to_proto(event) for event in row.history],
    )


def rollouts_response(rows: Iterable[RolloutRow], next_cursor: str) -> registry_pb2.ListRolloutsResponse:
    return registry_pb2.ListRolloutsResponse(items=[rollout_to_proto(row) for row in rows], next_cursor=next_cursor)


def rollout_draft(request: registry_pb2.CreateRolloutRequest) -> RolloutDraft:
    """A rollout as requested; an empty change is a change not sent, which the rules name."""
    change = _json(request.change_json, "change") if request.change_json else None
    guard = _json(request.guard_json, "guard") if request.guard_json else None
    return RolloutDraft(
        agent_id=request.agent_id,
        decision_type=request.decision_type,
        change=change,
        steps=list(request.steps),
        guard=guard,
        unknown=list(request.unknown_fields),
    )


@dataclass(frozen=True, slots=True)
class RolloutFilter:
    """What a rollout listing is narrowed to; None is no filter."""

    agent_id: str | None
    state: rollout_rules.RolloutState | None
    limit: int
    after: tuple[datetime, uuid.UUID] | None


def rollout_filter(request: registry_pb2.ListRolloutsRequest) -> RolloutFilter:
    state = None
    if request.state:
        try:
            state = rollout_rules.RolloutState(request.state)
        except ValueError:
            raise InvalidArgument(
                f"unknown rollout state {request.state!r}",
                field="state",
                details={"state": f"must be one of {', '.join(rollout_rules.RolloutState)}"},
            ) from None
    return RolloutFilter(
        agent_id=request.agent_id or None,
        state=state,
        limit=paging.page_limit(request.page.limit),
        after=paging.decode_cursor(request.page.cursor, paging.instant_and_uuid),
    )


def rollout_position(row: RolloutRow) -> tuple[object, ...]:
    return (row.created_at, row.rollout.id)


def _evidence(message: registry_pb2.ArmEvidence) -> rollout_rules.ArmEvidence:
    return rollout_rules.ArmEvidence(
        judged=message.judged,
        successes=message.successes,
        failures=message.failures,
        unknown=message.unknown,
        pending=message.pending,
        mean=message.mean,
        low=message.low,
        high=message.high,
    )


def judgement(request: registry_pb2.JudgeRolloutRequest) -> rollout_rules.Judgement:
    """The guard's verdict, from the platform itself and no one else (rules.check_guard_caller)."""
    rollout_rules.check_guard_caller(person=callers.principal() is not None, engine=callers.engine_name())
    return rollout_rules.Judgement(
        verdict=rollout_rules.parse_verdict(request.verdict),
        step=request.step,
        control=_evidence(request.control),
        candidate=_evidence(request.candidate),
        p_harm=request.p_harm,
        reason=request.reason,
    )
