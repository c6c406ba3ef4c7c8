"""The registry's gRPC servicer: parse, call the store or a rule, encode.

Every write runs in one transaction: lock the row, plan the change with the
pure rules, write it, write one audit row per field, and queue the change
notification. Any failure rolls all of it back, so a change never exists
without its audit rows and watchers never hear of a change that did not
commit.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import grpc
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from outrider.v1 import registry_pb2, registry_pb2_grpc
from services.common import paging
from services.common.settings import Settings
from services.registry import codec, rules, store
from services.registry.live import SnapshotHub
from services.registry.rules import FieldChange, InvalidRegistryChange, RegistryConflict, RegistryNotFound, ToolKind
from services.registry.snapshot import EncodedSnapshot, confirmation_by_agent, tool_requires_confirmation

AUDIT_ENTITIES = ("agent", "skill")


class RegistryService(registry_pb2_grpc.RegistryServicer):
    def __init__(self, engine: AsyncEngine, settings: Settings, hub: SnapshotHub) -> None:
        self._engine = engine
        self._settings = settings
        self._hub = hub
        # The full reply for the current etag, built once per snapshot rather
        # than once per poll.
        self._reply: tuple[str, registry_pb2.GetSnapshotResponse] = ("", codec.NOT_MODIFIED)

    # ─── Reads ─────────────────────────────────────────────────────────────

    async def ListAgents(
        self, request: registry_pb2.ListAgentsRequest, context: grpc.aio.ServicerContext
    ) -> registry_pb2.ListAgentsResponse:
        async with self._engine.connect() as conn:
            rows = await store.list_agents(conn)
        return registry_pb2.ListAgentsResponse(items=[codec.agent_to_proto(row) for row in rows])

    async def GetAgent(
        self, request: registry_pb2.GetAgentRequest, context: grpc.aio.ServicerContext
    ) -> registry_pb2.AgentDetail:
        async with self._engine.connect() as conn:
            row = await store.get_agent_row(conn, agent_id=request.id)
            if row is None:
                raise _agent_missing(request.id, "id")
            skills = await store.list_skills(conn, agent_id=request.id)
            names = sorted({name for skill in skills for name in skill.skill.tool_names})
            tools = await _tools_with_confirmation(conn, await store.list_tools(conn, names=names))
            surfaces = await store.list_surfaces(conn, agent_id=request.id)
        return registry_pb2.AgentDetail(
            agent=codec.agent_to_proto(row),
            skills=[codec.skill_to_proto(skill) for skill in skills],
            tools=tools,
            surfaces=[codec.surface_to_proto(surface) for surface in surfaces],
        )

    async def ListSkills(
        self, request: registry_pb2.ListSkillsRequest, context: grpc.aio.ServicerContext
    ) -> registry_pb2.ListSkillsResponse:
        agent_id = request.agent_id or None
        async with self._engine.connect() as conn:
            if agent_id is not None and await store.get_agent(conn, agent_id=agent_id) is None:
                # An unknown agent is a typo, not an agent without skills;
                # an empty list would hide it.
                raise _agent_missing(agent_id, "agent")
            rows = await store.list_skills(conn, agent_id=agent_id)
        return registry_pb2.ListSkillsResponse(items=[codec.skill_to_proto(row) for row in rows])

    async def ListTools(
        self, request: registry_pb2.ListToolsRequest, context: grpc.aio.ServicerContext
    ) -> registry_pb2.ListToolsResponse:
        kind = request.kind or None
        if kind is not None and kind not in tuple(ToolKind):
            raise InvalidRegistryChange(
                f"unknown tool kind {kind!r}",
                code="INVALID_FIELD",
                details={"kind": f"must be one of {', '.join(ToolKind)}"},
            )
        async with self._engine.connect() as conn:
            items = await _tools_with_confirmation(conn, await store.list_tools(conn, kind=kind))
        return registry_pb2.ListToolsResponse(items=items)

    async def ListAudit(
        self, request: registry_pb2.ListAuditRequest, context: grpc.aio.ServicerContext
    ) -> registry_pb2.ListAuditResponse:
        entity = request.entity or None
        if entity is not None and entity not in AUDIT_ENTITIES:
            raise InvalidRegistryChange(
                f"unknown audit entity {entity!r}",
                code="INVALID_FIELD",
                details={"entity": f"must be one of {', '.join(AUDIT_ENTITIES)}"},
            )
        limit = paging.page_limit(request.page.limit)
        before = paging.decode_cursor(request.page.cursor, codec.audit_position)
        async with self._engine.connect() as conn:
            rows = await store.list_audit(
                conn,
                entity=entity,
                entity_id=request.entity_id or None,
                actor=request.actor or None,
                before_id=before,
                limit=limit + 1,
            )
        page, cursor = paging.one_page(rows, limit, lambda row: (row.id,))
        return registry_pb2.ListAuditResponse(items=[codec.audit_to_proto(row) for row in page], next_cursor=cursor)

    # ─── Writes ────────────────────────────────────────────────────────────

    async def UpdateSkill(
        self, request: registry_pb2.UpdateSkillRequest, context: grpc.aio.ServicerContext
    ) -> registry_pb2.Skill:
        actor = codec.actor()
        patch = codec.skill_patch(request)
        async with self._engine.begin() as conn:
            row = await store.get_skill(conn, skill_id=request.id, lock=True)
            if row is None:
                raise _skill_missing(request.id)
            changes = rules.plan_skill_patch(row.skill, patch)
            if changes:
                row = await store.update_skill(conn, row=row, changes=changes, actor=actor)
                await _audit_and_announce(conn, "skill", request.id, changes, actor)
        if changes:
            self._hub.request_rebuild()
        return codec.skill_to_proto(row)

    async def UpdateAgent(
        self, request: registry_pb2.UpdateAgentRequest, context: grpc.aio.ServicerContext
    ) -> registry_pb2.Agent:
        actor = codec.actor()
        patch = codec.agent_patch(request)
        async with self._engine.begin() as conn:
            row = await store.get_agent_row(conn, agent_id=request.id, lock=True)
            if row is None:
                raise _agent_missing(request.id, "id")
            changes = rules.plan_agent_patch(
                row.agent, patch, confirm=request.confirm or None, allowed_models=self._settings.allowed_models
            )
            if changes:
                row = await store.update_agent(conn, row=row, changes=changes)
                await _audit_and_announce(conn, "agent", request.id, changes, actor)
        if changes:
            self._hub.request_rebuild()
        return codec.agent_to_proto(row)

    async def CreateSkill(
        self, request: registry_pb2.CreateSkillRequest, context: grpc.aio.ServicerContext
    ) -> registry_pb2.Skill:
        actor = codec.actor()
        draft = codec.skill_draft(request)
        async with self._engine.begin() as conn:
            skill = rules.plan_new_skill(
                draft,
                agents=await store.agents_by_id(conn),
                known_tools=await store.tool_names(conn),
                existing_skill_ids=await store.skill_ids(conn),
            )
            row = await store.insert_skill(conn, skill=skill, updated_by=actor.sub)
            if row is None:
                # Another request created the same id since the check above.
                raise RegistryConflict(
                    f"a skill with id {skill.id!r} already exists",
                    code="SKILL_EXISTS",
                    details={"id": "already taken; choose another id"},
                )
            created = FieldChange(
                "created",
                None,
                {
                    "agent_id": skill.agent_id,
                    "title": skill.title,
                    "enabled": skill.enabled,
                    "thresholds": dict(skill.thresholds),
                    "tool_names": list(skill.tool_names),
                },
            )
            await _audit_and_announce(conn, "skill", skill.id, [created], actor)
        self._hub.request_rebuild()
        return codec.skill_to_proto(row)

    # ─── Snapshot ──────────────────────────────────────────────────────────

    async def GetSnapshot(
        self, request: registry_pb2.GetSnapshotRequest, context: grpc.aio.ServicerContext
    ) -> registry_pb2.GetSnapshotResponse:
        current = self._hub.current
        if request.if_none_match == current.etag:
            return codec.NOT_MODIFIED
        return self._full_reply(current)

    async def WatchSnapshot(
        self, request: registry_pb2.WatchSnapshotRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[registry_pb2.Snapshot]:
        # Headers go out at once, so a watcher knows the stream is up even
        # when its copy is current and nothing follows until the next change.
        await context.send_initial_metadata(())
        async for encoded in self._hub.updates(request.if_none_match):
            yield self._full_reply(encoded).snapshot

    def _full_reply(self, current: EncodedSnapshot) -> registry_pb2.GetSnapshotResponse:
        etag, reply = self._reply
        if etag != current.etag:
            reply = codec.snapshot_reply(current)
            self._reply = (current.etag, reply)
        return reply


async def _audit_and_announce(
    conn: AsyncConnection, entity: str, entity_id: str, changes: list[FieldChange], actor: store.Actor
) -> None:
    await store.insert_audit(conn, entity=entity, entity_id=entity_id, changes=changes, actor=actor)
    await store.announce_change(conn, what=f"{entity}:{entity_id}")


async def _tools_with_confirmation(conn: AsyncConnection, tools: list[rules.Tool]) -> list[registry_pb2.Tool]:
    agents = await store.agents_by_id(conn)
    users = await store.tool_users(conn)
    items = []
    for tool in tools:
        by_agent = confirmation_by_agent(tool, users.get(tool.name, ()), agents)
        items.append(
            codec.tool_to_proto(
                tool, requires_confirmation=tool_requires_confirmation(tool, by_agent), by_agent=by_agent
            )
        )
    return items


def _agent_missing(agent_id: str, field: str) -> RegistryNotFound:
    return RegistryNotFound(f"no agent {agent_id!r}", code="AGENT_NOT_FOUND", details={field: f"no agent {agent_id!r}"})


def _skill_missing(skill_id: str) -> RegistryNotFound:
    return RegistryNotFound(f"no skill {skill_id!r}", code="SKILL_NOT_FOUND", details={"id": f"no skill {skill_id!r}"})
