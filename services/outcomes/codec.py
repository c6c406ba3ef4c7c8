"""Outcomes records to and from protobuf: the only module that sees wire types,
its own context's and the decisions context's it calls."""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from datetime import datetime

from google.protobuf.message import Message

from outrider.v1 import decisions_pb2, outcomes_pb2
from outrider.wire import timestamp, timestamp_datetime
from services.common import guards, paging
from services.common.errors import FieldError, InvalidArgument
from services.outcomes.rules.advice import Advice, OutcomeCount, RouteQuery, route_query
from services.outcomes.rules.alerts import ROLLOUT_HALTED
from services.outcomes.rules.autonomy import AutonomyEvidence, ExecutionCount
from services.outcomes.rules.credit import Conversation, ConversationMetrics, TurnCredit
from services.outcomes.rules.credit import parse_conversation as parse_conversation_payload
from services.outcomes.rules.evaluation import INTERVAL_METHOD, DecisionWeights, Evaluation
from services.outcomes.rules.facts import BookingFactsEvent, SubjectFacts, check_storable, decode_booking_event
from services.outcomes.rules.submission import Booking, Route
from services.outcomes.rules.sweep import PendingDecision, SweepReport, Verdict, batch_size
from services.outcomes.store import StoredAlert

# ─── The decisions context's messages ────────────────────────────────────────


def list_pending_request(*, before: datetime, cursor: str, limit: int) -> decisions_pb2.ListPendingRequest:
    return decisions_pb2.ListPendingRequest(decided_before=timestamp(before), after_cursor=cursor, limit=limit)


def _decided_at(item: decisions_pb2.PendingDecision) -> datetime:
    decided_at = timestamp_datetime(item.decided_at)
    if decided_at is None:
        # The decisions context stamps every decision it records; judging one
        # without a time would need a guess at its age.
        raise ValueError(f"pending decision {item.id!r} carries no decided_at")
    return decided_at


def pending_from_proto(reply: decisions_pb2.ListPendingResponse) -> tuple[list[PendingDecision], str]:
    """One page of pending decisions, and the cursor of the next ("" at the end)."""
    items = [
        PendingDecision(
            id=item.id,
            decision_type=item.decision_type,
            subject_id=item.subject_id,
            decided_at=_decided_at(item),
            model=item.model or None,
        )
        for item in reply.items
    ]
    return items, reply.next_cursor


def set_outcomes_request(verdicts: Sequence[Verdict]) -> decisions_pb2.SetOutcomesRequest:
    # No judged_by: the decisions context reads who judged from the caller.
    return decisions_pb2.SetOutcomesRequest(
        verdicts=[
            decisions_pb2.OutcomeVerdict(id=v.decision_id, outcome=v.outcome.value, reason=v.reason) for v in verdicts
        ]
    )


def outcome_counts_from_proto(reply: decisions_pb2.CountOutcomesResponse) -> list[OutcomeCount]:
    return [
        OutcomeCount(decision_type=i.decision_type, outcome=i.outcome, model=i.model, count=i.count)
        for i in reply.items
    ]


def weigh_decisions_request(*, decision_type: str, model: str) -> decisions_pb2.WeighDecisionsRequest:
    return decisions_pb2.WeighDecisionsRequest(decision_type=decision_type, model=model)


def weights_from_proto(reply: decisions_pb2.DecisionWeights) -> DecisionWeights:
    return DecisionWeights(
        decisions=reply.decisions,
        judged=reply.judged,
        unknown=reply.unknown,
        pending=reply.pending,
        logged_successes=reply.logged_successes,
        with_propensity=reply.with_propensity,
        matched=reply.matched,
        sum_w=reply.sum_w,
        sum_w_r=reply.sum_w_r,
        sum_w2=reply.sum_w2,
        sum_w2_r=reply.sum_w2_r,
    )


def count_executions_request(*, agent_id: str, decision_type: str) -> decisions_pb2.CountExecutionsRequest:
    return decisions_pb2.CountExecutionsRequest(agent_id=agent_id, decision_type=decision_type)


def execution_counts_from_proto(reply: decisions_pb2.CountExecutionsResponse) -> list[ExecutionCount]:
    return [
        ExecutionCount(
            decision_type=i.decision_type,
            execution=i.execution,
            successes=i.successes,
            failures=i.failures,
            unknown=i.unknown,
            pending=i.pending,
        )
        for i in reply.items
    ]


# ─── Facts and the sweep ─────────────────────────────────────────────────────


def facts_event(request: outcomes_pb2.RecordFactsRequest) -> BookingFactsEvent:
    """The event a RecordFacts call carries, read exactly as the consumer reads one."""
    return check_storable(decode_booking_event(request.event))


def facts_response(facts: SubjectFacts, *, changed: bool) -> outcomes_pb2.RecordFactsResponse:
    return outcomes_pb2.RecordFactsResponse(
        subject_id=facts.subject_id,
        facts=json.dumps(facts.to_json(), sort_keys=True).encode(),
        changed=changed,
    )


def sweep_batch(request: outcomes_pb2.SweepRequest) -> int:
    return batch_size(request.batch_size)


def sweep_response(report: SweepReport) -> outcomes_pb2.SweepResponse:
    return outcomes_pb2.SweepResponse(judged=report.judged, by_outcome=report.as_counts(), scanned=report.scanned)


# ─── Conversations, credits and metrics ──────────────────────────────────────


def _optional(message: Message, name: str) -> str | None:
    # A blank trace id or model identifies nothing; reading it as absent keeps
    # a client that writes "" for "none" from binding a decision to "".
    if not message.HasField(name):
        return None
    value: str = getattr(message, name)
    return value.strip() or None


def _storable(field: str, value: str | None) -> None:
    # Postgres text cannot hold NUL; refusing it here names the field instead
    # of failing the whole booking inside the database.
    if value is not None and "\x00" in value:
        raise InvalidArgument(f"{field}: contains a NUL character", field=field, code="MALFORMED_CONVERSATION")


def conversation_from_proto(request: outcomes_pb2.SubmitConversationRequest) -> tuple[Conversation, Route]:
    _storable("conversation_id", request.conversation_id)
    for field in ("skill", "decision_type"):
        _storable(field, getattr(request, field))
    for index, turn in enumerate(request.turns):
        for field in ("ref", "model", "trace_id"):
            _storable(f"turns[{index}].{field}", getattr(turn, field))
    payload = {
        "conversation_id": request.conversation_id,
        "turns": [
            {
                "role": turn.role,
                "text": turn.text,
                "ref": turn.ref,
                "model": _optional(turn, "model"),
                "trace_id": _optional(turn, "trace_id"),
                # Present only when sent, so the payload rule sees an absent
                # arm as absent and a sent one, however empty, as sent.
                "rollout": {"id": turn.rollout.id, "arm": turn.rollout.arm} if turn.HasField("rollout") else None,
            }
            for turn in request.turns
        ],
    }
    conversation = parse_conversation_payload(payload)
    route = Route(skill=_optional(request, "skill"), decision_type=_optional(request, "decision_type"))
    return conversation, route


def credit_to_proto(credit: TurnCredit) -> outcomes_pb2.TurnCredit:
    message = outcomes_pb2.TurnCredit(
        turn_ref=credit.turn_ref,
        credit=credit.credit.value,
        confidence=credit.confidence,
        episode_id=credit.episode_id,
        resolution=credit.resolution.value,
    )
    if credit.model is not None:
        message.model = credit.model
    if credit.trace_id is not None:
        message.trace_id = credit.trace_id
    return message


def submission_response(booking: Booking) -> outcomes_pb2.SubmitConversationResponse:
    return outcomes_pb2.SubmitConversationResponse(
        credits=[credit_to_proto(c) for c in booking.credits], deferred=booking.pending
    )


def metrics_to_proto(metrics: ConversationMetrics, *, model: str | None) -> outcomes_pb2.ConversationMetrics:
    message = outcomes_pb2.ConversationMetrics(
        episodes=metrics.episodes,
        resolved=metrics.resolved,
        abandoned=metrics.abandoned,
        ambiguous=metrics.ambiguous,
        ongoing=metrics.ongoing,
        first_turn_resolutions=metrics.first_turn_resolutions,
        first_turn_resolution_rate=metrics.first_turn_resolution_rate,
        avg_turns_to_resolution=metrics.avg_turns_to_resolution,
        churn_rate=metrics.churn_rate,
        pending=metrics.pending,
    )
    if model is not None:
        message.model = model
    return message


def metrics_model(request: outcomes_pb2.GetConversationMetricsRequest) -> str | None:
    return _optional(request, "model")


# ─── Routing ─────────────────────────────────────────────────────────────────


def seed_of(request: outcomes_pb2.GetRoutingRequest | outcomes_pb2.RecommendModelRequest) -> int | None:
    return request.seed if request.HasField("seed") else None


# A decision type, skill or model id is a short name; anything longer is
# not one, and none may carry what Postgres text cannot (NUL).
MAX_ROUTE_NAME = 256


def route_request(request: outcomes_pb2.GetRoutingRequest | outcomes_pb2.RecommendModelRequest) -> RouteQuery:
    def name(field: str, value: str) -> str:
        return guards.text(field, value, max_length=MAX_ROUTE_NAME)

    return route_query(
        decision_type=name("decision_type", request.decision_type),
        skill=name("skill", request.skill),
        candidates=[name(f"candidates[{index}]", model) for index, model in enumerate(request.candidates)],
        seed=seed_of(request),
    )


def _arms(advice: Advice) -> list[outcomes_pb2.ModelArm]:
    return [
        outcomes_pb2.ModelArm(
            model=arm.model,
            successes=arm.posterior.successes,
            failures=arm.posterior.failures,
            alpha=arm.posterior.alpha,
            beta=arm.posterior.beta,
            posterior_mean=arm.posterior.mean,
            pick_probability=arm.pick_probability,
            credit_successes=arm.credit.successes,
            credit_failures=arm.credit.failures,
            decision_successes=arm.decisions.successes,
            decision_failures=arm.decisions.failures,
        )
        for arm in advice.arms
    ]


def routing_to_proto(advice: Advice) -> outcomes_pb2.Routing:
    return outcomes_pb2.Routing(key=advice.key.label, arms=_arms(advice), pick=advice.pick or "", seed=advice.seed)


def recommendation_to_proto(advice: Advice) -> outcomes_pb2.RecommendModelResponse:
    return outcomes_pb2.RecommendModelResponse(
        model=advice.pick or "",
        arms=_arms(advice),
        seed=advice.seed,
        key=advice.key.label,
        propensity=advice.propensity,
        propensity_draws=advice.propensity_draws,
    )


# ─── Evidence before a switch ────────────────────────────────────────────────


def _name(field: str, value: str, *, required: bool) -> str:
    name = guards.text(field, value, max_length=MAX_ROUTE_NAME).strip()
    if required and not name:
        raise InvalidArgument(f"{field} is required", field=field)
    return name


def evaluate_query(request: outcomes_pb2.EvaluateRequest) -> tuple[str, str]:
    """The decision type and the model a pin of it is estimated for."""
    return _name("decision_type", request.decision_type, required=True), _name("model", request.model, required=True)


def evaluation_to_proto(
    *, decision_type: str, model: str, weights: DecisionWeights, evaluation: Evaluation
) -> outcomes_pb2.Evaluation:
    logged = outcomes_pb2.LoggedPolicy(
        decisions=weights.decisions,
        judged=weights.judged,
        with_propensity=weights.with_propensity,
        unknown=weights.unknown,
        pending=weights.pending,
    )
    if evaluation.logged_mean is not None:
        logged.mean = evaluation.logged_mean
    message = outcomes_pb2.Evaluation(
        decision_type=decision_type,
        model=model,
        method="snips",
        logged=logged,
        matched=evaluation.matched,
        effective_sample_size=evaluation.effective_sample_size,
        reason=evaluation.reason,
        interval_method=INTERVAL_METHOD,
    )
    if evaluation.estimate is not None:
        message.estimate.CopyFrom(
            outcomes_pb2.Interval(
                mean=evaluation.estimate.mean, low=evaluation.estimate.low, high=evaluation.estimate.high
            )
        )
    return message


def evidence_query(request: outcomes_pb2.GetAutonomyEvidenceRequest) -> tuple[str, str]:
    """The agent, and the decision type ("" for all of them)."""
    return _name("agent_id", request.agent_id, required=True), _name(
        "decision_type", request.decision_type, required=False
    )


def evidence_to_proto(
    *, agent_id: str, decision_type: str, evidence: AutonomyEvidence
) -> outcomes_pb2.AutonomyEvidence:
    message = outcomes_pb2.AutonomyEvidence(
        agent_id=agent_id,
        decision_type=decision_type,
        recommendation=evidence.recommendation.value,
        reason=evidence.reason,
    )
    if evidence.agreement_rate is not None:
        message.agreement_rate = evidence.agreement_rate
    for execution, counts in evidence.by_execution.items():
        entry = message.by_execution[execution.value]
        entry.judged = counts.judged
        entry.successes = counts.successes
        entry.failures = counts.failures
        entry.unknown = counts.unknown
        entry.pending = counts.pending
        interval = counts.interval
        if interval is not None:
            entry.mean, entry.low, entry.high = interval.mean, interval.low, interval.high
    return message


# ─── Erasure of one subject ──────────────────────────────────────────────────


def erased_subject(request: outcomes_pb2.EraseSubjectFactsRequest) -> str:
    subject_id = request.subject_id
    if not subject_id.strip() or subject_id != subject_id.strip():
        raise InvalidArgument("subject_id is required, without blanks around it", field="subject_id")
    return subject_id


def erased_facts_response(facts: int) -> outcomes_pb2.EraseSubjectFactsResponse:
    return outcomes_pb2.EraseSubjectFactsResponse(facts=facts)


# ─── Alerts ──────────────────────────────────────────────────────────────────

ALERT_STATES = ("firing", "resolved")


def _alert_position(parts: list[str]) -> tuple[str, datetime, str]:
    state, started, ident = parts
    if state not in ALERT_STATES:
        raise ValueError("not an alert state")
    return state, paging.parse_cursor_instant(started), str(uuid.UUID(ident))


def list_alerts_query(
    request: outcomes_pb2.ListAlertsRequest,
) -> tuple[str | None, tuple[str, datetime, str] | None, int]:
    if request.state and request.state not in ALERT_STATES:
        raise FieldError("state", f"must be one of {', '.join(ALERT_STATES)}, got {request.state!r}")
    return (
        request.state or None,
        paging.decode_cursor(request.page.cursor, _alert_position, field="page.cursor"),
        paging.page_limit(request.page.limit, field="page.limit"),
    )


def alert_to_proto(alert: StoredAlert) -> outcomes_pb2.Alert:
    return outcomes_pb2.Alert(
        id=alert.id,
        rule=alert.rule,
        agent_id=alert.agent_id,
        decision_type=alert.decision_type,
        state=alert.state,
        summary=alert.summary,
        value=alert.value,
        threshold=alert.threshold,
        started_at=timestamp(alert.started_at),
        resolved_at=timestamp(alert.resolved_at),
        rollout_id=alert.subject if alert.rule == ROLLOUT_HALTED else "",
    )


def alerts_response(rows: Sequence[StoredAlert], limit: int) -> outcomes_pb2.ListAlertsResponse:
    page, cursor = paging.one_page(rows, limit, lambda a: (a.state, a.started_at, a.id))
    return outcomes_pb2.ListAlertsResponse(items=[alert_to_proto(a) for a in page], next_cursor=cursor)
