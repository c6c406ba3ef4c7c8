"""Registry routes: /admin/ai/agents, skills, tools, audit and the engine snapshot.

Bodies are checked here for shape only (the contracts in
`gateway/contracts/registry.py`, which the OpenAPI document publishes);
every registry rule that depends on the registry's state is the service's.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated, Any, Final, Literal

import grpc
from fastapi import APIRouter, Depends, FastAPI, Path, Query, Request, Response

from gateway.auth import Principal, internal, staff, writer
from gateway.contracts.common import CARRIABLE, STAFF_ERRORS, WRITER_ERRORS, errors
from gateway.contracts.paging import PageQuery
from gateway.contracts.registry import (
    Agent,
    AgentDetail,
    AgentPage,
    AgentPatch,
    AuditPage,
    Skill,
    SkillDraft,
    SkillPage,
    SkillPatch,
    ToolPage,
)
from gateway.routing import JsonBodyRoute
from gateway.upstream import stub, timestamp_text
from outrider.v1 import registry_pb2, registry_pb2_grpc
from outrider.wire import json_bytes, json_value
from services.common.clients import ContextCallError
from services.registry.rules import ToolKind

_log = logging.getLogger(__name__)

WATCH_RETRY_MIN_S: Final = 0.2
WATCH_RETRY_MAX_S: Final = 5.0
# Tells an engine whether the snapshot it got is known current or the last
# copy the registry confirmed before it stopped answering.
FRESHNESS_HEADER: Final = "X-Outrider-Snapshot"
SNAPSHOT_FRESHNESS: Final = {
    "description": "live: the gateway's watch on the registry is open; confirmed: the registry answered this"
    " request; stale: the registry is not answering and this is the last copy it confirmed",
    "schema": {"type": "string", "enum": ["live", "confirmed", "stale"]},
}

AgentIdPath = Annotated[str, Path(min_length=1, max_length=128, pattern=CARRIABLE)]
SkillIdPath = Annotated[str, Path(min_length=1, max_length=128, pattern=CARRIABLE)]


class SnapshotFeed:
    """The gateway's own copy of the registry snapshot, kept current by WatchSnapshot.

    An engine polls the snapshot far more often than the registry changes, so
    an unchanged poll is answered from this copy without any call upstream.
    While the watch is down the copy may be stale, so each poll asks the
    registry directly (GetSnapshot) until the watch is back.
    """

    def __init__(self) -> None:
        self.snapshot: registry_pb2.Snapshot | None = None
        self.live = False
        # How the last answer was known current: "live" (the watch is open),
        # "confirmed" (the registry answered just now) or "stale" (it did not,
        # and this is the last copy it confirmed).
        self.freshness = "stale"
        self._task: asyncio.Task[None] | None = None

    def ensure_watching(self, registry: registry_pb2_grpc.RegistryStub) -> None:
        # Started by the first poll, not at start-up: a gateway whose engines
        # never poll opens no stream and logs no reconnects.
        if self._task is None:
            self._task = asyncio.create_task(self._watch(registry), name="gateway.registry-watch")

    async def current(self, registry: registry_pb2_grpc.RegistryStub) -> registry_pb2.Snapshot:
        self.ensure_watching(registry)
        if self.live and self.snapshot is not None:
            self.freshness = "live"
            return self.snapshot
        held = self.snapshot
        try:
            reply = await registry.GetSnapshot(registry_pb2.GetSnapshotRequest(if_none_match=held.etag if held else ""))
        except ContextCallError:
            if held is None:
                raise
            # The last snapshot the registry confirmed is still the best
            # answer: an engine told "unavailable" can only keep its own copy,
            # which is no newer than this one.
            self.freshness = "stale"
            return held
        self.freshness = "confirmed"
        if reply.not_modified and held is not None:
            return held
        self.snapshot = reply.snapshot
        return reply.snapshot

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None
        self.live = False

    async def _watch(self, registry: registry_pb2_grpc.RegistryStub) -> None:
        delay = WATCH_RETRY_MIN_S
        while True:
            try:
                # Asked without an etag, the registry answers at once with its
                # current snapshot; only then is the copy known to be current,
                # so only then may polls be answered from it.
                call = registry.WatchSnapshot(registry_pb2.WatchSnapshotRequest())
            except grpc.aio.UsageError:
                return  # the channel is closed: the gateway is shutting down
            try:
                async for snapshot in call:
                    self.snapshot = snapshot
                    self.live = True
                    delay = WATCH_RETRY_MIN_S
            except grpc.aio.AioRpcError as error:
                _log.info("registry watch interrupted: %s", error.code().name)
            finally:
                self.live = False
                call.cancel()
            await asyncio.sleep(delay)
            delay = min(delay * 2, WATCH_RETRY_MAX_S)


@asynccontextmanager
async def _feed_lifespan(app: FastAPI) -> AsyncIterator[None]:
    app.state.registry_feed = SnapshotFeed()
    try:
        yield
    finally:
        await app.state.registry_feed.close()


router = APIRouter(tags=["registry"], route_class=JsonBodyRoute, lifespan=_feed_lifespan)


def _registry(request: Request) -> registry_pb2_grpc.RegistryStub:
    return stub(request, "registry", registry_pb2_grpc.RegistryStub)


# ─── JSON shapes ───────────────────────────────────────────────────────────


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
        "skill_count": agent.skill_count,
        "tool_count": agent.tool_count,
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


# ─── Request shapes ────────────────────────────────────────────────────────


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


def agent_update(agent_id: str, body: AgentPatch) -> registry_pb2.UpdateAgentRequest:
    message = registry_pb2.UpdateAgentRequest(id=agent_id)
    sent = body.model_fields_set
    if "autonomous" in sent:
        message.autonomous = body.autonomous
    if "model" in sent:
        # null asks for the engine's default model, carried as an empty pin.
        message.model = body.model or ""
    if "confirm" in sent:
        message.confirm = body.confirm or ""
    return message


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


# ─── Routes ────────────────────────────────────────────────────────────────


@router.get(
    "/admin/ai/agents",
    summary="Every agent with its status badge and skill and tool counts",
    response_model=AgentPage,
    responses=STAFF_ERRORS,
)
async def list_agents(request: Request, _: Principal = Depends(staff)) -> dict[str, Any]:
    reply = await _registry(request).ListAgents(registry_pb2.ListAgentsRequest())
    return {"items": [agent_json(a) for a in reply.items], "next_cursor": None}


@router.get(
    "/admin/ai/agents/{agent_id}",
    summary="One agent with its skills, their tools and its screens",
    response_model=AgentDetail,
    responses=errors(401, 403, 404, 503),
)
async def get_agent(agent_id: AgentIdPath, request: Request, _: Principal = Depends(staff)) -> dict[str, Any]:
    reply = await _registry(request).GetAgent(registry_pb2.GetAgentRequest(id=agent_id))
    return {
        **agent_json(reply.agent),
        "skills": [skill_json(s) for s in reply.skills],
        "tools": [tool_json(t) for t in reply.tools],
        "surfaces": [surface_json(s) for s in reply.surfaces],
    }


@router.patch(
    "/admin/ai/agents/{agent_id}",
    summary="Set an agent's autonomy or model pin",
    response_model=Agent,
    responses=WRITER_ERRORS,
)
async def update_agent(
    agent_id: AgentIdPath, body: AgentPatch, request: Request, _: Principal = Depends(writer)
) -> dict[str, Any]:
    reply = await _registry(request).UpdateAgent(agent_update(agent_id, body))
    return agent_json(reply)


@router.get(
    "/admin/ai/skills",
    summary="Skills, optionally of one agent",
    response_model=SkillPage,
    responses={**STAFF_ERRORS, **errors(404)},
)
async def list_skills(
    request: Request,
    agent: Annotated[str, Query(max_length=128, pattern=CARRIABLE, description="only this agent's skills")] = "",
    _: Principal = Depends(staff),
) -> dict[str, Any]:
    reply = await _registry(request).ListSkills(registry_pb2.ListSkillsRequest(agent_id=agent))
    return {"items": [skill_json(s) for s in reply.items], "next_cursor": None}


@router.post(
    "/admin/ai/skills",
    status_code=201,
    summary="A new skill on a console agent, from existing tools",
    response_model=Skill,
    responses=WRITER_ERRORS,
)
async def create_skill(body: SkillDraft, request: Request, _: Principal = Depends(writer)) -> dict[str, Any]:
    reply = await _registry(request).CreateSkill(skill_draft(body))
    return skill_json(reply)


@router.patch(
    "/admin/ai/skills/{skill_id}",
    summary="Switch a skill or tune its thresholds",
    response_model=Skill,
    responses=WRITER_ERRORS,
)
async def update_skill(
    skill_id: SkillIdPath, body: SkillPatch, request: Request, _: Principal = Depends(writer)
) -> dict[str, Any]:
    reply = await _registry(request).UpdateSkill(skill_update(skill_id, body))
    return skill_json(reply)


@router.get("/admin/ai/tools", summary="Tools, optionally of one kind", response_model=ToolPage, responses=STAFF_ERRORS)
async def list_tools(
    request: Request,
    kind: Annotated[ToolKind | None, Query(description="only tools of this kind")] = None,
    _: Principal = Depends(staff),
) -> dict[str, Any]:
    reply = await _registry(request).ListTools(registry_pb2.ListToolsRequest(kind=kind.value if kind else ""))
    return {"items": [tool_json(t) for t in reply.items], "next_cursor": None}


@router.get(
    "/admin/ai/audit", summary="Registry change history, newest first", response_model=AuditPage, responses=STAFF_ERRORS
)
async def list_audit(
    request: Request,
    page: PageQuery,
    entity: Annotated[Literal["agent", "skill"] | None, Query(description="only changes to this kind of thing")] = None,
    entity_id: Annotated[
        str, Query(max_length=128, pattern=CARRIABLE, description="only changes to this agent or skill")
    ] = "",
    actor: Annotated[
        str, Query(max_length=256, pattern=CARRIABLE, description="only changes by this person (their sub or email)")
    ] = "",
    _: Principal = Depends(staff),
) -> dict[str, Any]:
    reply = await _registry(request).ListAudit(
        registry_pb2.ListAuditRequest(entity=entity or "", entity_id=entity_id, actor=actor, page=page.proto())
    )
    return {"items": [audit_json(r) for r in reply.items], "next_cursor": reply.next_cursor or None}


def etag_matches(header: str | None, etag: str) -> bool:
    """If-None-Match against one strong etag: a list, weak forms and * all count."""
    if not header:
        return False
    quoted = f'"{etag}"'
    if header == quoted:
        return True
    for candidate in header.split(","):
        candidate = candidate.strip()
        if candidate == "*" or candidate.removeprefix("W/") == quoted:
            return True
    return False


@router.get(
    "/internal/ai/registry",
    summary="The whole registry snapshot the engine obeys (ETag, If-None-Match)",
    response_class=Response,
    responses={
        200: {
            "description": "the snapshot document",
            "content": {"application/json": {"schema": {"type": "object"}}},
            "headers": {"ETag": {"schema": {"type": "string"}}, FRESHNESS_HEADER: SNAPSHOT_FRESHNESS},
        },
        304: {
            "description": "the snapshot is unchanged since the ETag sent",
            "headers": {"ETag": {"schema": {"type": "string"}}, FRESHNESS_HEADER: SNAPSHOT_FRESHNESS},
        },
        **errors(401, 503),
    },
)
async def registry_snapshot(request: Request, _: None = Depends(internal)) -> Response:
    feed: SnapshotFeed = request.app.state.registry_feed
    snapshot = await feed.current(_registry(request))
    headers = {"ETag": f'"{snapshot.etag}"', "Cache-Control": "no-cache", FRESHNESS_HEADER: feed.freshness}
    if etag_matches(request.headers.get("if-none-match"), snapshot.etag):
        return Response(status_code=304, headers=headers)
    return Response(content=snapshot.document, media_type="application/json", headers=headers)
