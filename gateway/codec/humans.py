"""Human-decision messages to the gateway's JSON and back: subjects, pushed inputs, leases."""

from __future__ import annotations

from typing import Any

from gateway.codec.common import page_request, timestamp_text
from gateway.contracts.humans import ErasureIn, HumanInputIn, SubjectIn
from gateway.contracts.paging import PageRequest
from outrider.v1 import decisions_pb2
from outrider.wire import timestamp

# ─── Out ───────────────────────────────────────────────────────────────────


def subject_json(subject: decisions_pb2.Subject) -> dict[str, Any]:
    return {
        "id": subject.id,
        "source": subject.source or None,
        "plan_ref": subject.plan_ref or None,
        "cursor": subject.cursor or None,
    }


def human_decision_json(decision: decisions_pb2.HumanDecision) -> dict[str, Any]:
    return {
        "id": decision.id,
        "subject_id": decision.subject_id,
        "kind": decision.kind,
        "body": decision.body,
        "author": decision.author,
        "provider": decision.provider,
        "external_id": decision.external_id,
        "written_at": timestamp_text(decision.written_at),
        "observed_at": timestamp_text(decision.observed_at),
        "plan_ref": decision.plan_ref or None,
        "step": decision.step or None,
    }


def recorded_input_json(reply: decisions_pb2.RecordHumanInputResponse) -> dict[str, Any]:
    return human_decision_json(reply.decision)


def lease_json(reply: decisions_pb2.LeaseSubjectResponse) -> dict[str, Any]:
    return {
        "subject_id": reply.subject_id,
        "human_decisions": [human_decision_json(d) for d in reply.human_decisions],
        "imported": reply.imported,
    }


def human_decision_page_json(reply: decisions_pb2.ListHumanDecisionsResponse) -> dict[str, Any]:
    return {"items": [human_decision_json(d) for d in reply.items], "next_cursor": reply.next_cursor or None}


def erasure_json(reply: decisions_pb2.EraseSubjectResponse) -> dict[str, Any]:
    erased = reply.erased
    return {
        "subject_id": reply.subject_id,
        "erased": {"decisions": erased.decisions, "human_inputs": erased.human_inputs, "facts": erased.facts},
    }


# ─── In ────────────────────────────────────────────────────────────────────


def subject_request(subject_id: str, body: SubjectIn) -> decisions_pb2.RegisterSubjectRequest:
    return decisions_pb2.RegisterSubjectRequest(id=subject_id, source=body.source or "", plan_ref=body.plan_ref or "")


def human_input_request(body: HumanInputIn) -> decisions_pb2.RecordHumanInputRequest:
    return decisions_pb2.RecordHumanInputRequest(
        provider=body.provider,
        external_id=body.external_id,
        subject_id=body.subject_id,
        author=body.author,
        at=timestamp(body.at),
        body=body.body,
    )


def lease_request(subject_id: str) -> decisions_pb2.LeaseSubjectRequest:
    return decisions_pb2.LeaseSubjectRequest(subject_id=subject_id)


def human_decisions_request(subject_id: str, page: PageRequest) -> decisions_pb2.ListHumanDecisionsRequest:
    return decisions_pb2.ListHumanDecisionsRequest(subject_id=subject_id, page=page_request(page))


def erasure_request(subject_id: str, body: ErasureIn) -> decisions_pb2.EraseSubjectRequest:
    return decisions_pb2.EraseSubjectRequest(subject_id=subject_id, confirm=body.confirm, reason=body.reason)
