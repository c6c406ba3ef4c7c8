"""Human-decision routes (DESIGN.md §4): subjects, pushed inputs, the lease,
the admin read, and the erasure of a subject's personal data (§11)."""

from __future__ import annotations

from typing import Annotated, Any

import grpc
from fastapi import APIRouter, Depends, Path, Request, Response

from gateway.auth import Principal, internal, staff, writer
from gateway.codec import humans as codec
from gateway.contracts.common import STAFF_ERRORS, TRIMMED, errors
from gateway.contracts.humans import (
    Erasure,
    ErasureIn,
    HumanDecision,
    HumanDecisionPage,
    HumanInputIn,
    Lease,
    Subject,
    SubjectIn,
)
from gateway.contracts.paging import PageQuery
from gateway.routing import JsonBodyRoute
from gateway.upstream import stub
from outrider.rpc import refusal_metadata
from outrider.v1 import decisions_pb2_grpc
from services.common.clients import ContextCallError

router = APIRouter(tags=["human decisions"], route_class=JsonBodyRoute)

LEASE_TIMEOUT_S = 60.0
# An erasure updates every decision of the subject (found without an index:
# one would tax every record for a rare request) and calls two contexts.
ERASURE_TIMEOUT_S = 60.0

SubjectId = Annotated[str, Path(max_length=256, pattern=TRIMMED, description="the subject, e.g. a booking id")]


def _decisions(request: Request) -> decisions_pb2_grpc.DecisionsStub:
    return stub(request, "decisions", decisions_pb2_grpc.DecisionsStub)


@router.put(
    "/internal/subjects/{subject_id}",
    summary="Register a subject with the source it came from and its currently accepted plan",
    dependencies=[Depends(internal)],
    response_model=Subject,
    responses=errors(401, 422, 503),
)
async def register_subject(subject_id: SubjectId, body: SubjectIn, request: Request) -> dict[str, Any]:
    return codec.subject_json(await _decisions(request).RegisterSubject(codec.subject_request(subject_id, body)))


@router.post(
    "/internal/human-inputs",
    summary="Record one human input as a decision; idempotent on (provider, external_id)",
    dependencies=[Depends(internal)],
    status_code=201,
    response_model=HumanDecision,
    responses={
        200: {"model": HumanDecision, "description": "a redelivery: the decision recorded before"},
        **errors(401, 409, 422, 503),
    },
)
async def record_human_input(body: HumanInputIn, request: Request, response: Response) -> dict[str, Any]:
    reply = await _decisions(request).RecordHumanInput(codec.human_input_request(body))
    if not reply.created:
        response.status_code = 200
    return codec.recorded_input_json(reply)


@router.post(
    "/internal/subjects/{subject_id}/lease",
    summary="Reconcile the subject's human input, then list its human decisions (newest intent last)",
    dependencies=[Depends(internal)],
    response_model=Lease,
    responses=errors(401, 404, 409, 422, 503),
)
async def lease_subject(subject_id: SubjectId, request: Request) -> dict[str, Any]:
    # A lease reads the subject's outside source first, within that source's own timeout.
    reply = await _decisions(request).LeaseSubject(codec.lease_request(subject_id), timeout=LEASE_TIMEOUT_S)
    return codec.lease_json(reply)


@router.get(
    "/admin/ai/subjects/{subject_id}/human-decisions",
    summary="A subject's human decisions, oldest written first",
    response_model=HumanDecisionPage,
    responses={**STAFF_ERRORS, **errors(404)},
)
async def list_human_decisions(
    subject_id: SubjectId, request: Request, page: PageQuery, _: Principal = Depends(staff)
) -> dict[str, Any]:
    try:
        reply = await _decisions(request).ListHumanDecisions(codec.human_decisions_request(subject_id, page))
    except ContextCallError as failed:
        # An agent may decide about a subject no source has reported yet; to a
        # person reading its human decisions that is simply none, not a fault.
        code = refusal_metadata(failed.error)[0]
        if failed.error.code() is grpc.StatusCode.NOT_FOUND and code == "SUBJECT_NOT_FOUND":
            return {"items": [], "next_cursor": None}
        raise
    return codec.human_decision_page_json(reply)


@router.post(
    "/admin/ai/subjects/{subject_id}/erasure",
    summary="Erase a subject's personal data in every context; audited, idempotent, cannot be undone",
    response_model=Erasure,
    responses=errors(401, 403, 422, 503),
)
async def erase_subject(
    subject_id: SubjectId, body: ErasureIn, request: Request, _: Principal = Depends(writer)
) -> dict[str, Any]:
    reply = await _decisions(request).EraseSubject(codec.erasure_request(subject_id, body), timeout=ERASURE_TIMEOUT_S)
    return codec.erasure_json(reply)
