"""Decision memory routes (DESIGN.md §4): record, precedent search, outcomes, listing.

Engines reach the /internal paths with the internal key; the console reads
/admin/ai/decisions, which never carries `context` (rider and customer data),
and role 1 reads one decision's context redacted, each read audited.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Path, Query, Request, Response
from fastapi.responses import StreamingResponse

from gateway import export
from gateway.auth import Principal, internal, staff, writer
from gateway.codec import decisions as codec
from gateway.contracts.common import (
    CARRIABLE,
    ENGINE_ERRORS,
    PAGE_LIMIT_MAX,
    STAFF_ERRORS,
    WRITER_ERRORS,
    Instant,
    WindowDays,
    WindowFrom,
    WindowTo,
    errors,
)
from gateway.contracts.decisions import (
    DECISION_TYPE_PATTERN,
    UUID_PATTERN,
    Decision,
    DecisionContext,
    DecisionDetail,
    DecisionFacets,
    DecisionFilters,
    DecisionIn,
    DecisionPage,
    OutcomeIn,
    OutcomeSeries,
    RecordReply,
    SimilarIn,
    SimilarReply,
)
from gateway.contracts.paging import PageQuery, PageRequest
from gateway.routing import JsonBodyRoute
from gateway.upstream import search_precedents, stub
from outrider.v1 import decisions_pb2_grpc
from services.decisions.rules import (
    FACET_DEFAULT_DAYS,
    FACET_MAX_DAYS,
    MAX_K,
)

router = APIRouter(tags=["decisions"], route_class=JsonBodyRoute)


DecisionId = Annotated[str, Path(pattern=UUID_PATTERN, description="the decision's UUID")]


def _decisions(request: Request) -> decisions_pb2_grpc.DecisionsStub:
    return stub(request, "decisions", decisions_pb2_grpc.DecisionsStub)


def _dimension(request: Request) -> int:
    dimension: int = request.app.state.settings.embedding_dimension
    return dimension


@router.post(
    "/internal/agent-decisions",
    status_code=201,
    summary="Record an agent's decision",
    response_model=RecordReply,
    responses={
        200: {"model": RecordReply, "description": "this id was recorded before: nothing changed"},
        **errors(401, 409, 422, 503),
    },
)
async def record_decision(body: DecisionIn, request: Request, _: None = Depends(internal)) -> Response:
    message = codec.record_request(body, dimension=_dimension(request))
    reply = await _decisions(request).RecordDecision(message)
    # Same id again: the decision exists already, nothing was created.
    return Response(
        codec.recorded_body(reply), status_code=201 if reply.created else 200, media_type="application/json"
    )


@router.post(
    "/internal/agent-decisions/similar",
    summary="Judged precedents nearest to a context",
    response_model=SimilarReply,
    responses=ENGINE_ERRORS,
)
async def find_similar(body: SimilarIn, request: Request, _: None = Depends(internal)) -> Response:
    found = await search_precedents(request, codec.similar_request(body, dimension=_dimension(request)))
    return Response(codec.similar_body(found), media_type="application/json")


@router.patch(
    "/internal/agent-decisions/{decision_id}/outcome",
    summary="Judge a pending decision",
    response_model=Decision,
    responses=errors(401, 404, 409, 422, 503),
)
async def set_outcome(
    decision_id: DecisionId, body: OutcomeIn, request: Request, _: None = Depends(internal)
) -> dict[str, Any]:
    reply = await _decisions(request).SetOutcome(codec.outcome_request(decision_id, body))
    return codec.listed_decision_json(reply)


@router.patch(
    "/admin/ai/decisions/{decision_id}/outcome",
    summary="A person judges or re-judges a decision",
    response_model=Decision,
    responses=WRITER_ERRORS,
)
async def rejudge(
    decision_id: DecisionId, body: OutcomeIn, request: Request, _: Principal = Depends(writer)
) -> dict[str, Any]:
    reply = await _decisions(request).SetOutcome(codec.outcome_request(decision_id, body))
    return codec.listed_decision_json(reply)


def _filters(
    decision_type: Annotated[str, Query(max_length=64, pattern=CARRIABLE, description="only this type")] = "",
    outcome: Annotated[
        Literal["success", "failure", "unknown", "pending"] | None,
        Query(description="only decisions with this outcome; pending = not judged yet"),
    ] = None,
    agent_id: Annotated[str, Query(max_length=128, pattern=CARRIABLE, description="only this agent's decisions")] = "",
    model: Annotated[str, Query(max_length=256, pattern=CARRIABLE, description="only decisions this model made")] = "",
    model_contains: Annotated[
        str,
        Query(max_length=256, pattern=CARRIABLE, description="only decisions whose model contains this, ignoring case"),
    ] = "",
    decided_from: Annotated[Instant | None, Query(description="decided at or after (RFC 3339 with offset)")] = None,
    decided_to: Annotated[Instant | None, Query(description="decided before (RFC 3339 with offset)")] = None,
    subject_id: Annotated[
        str, Query(max_length=256, pattern=CARRIABLE, description="only decisions about this subject")
    ] = "",
    rollout_id: Annotated[
        str, Query(pattern=f"{UUID_PATTERN}|^$", description="only decisions made under this rollout, either arm")
    ] = "",
) -> DecisionFilters:
    return DecisionFilters(
        decision_type=decision_type,
        outcome=outcome or "",
        agent_id=agent_id,
        model=model,
        decided_from=decided_from,
        decided_to=decided_to,
        subject_id=subject_id,
        rollout_id=rollout_id,
        model_contains=model_contains,
    )


Filters = Annotated[DecisionFilters, Depends(_filters)]


@router.get(
    "/admin/ai/decisions",
    summary="Decisions, newest first, without their context",
    response_model=DecisionPage,
    responses=STAFF_ERRORS,
)
async def list_decisions(
    request: Request, page: PageQuery, filters: Filters, _: Principal = Depends(staff)
) -> dict[str, Any]:
    return codec.decision_page_json(await _decisions(request).ListDecisions(codec.list_request(filters, page)))


@router.get(
    "/admin/ai/decisions/facets",
    summary="The decision types, agents and models of the decisions made in the last days, for filters to offer",
    response_model=DecisionFacets,
    responses=STAFF_ERRORS,
)
async def decision_facets(
    request: Request,
    days: Annotated[
        int | None, Query(ge=1, le=FACET_MAX_DAYS, description=f"window in days (default {FACET_DEFAULT_DAYS})")
    ] = None,
    _: Principal = Depends(staff),
) -> dict[str, Any]:
    return codec.facets_json(await _decisions(request).ListDecisionFacets(codec.facets_request(days)))


@router.get(
    "/admin/ai/decisions/export",
    summary="Every decision the filters select, newest first and without context, as CSV or JSON Lines",
    response_class=StreamingResponse,
    responses=export.RESPONSES,
)
async def export_decisions(
    request: Request,
    filters: Filters,
    format: export.ExportFormat = "csv",
    _: Principal = Depends(staff),
) -> StreamingResponse:
    decisions = _decisions(request)

    return await export.streamed(
        name="decisions",
        format=format,
        columns=codec.EXPORT_COLUMNS,
        page=lambda cursor: decisions.ListDecisions(codec.list_request(filters, PageRequest(cursor, PAGE_LIMIT_MAX))),
        records=lambda reply: [codec.listed_decision_json(decision) for decision in reply.items],
        flat=codec.export_record,
    )


@router.get(
    "/admin/ai/decisions/{decision_id}",
    summary="One decision without its context, its outcome history and its nearest judged precedents",
    response_model=DecisionDetail,
    responses={**STAFF_ERRORS, **errors(404)},
)
async def get_decision(
    decision_id: DecisionId,
    request: Request,
    precedents: Annotated[int | None, Query(ge=0, le=MAX_K, description="how many precedents; 5 when left out")] = None,
    _: Principal = Depends(staff),
) -> dict[str, Any]:
    reply = await _decisions(request).GetDecision(codec.detail_request(decision_id, precedents))
    return codec.decision_detail_json(reply)


@router.get(
    "/admin/ai/decisions/{decision_id}/context",
    summary="One decision's context, redacted as the playground redacts before the model; role 1, audited",
    response_model=DecisionContext,
    responses=errors(401, 403, 404, 422, 503),
)
async def get_decision_context(
    decision_id: DecisionId, request: Request, _: Principal = Depends(writer)
) -> dict[str, Any]:
    # Redacted in the decisions context, which owns the data: the raw
    # context never reaches the gateway.
    reply = await _decisions(request).GetDecisionContext(codec.context_request(decision_id))
    return codec.decision_context_json(reply)


@router.get(
    "/admin/ai/insights/outcomes",
    summary="Successes, failures, unknown and pending decisions per decision type over the window, in equal buckets",
    response_model=OutcomeSeries,
    responses=STAFF_ERRORS,
)
async def outcome_series(
    request: Request,
    days: WindowDays = None,
    window_from: WindowFrom = None,
    window_to: WindowTo = None,
    decision_type: Annotated[
        str, Query(max_length=64, pattern=f"{DECISION_TYPE_PATTERN}|^$", description="only this type")
    ] = "",
    _: Principal = Depends(staff),
) -> dict[str, Any]:
    ask = codec.outcome_series_request(days=days, start=window_from, end=window_to, decision_type=decision_type)
    return codec.outcome_series_json(await _decisions(request).CountOutcomeSeries(ask))
