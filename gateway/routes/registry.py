"""Registry routes: /admin/ai/agents, skills, tools, audit, rollouts and the engine snapshot.

Bodies are checked here for shape only (the contracts in
`gateway/contracts/registry.py`, which the OpenAPI document publishes);
every registry rule that depends on the registry's state is the service's.
"""

from __future__ import annotations

import asyncio
import hashlib
from typing import Annotated, Any, Final, Literal

from fastapi import APIRouter, Depends, Path, Query, Request, Response
from fastapi.responses import StreamingResponse

from gateway import export, snapshot_feed
from gateway.auth import Principal, internal, staff, writer
from gateway.codec import decisions as decisions_codec
from gateway.codec import outcomes as outcomes_codec
from gateway.codec import registry as codec
from gateway.codec import telemetry as telemetry_codec
from gateway.contracts.common import CARRIABLE, PAGE_LIMIT_MAX, STAFF_ERRORS, WRITER_ERRORS, Instant, errors
from gateway.contracts.decisions import UUID_PATTERN, DecisionFilters
from gateway.contracts.paging import PageQuery, PageRequest
from gateway.contracts.registry import (
    Agent,
    AgentDetail,
    AgentModels,
    AgentPage,
    AgentPatch,
    AuditFilters,
    AuditPage,
    RegistrySnapshot,
    Rollout,
    RolloutAction,
    RolloutDraft,
    RolloutPage,
    Skill,
    SkillDraft,
    SkillPage,
    SkillPatch,
    ToolPage,
)
from gateway.routing import JsonBodyRoute
from gateway.upstream import stub
from outrider.v1 import decisions_pb2_grpc, outcomes_pb2_grpc, registry_pb2_grpc, telemetry_pb2_grpc
from outrider.wire import json_bytes
from services.registry.rollouts.rules import RolloutState
from services.registry.rules import ToolKind, parse_allowed_models

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
RolloutIdPath = Annotated[str, Path(pattern=UUID_PATTERN, description="the rollout's UUID")]
# The agent's newest decisions and the widest insights window are where its
# models show; older decisions name models routing and telemetry still carry.
MODEL_DECISIONS_LOOKED_AT: Final = PageRequest(cursor="", limit=PAGE_LIMIT_MAX)
MODEL_CALLS_WINDOW_DAYS: Final = 30
# Pause, resume and abort take a body only to say why; none says nothing.
NO_REASON: Final = RolloutAction.model_validate({})

router = APIRouter(tags=["registry"], route_class=JsonBodyRoute, lifespan=snapshot_feed.lifespan)


def _registry(request: Request) -> registry_pb2_grpc.RegistryStub:
    return stub(request, "registry", registry_pb2_grpc.RegistryStub)


@router.get(
    "/admin/ai/agents",
    summary="Every agent with its status badge and skill and tool counts",
    response_model=AgentPage,
    responses=STAFF_ERRORS,
)
async def list_agents(request: Request, _: Principal = Depends(staff)) -> dict[str, Any]:
    return codec.agent_page_json(await _registry(request).ListAgents(codec.agents_request()))


@router.get(
    "/admin/ai/agents/{agent_id}",
    summary="One agent with its skills, their tools and its screens (ETag, If-None-Match)",
    response_class=Response,
    responses={
        200: {"model": AgentDetail, "description": "the agent", "headers": {"ETag": {"schema": {"type": "string"}}}},
        304: {"description": "the agent is unchanged since the ETag sent"},
        **errors(401, 403, 404, 503),
    },
)
async def get_agent(agent_id: AgentIdPath, request: Request, _: Principal = Depends(staff)) -> Response:
    # An open Agent Studio polls this to show a colleague's change; the ETag
    # lets an unchanged agent answer 304 with no body for the page to redraw.
    document = json_bytes(codec.agent_detail_json(await _registry(request).GetAgent(codec.agent_request(agent_id))))
    etag = hashlib.sha256(document).hexdigest()[:32]
    headers = {"ETag": f'"{etag}"', "Cache-Control": "private, no-cache"}
    if codec.etag_matches(request.headers.get("if-none-match"), etag):
        return Response(status_code=304, headers=headers)
    return Response(content=document, media_type="application/json", headers=headers)


@router.get(
    "/admin/ai/agents/{agent_id}/models",
    summary="The models a pin can choose from: those this agent has evidence for, and the allowed patterns",
    response_model=AgentModels,
    responses=errors(401, 403, 404, 503),
)
async def agent_models(agent_id: AgentIdPath, request: Request, _: Principal = Depends(staff)) -> dict[str, Any]:
    detail = await _registry(request).GetAgent(codec.agent_request(agent_id))
    decisions_ask = decisions_codec.list_request(DecisionFilters(agent_id=agent_id), MODEL_DECISIONS_LOOKED_AT)
    decisions, insights = await asyncio.gather(
        stub(request, "decisions", decisions_pb2_grpc.DecisionsStub).ListDecisions(decisions_ask),
        stub(request, "telemetry", telemetry_pb2_grpc.TelemetryStub).GetInsights(
            telemetry_codec.insights_request(MODEL_CALLS_WINDOW_DAYS, None, None)
        ),
    )
    # Routing keeps evidence per skill and per decision type: ask for each
    # key this agent decides under.
    outcomes = stub(request, "outcomes", outcomes_pb2_grpc.OutcomesStub)
    keys = [("", skill.id) for skill in detail.skills]
    keys += [(decision_type, "") for decision_type in sorted({d.decision_type for d in decisions.items} - {""})]
    routings = await asyncio.gather(
        *(
            outcomes.GetRouting(
                outcomes_codec.routing_request(decision_type=decision_type, skill=skill, seed=None, candidates=[])
            )
            for decision_type, skill in keys
        )
    )
    return codec.agent_models_json(
        detail,
        decisions=decisions,
        routings=routings,
        insights=insights,
        allowed_patterns=parse_allowed_models(request.app.state.settings.allowed_models),
    )


@router.patch(
    "/admin/ai/agents/{agent_id}",
    summary="Set an agent's autonomy or model pin",
    response_model=Agent,
    responses=WRITER_ERRORS,
)
async def update_agent(
    agent_id: AgentIdPath, body: AgentPatch, request: Request, _: Principal = Depends(writer)
) -> dict[str, Any]:
    return codec.agent_json(await _registry(request).UpdateAgent(codec.agent_update(agent_id, body)))


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
    return codec.skill_page_json(await _registry(request).ListSkills(codec.skills_request(agent)))


@router.post(
    "/admin/ai/skills",
    status_code=201,
    summary="A new skill on a console agent, from existing tools",
    response_model=Skill,
    responses=WRITER_ERRORS,
)
async def create_skill(body: SkillDraft, request: Request, _: Principal = Depends(writer)) -> dict[str, Any]:
    return codec.skill_json(await _registry(request).CreateSkill(codec.skill_draft(body)))


@router.patch(
    "/admin/ai/skills/{skill_id}",
    summary="Switch a skill or tune its thresholds",
    response_model=Skill,
    responses=WRITER_ERRORS,
)
async def update_skill(
    skill_id: SkillIdPath, body: SkillPatch, request: Request, _: Principal = Depends(writer)
) -> dict[str, Any]:
    return codec.skill_json(await _registry(request).UpdateSkill(codec.skill_update(skill_id, body)))


@router.get("/admin/ai/tools", summary="Tools, optionally of one kind", response_model=ToolPage, responses=STAFF_ERRORS)
async def list_tools(
    request: Request,
    kind: Annotated[ToolKind | None, Query(description="only tools of this kind")] = None,
    _: Principal = Depends(staff),
) -> dict[str, Any]:
    return codec.tool_page_json(await _registry(request).ListTools(codec.tools_request(kind.value if kind else "")))


def _audit_filters(
    entity: Annotated[
        Literal["agent", "skill", "rollout", "subject", "decision", "run"] | None,
        Query(description="only changes to this kind of thing"),
    ] = None,
    entity_id: Annotated[
        str,
        Query(
            max_length=256,
            pattern=CARRIABLE,
            description="only changes to this agent, skill, rollout, subject, decision or playground run",
        ),
    ] = "",
    actor: Annotated[
        str, Query(max_length=256, pattern=CARRIABLE, description="only changes by this person (their sub or email)")
    ] = "",
    changed_from: Annotated[
        Instant | None, Query(alias="from", description="changed at or after (RFC 3339 with offset)")
    ] = None,
    changed_to: Annotated[
        Instant | None, Query(alias="to", description="changed before (RFC 3339 with offset)")
    ] = None,
) -> AuditFilters:
    return AuditFilters(entity or "", entity_id, actor, changed_from, changed_to)


AuditQuery = Annotated[AuditFilters, Depends(_audit_filters)]


@router.get("/admin/ai/audit", summary="Change history, newest first", response_model=AuditPage, responses=STAFF_ERRORS)
async def list_audit(
    request: Request, page: PageQuery, filters: AuditQuery, _: Principal = Depends(staff)
) -> dict[str, Any]:
    return codec.audit_page_json(await _registry(request).ListAudit(codec.audit_request(filters, page)))


@router.get(
    "/admin/ai/audit/export",
    summary="Every change the filters select, newest first, as CSV or JSON Lines",
    response_class=StreamingResponse,
    responses=export.RESPONSES,
)
async def export_audit(
    request: Request, filters: AuditQuery, format: export.ExportFormat = "csv", _: Principal = Depends(staff)
) -> StreamingResponse:
    registry = _registry(request)

    return await export.streamed(
        name="audit",
        format=format,
        columns=codec.AUDIT_EXPORT_COLUMNS,
        page=lambda cursor: registry.ListAudit(codec.audit_request(filters, PageRequest(cursor, PAGE_LIMIT_MAX))),
        records=lambda reply: [codec.audit_json(row) for row in reply.items],
    )


@router.post(
    "/admin/ai/rollouts",
    status_code=201,
    summary="Roll a change out to a share of subjects, guarded by judged outcomes",
    response_model=Rollout,
    responses=WRITER_ERRORS,
)
async def create_rollout(body: RolloutDraft, request: Request, _: Principal = Depends(writer)) -> dict[str, Any]:
    return codec.rollout_json(await _registry(request).CreateRollout(codec.rollout_create(body)))


@router.get(
    "/admin/ai/rollouts",
    summary="Rollouts, newest first, optionally of one agent or in one state",
    response_model=RolloutPage,
    responses={**STAFF_ERRORS, **errors(404)},
)
async def list_rollouts(
    request: Request,
    page: PageQuery,
    agent_id: Annotated[str, Query(max_length=128, pattern=CARRIABLE, description="only this agent's rollouts")] = "",
    state: Annotated[RolloutState | None, Query(description="only rollouts in this state")] = None,
    _: Principal = Depends(staff),
) -> dict[str, Any]:
    ask = codec.rollouts_request(agent_id=agent_id, state=state.value if state else "", page=page)
    return codec.rollout_page_json(await _registry(request).ListRollouts(ask))


@router.get(
    "/admin/ai/rollouts/{rollout_id}",
    summary="One rollout with its arms, its guard's last look and its history",
    response_model=Rollout,
    responses=errors(401, 403, 404, 422, 503),
)
async def get_rollout(rollout_id: RolloutIdPath, request: Request, _: Principal = Depends(staff)) -> dict[str, Any]:
    return codec.rollout_json(await _registry(request).GetRollout(codec.rollout_request(rollout_id)))


@router.post(
    "/admin/ai/rollouts/{rollout_id}/pause",
    summary="Pause a running rollout: its share stays as it is, the guard no longer advances it",
    response_model=Rollout,
    responses=WRITER_ERRORS,
)
async def pause_rollout(
    rollout_id: RolloutIdPath, request: Request, body: RolloutAction = NO_REASON, _: Principal = Depends(writer)
) -> dict[str, Any]:
    return codec.rollout_json(await _registry(request).PauseRollout(codec.rollout_action(rollout_id, body)))


@router.post(
    "/admin/ai/rollouts/{rollout_id}/resume",
    summary="Resume a paused rollout",
    response_model=Rollout,
    responses=WRITER_ERRORS,
)
async def resume_rollout(
    rollout_id: RolloutIdPath, request: Request, body: RolloutAction = NO_REASON, _: Principal = Depends(writer)
) -> dict[str, Any]:
    return codec.rollout_json(await _registry(request).ResumeRollout(codec.rollout_action(rollout_id, body)))


@router.post(
    "/admin/ai/rollouts/{rollout_id}/abort",
    summary="Abort a rollout: every subject is back on the baseline at once",
    response_model=Rollout,
    responses=WRITER_ERRORS,
)
async def abort_rollout(
    rollout_id: RolloutIdPath, request: Request, body: RolloutAction = NO_REASON, _: Principal = Depends(writer)
) -> dict[str, Any]:
    return codec.rollout_json(await _registry(request).AbortRollout(codec.rollout_action(rollout_id, body)))


@router.get(
    "/internal/ai/registry",
    summary="The whole registry snapshot the engine obeys (ETag, If-None-Match)",
    response_class=Response,
    responses={
        200: {
            "model": RegistrySnapshot,
            "description": "the snapshot document",
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
    feed: snapshot_feed.SnapshotFeed = request.app.state.registry_feed
    snapshot = await feed.current(_registry(request))
    headers = {"ETag": f'"{snapshot.etag}"', "Cache-Control": "no-cache", FRESHNESS_HEADER: feed.freshness}
    if codec.etag_matches(request.headers.get("if-none-match"), snapshot.etag):
        return Response(status_code=304, headers=headers)
    return Response(content=snapshot.document, media_type="application/json", headers=headers)
