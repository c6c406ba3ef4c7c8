"""Registry routes: /admin/ai/agents, skills, tools, audit and the engine snapshot.

Bodies are checked here only for shape (an object, a boolean, a list of
names) so they fit the request message; every registry rule is the
service's. Fields the message has no place for travel as `unknown_fields`,
so the service refuses them by name with the rules' own reasons.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Final

import grpc
from fastapi import APIRouter, Body, Depends, FastAPI, Query, Request, Response
from google.protobuf import json_format

from gateway.auth import Principal, internal, staff, writer
from gateway.errors import ApiError
from gateway.upstream import instant, stub
from outrider.v1 import common_pb2, registry_pb2, registry_pb2_grpc

_log = logging.getLogger(__name__)

WATCH_RETRY_MIN_S: Final = 0.2
WATCH_RETRY_MAX_S: Final = 5.0
INT32_MAX: Final = 2**31 - 1


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
        self._task: asyncio.Task[None] | None = None

    def ensure_watching(self, registry: registry_pb2_grpc.RegistryStub) -> None:
        # Started by the first poll, not at start-up: a gateway whose engines
        # never poll opens no stream and logs no reconnects.
        if self._task is None:
            self._task = asyncio.create_task(self._watch(registry), name="gateway.registry-watch")

    async def current(self, registry: registry_pb2_grpc.RegistryStub) -> registry_pb2.Snapshot:
        self.ensure_watching(registry)
        if self.live and self.snapshot is not None:
            return self.snapshot
        held = self.snapshot
        try:
            reply = await registry.GetSnapshot(
                registry_pb2.GetSnapshotRequest(if_none_match=held.etag if held else "")
            )
        except grpc.aio.AioRpcError:
            if held is None:
                raise
            # The last snapshot the registry confirmed is still the best
            # answer: an engine told "unavailable" can only keep its own copy,
            # which is no newer than this one.
            return held
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


router = APIRouter(tags=["registry"], lifespan=_feed_lifespan)


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
        "updated_at": instant(skill.updated_at),
    }


def tool_json(tool: registry_pb2.Tool) -> dict[str, Any]:
    return {
        "name": tool.name,
        "description": tool.description,
        "kind": tool.kind,
        "target": tool.target,
        "input_schema": json_format.MessageToDict(tool.input_schema),
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
        "old": json_format.MessageToDict(row.old) if row.HasField("old") else None,
        "new": json_format.MessageToDict(row.new) if row.HasField("new") else None,
        "changed_by": row.changed_by,
        "changed_by_email": row.changed_by_email,
        "changed_at": instant(row.changed_at),
    }


# ─── Request shapes ────────────────────────────────────────────────────────


def _invalid(field: str, reason: str) -> ApiError:
    return ApiError(422, "INVALID_FIELD", f"{field} {reason}", {field: reason})


def _object(body: Any, field: str = "body") -> dict[str, Any]:
    if not isinstance(body, dict):
        raise _invalid(field, "must be a JSON object")
    return body


def _bool(value: Any, field: str) -> bool:
    if not isinstance(value, bool):
        raise _invalid(field, "must be true or false")
    return value


def _str(value: Any, field: str) -> str:
    if not isinstance(value, str):
        raise _invalid(field, "must be text")
    return value


def _actor(who: Principal) -> common_pb2.Actor:
    return common_pb2.Actor(sub=who.sub, email=who.email)


def skill_update(skill_id: str, body: Any, who: Principal) -> registry_pb2.UpdateSkillRequest:
    message = registry_pb2.UpdateSkillRequest(id=skill_id, actor=_actor(who))
    for key, value in _object(body).items():
        if key == "enabled":
            message.enabled = _bool(value, key)
        elif key == "thresholds":
            message.thresholds.SetInParent()
            message.thresholds.update(_object(value, key))
        elif key == "version":
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= INT32_MAX:
                raise _invalid(key, "must be a positive integer")
            message.expected_version = value
        else:
            message.unknown_fields.append(key)
    return message


def agent_update(agent_id: str, body: Any, who: Principal) -> registry_pb2.UpdateAgentRequest:
    message = registry_pb2.UpdateAgentRequest(id=agent_id, actor=_actor(who))
    for key, value in _object(body).items():
        if key == "autonomous":
            message.autonomous = _bool(value, key)
        elif key == "model":
            # null asks for the engine's default model, carried as an empty pin.
            message.model = "" if value is None else _str(value, key)
        elif key == "confirm":
            message.confirm = "" if value is None else _str(value, key)
        else:
            message.unknown_fields.append(key)
    return message


_DRAFT_TEXT: Final = ("id", "agent_id", "title", "category", "description", "sample_prompt")


def skill_draft(body: Any, who: Principal) -> registry_pb2.CreateSkillRequest:
    message = registry_pb2.CreateSkillRequest(actor=_actor(who))
    for key, value in _object(body).items():
        if key in _DRAFT_TEXT:
            setattr(message, key, "" if value is None else _str(value, key))
        elif key == "tool_names":
            if not isinstance(value, list) or not all(isinstance(name, str) for name in value):
                raise _invalid(key, "must be a list of tool names")
            message.tool_names.extend(value)
        elif key in ("thresholds_schema", "thresholds"):
            target = getattr(message, key)
            target.SetInParent()
            target.update(_object(value, key))
        elif key == "enabled":
            message.enabled = _bool(value, key)
        else:
            message.unknown_fields.append(key)
    return message


def _limit(limit: int) -> int:
    if not 0 <= limit <= INT32_MAX:
        raise _invalid("limit", "must be between 1 and 200")
    return limit


# ─── Routes ────────────────────────────────────────────────────────────────


@router.get("/admin/ai/agents", summary="Every agent with its status badge and skill and tool counts")
async def list_agents(request: Request, _: Principal = Depends(staff)) -> dict[str, Any]:
    reply = await _registry(request).ListAgents(registry_pb2.ListAgentsRequest())
    return {"items": [agent_json(a) for a in reply.items], "next_cursor": None}


@router.get("/admin/ai/agents/{agent_id}", summary="One agent with its skills, their tools and its screens")
async def get_agent(agent_id: str, request: Request, _: Principal = Depends(staff)) -> dict[str, Any]:
    reply = await _registry(request).GetAgent(registry_pb2.GetAgentRequest(id=agent_id))
    return {
        **agent_json(reply.agent),
        "skills": [skill_json(s) for s in reply.skills],
        "tools": [tool_json(t) for t in reply.tools],
        "surfaces": [surface_json(s) for s in reply.surfaces],
    }


@router.patch("/admin/ai/agents/{agent_id}", summary="Set an agent's autonomy or model pin")
async def update_agent(
    agent_id: str, request: Request, body: Any = Body(...), who: Principal = Depends(writer)
) -> dict[str, Any]:
    reply = await _registry(request).UpdateAgent(agent_update(agent_id, body, who))
    return agent_json(reply)


@router.get("/admin/ai/skills", summary="Skills, optionally of one agent")
async def list_skills(
    request: Request, agent: str = Query("", description="only this agent's skills"), _: Principal = Depends(staff)
) -> dict[str, Any]:
    reply = await _registry(request).ListSkills(registry_pb2.ListSkillsRequest(agent_id=agent))
    return {"items": [skill_json(s) for s in reply.items], "next_cursor": None}


@router.post("/admin/ai/skills", status_code=201, summary="A new skill on a console agent, from existing tools")
async def create_skill(request: Request, body: Any = Body(...), who: Principal = Depends(writer)) -> dict[str, Any]:
    reply = await _registry(request).CreateSkill(skill_draft(body, who))
    return skill_json(reply)


@router.patch("/admin/ai/skills/{skill_id}", summary="Switch a skill or tune its thresholds")
async def update_skill(
    skill_id: str, request: Request, body: Any = Body(...), who: Principal = Depends(writer)
) -> dict[str, Any]:
    reply = await _registry(request).UpdateSkill(skill_update(skill_id, body, who))
    return skill_json(reply)


@router.get("/admin/ai/tools", summary="Tools, optionally of one kind")
async def list_tools(
    request: Request, kind: str = Query("", description="read, write, notify or event"), _: Principal = Depends(staff)
) -> dict[str, Any]:
    reply = await _registry(request).ListTools(registry_pb2.ListToolsRequest(kind=kind))
    return {"items": [tool_json(t) for t in reply.items], "next_cursor": None}


@router.get("/admin/ai/audit", summary="Registry change history, newest first")
async def list_audit(
    request: Request,
    entity: str = Query("", description="agent or skill"),
    entity_id: str = Query(""),
    actor: str = Query("", description="only changes by this sub or email"),
    cursor: str = Query(""),
    limit: int = Query(0, description="1 to 200; 50 when left out"),
    _: Principal = Depends(staff),
) -> dict[str, Any]:
    reply = await _registry(request).ListAudit(
        registry_pb2.ListAuditRequest(
            entity=entity, entity_id=entity_id, actor=actor,
            page=common_pb2.PageRequest(cursor=cursor, limit=_limit(limit)),
        )
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


@router.get("/internal/ai/registry", summary="The whole registry snapshot the engine obeys (ETag, If-None-Match)")
async def registry_snapshot(request: Request, _: None = Depends(internal)) -> Response:
    snapshot = await request.app.state.registry_feed.current(_registry(request))
    headers = {"ETag": f'"{snapshot.etag}"', "Cache-Control": "no-cache"}
    if etag_matches(request.headers.get("if-none-match"), snapshot.etag):
        return Response(status_code=304, headers=headers)
    return Response(content=snapshot.document, media_type="application/json", headers=headers)
