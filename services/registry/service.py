"""The registry's gRPC servicer: decode, call a read or a change, encode.

A change runs in one transaction it opens here (services.registry.changes
says what each one holds); the snapshot is rebuilt only after it commits.
Snapshot reads are answered from the replica's copy in memory
(services.registry.live), never from the database.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, TypeAlias

import grpc
from sqlalchemy.ext.asyncio import AsyncEngine

from outrider.v1 import registry_pb2, registry_pb2_grpc
from services.common import paging
from services.common.settings import Settings
from services.registry import changes, codec, reads, rules, store
from services.registry.live import SnapshotHub
from services.registry.rollouts import changes as rollout_changes
from services.registry.rollouts import store as rollout_store
from services.registry.rollouts.rules import rollout_not_found
from services.registry.snapshot import EncodedSnapshot

# What every method is handed; only WatchSnapshot uses it, to send its headers.
Context: TypeAlias = grpc.aio.ServicerContext[Any, Any]


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
        self, request: registry_pb2.ListAgentsRequest, context: Context
    ) -> registry_pb2.ListAgentsResponse:
        async with self._engine.connect() as conn:
            rows = await store.list_agents(conn)
        return codec.agents_response(rows)

    async def GetAgent(self, request: registry_pb2.GetAgentRequest, context: Context) -> registry_pb2.AgentDetail:
        agent_id = codec.requested_agent(request)
        async with self._engine.connect() as conn:
            detail = await reads.agent_detail(conn, agent_id)
        return codec.agent_detail_to_proto(detail)

    async def ListSkills(
        self, request: registry_pb2.ListSkillsRequest, context: Context
    ) -> registry_pb2.ListSkillsResponse:
        agent_id = codec.skills_agent(request)
        async with self._engine.connect() as conn:
            rows = await reads.skills(conn, agent_id)
        return codec.skills_response(rows)

    async def ListTools(
        self, request: registry_pb2.ListToolsRequest, context: Context
    ) -> registry_pb2.ListToolsResponse:
        kind = codec.tool_kind(request)
        rules.check_tool_kind(kind)
        async with self._engine.connect() as conn:
            tools = await reads.tools(conn, kind)
        return codec.tools_response(tools)

    async def ListAudit(
        self, request: registry_pb2.ListAuditRequest, context: Context
    ) -> registry_pb2.ListAuditResponse:
        narrowed = codec.audit_filter(request)
        rules.check_audit_entity(narrowed.entity)
        limit, before = codec.audit_page(request)
        async with self._engine.connect() as conn:
            rows = await store.list_audit(
                conn,
                entity=narrowed.entity,
                entity_id=narrowed.entity_id,
                actor=narrowed.actor,
                changed_from=narrowed.changed_from,
                changed_to=narrowed.changed_to,
                before_id=before,
                limit=limit + 1,
            )
        page, cursor = paging.one_page(rows, limit, lambda row: (row.id,))
        return codec.audit_response(page, cursor)

    # ─── Writes ────────────────────────────────────────────────────────────

    async def UpdateSkill(self, request: registry_pb2.UpdateSkillRequest, context: Context) -> registry_pb2.Skill:
        actor = codec.actor()
        edit = codec.skill_edit(request)
        async with self._engine.begin() as conn:
            row, changed = await changes.update_skill(conn, skill_id=edit.skill_id, patch=edit.patch, actor=actor)
        if changed:
            self._hub.request_rebuild()
        return codec.skill_to_proto(row)

    async def UpdateAgent(self, request: registry_pb2.UpdateAgentRequest, context: Context) -> registry_pb2.Agent:
        actor = codec.agent_writer()
        edit = codec.agent_edit(request)
        async with self._engine.begin() as conn:
            row, changed = await changes.update_agent(
                conn,
                agent_id=edit.agent_id,
                patch=edit.patch,
                confirm=edit.confirm,
                allowed_models=self._settings.allowed_models,
                actor=actor,
            )
        if changed:
            self._hub.request_rebuild()
        return codec.agent_to_proto(row)

    async def CreateSkill(self, request: registry_pb2.CreateSkillRequest, context: Context) -> registry_pb2.Skill:
        actor = codec.actor()
        draft = codec.skill_draft(request)
        async with self._engine.begin() as conn:
            row = await changes.create_skill(conn, draft=draft, actor=actor)
        self._hub.request_rebuild()
        return codec.skill_to_proto(row)

    async def AppendAudit(self, request: registry_pb2.AppendAuditRequest, context: Context) -> registry_pb2.AuditRow:
        # Another context's change: the snapshot holds no audit, so nothing is rebuilt.
        actor = codec.actor()
        change = codec.appended_change(request)
        async with self._engine.begin() as conn:
            row = await store.append_audit(conn, change=change, actor=actor)
        return codec.audit_to_proto(row)

    # ─── Rollouts ──────────────────────────────────────────────────────────

    async def CreateRollout(self, request: registry_pb2.CreateRolloutRequest, context: Context) -> registry_pb2.Rollout:
        actor = codec.actor()
        draft = codec.rollout_draft(request)
        async with self._engine.begin() as conn:
            row = await rollout_changes.create_rollout(
                conn, draft=draft, allowed_models=self._settings.allowed_models, actor=actor
            )
        self._hub.request_rebuild()
        return codec.rollout_to_proto(row)

    async def ListRollouts(
        self, request: registry_pb2.ListRolloutsRequest, context: Context
    ) -> registry_pb2.ListRolloutsResponse:
        narrowed = codec.rollout_filter(request)
        async with self._engine.connect() as conn:
            if narrowed.agent_id is not None and await store.get_agent(conn, agent_id=narrowed.agent_id) is None:
                raise rules.agent_not_found(narrowed.agent_id, "agent_id")
            rows = await rollout_store.list_rollouts(
                conn, agent_id=narrowed.agent_id, state=narrowed.state, after=narrowed.after, limit=narrowed.limit + 1
            )
        page, cursor = paging.one_page(rows, narrowed.limit, codec.rollout_position)
        return codec.rollouts_response(page, cursor)

    async def GetRollout(self, request: registry_pb2.GetRolloutRequest, context: Context) -> registry_pb2.Rollout:
        async with self._engine.connect() as conn:
            row = await rollout_store.get_rollout(conn, rollout_id=request.id, history=True)
        if row is None:
            raise rollout_not_found(request.id)
        return codec.rollout_to_proto(row)

    async def PauseRollout(self, request: registry_pb2.RolloutActionRequest, context: Context) -> registry_pb2.Rollout:
        return await self._act(request, "pause")

    async def ResumeRollout(self, request: registry_pb2.RolloutActionRequest, context: Context) -> registry_pb2.Rollout:
        return await self._act(request, "resume")

    async def AbortRollout(self, request: registry_pb2.RolloutActionRequest, context: Context) -> registry_pb2.Rollout:
        return await self._act(request, "abort")

    async def JudgeRollout(self, request: registry_pb2.JudgeRolloutRequest, context: Context) -> registry_pb2.Rollout:
        judgement = codec.judgement(request)
        async with self._engine.begin() as conn:
            row, moved = await rollout_changes.judge(
                conn, rollout_id=request.id, judgement=judgement, allowed_models=self._settings.allowed_models
            )
        if moved:
            self._hub.request_rebuild()
        return codec.rollout_to_proto(row)

    async def _act(self, request: registry_pb2.RolloutActionRequest, action: str) -> registry_pb2.Rollout:
        actor = codec.actor()
        async with self._engine.begin() as conn:
            row, moved = await rollout_changes.act(
                conn, rollout_id=request.id, action=action, reason=request.reason, actor=actor
            )
        if moved:
            self._hub.request_rebuild()
        return codec.rollout_to_proto(row)

    # ─── Snapshot ──────────────────────────────────────────────────────────

    async def GetSnapshot(
        self, request: registry_pb2.GetSnapshotRequest, context: Context
    ) -> registry_pb2.GetSnapshotResponse:
        current = self._hub.current
        # The one field read here rather than through the codec: every engine
        # polls this, and the answer is mostly "not modified", so the poll
        # costs a comparison and no more (bench/registry).
        if request.if_none_match == current.etag:
            return codec.NOT_MODIFIED
        return self._full_reply(current)

    async def WatchSnapshot(
        self, request: registry_pb2.WatchSnapshotRequest, context: Context
    ) -> AsyncIterator[registry_pb2.Snapshot]:
        # Headers go out at once, so a watcher knows the stream is up even
        # when its copy is current and nothing follows until the next change.
        await context.send_initial_metadata(())
        async for encoded in self._hub.updates(codec.watched_etag(request)):
            yield self._full_reply(encoded).snapshot

    def _full_reply(self, current: EncodedSnapshot) -> registry_pb2.GetSnapshotResponse:
        etag, reply = self._reply
        if etag != current.etag:
            reply = codec.snapshot_reply(current)
            self._reply = (current.etag, reply)
        return reply
