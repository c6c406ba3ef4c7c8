"""Outcome messages to the gateway's JSON and back: facts, sweeps, conversations, metrics, routing."""

from __future__ import annotations

import json
from typing import Any

from gateway.codec.common import page_request, timestamp_text
from gateway.contracts.outcomes import ConversationIn, TurnIn
from gateway.contracts.paging import PageRequest
from outrider.v1 import common_pb2, outcomes_pb2

# ─── Out ───────────────────────────────────────────────────────────────────


def facts_json(reply: outcomes_pb2.RecordFactsResponse) -> dict[str, Any]:
    return {"subject_id": reply.subject_id, "facts": json.loads(reply.facts), "changed": reply.changed}


def sweep_json(reply: outcomes_pb2.SweepResponse) -> dict[str, Any]:
    return {"judged": reply.judged, "by_outcome": dict(reply.by_outcome), "scanned": reply.scanned}


def _credit_json(credit: outcomes_pb2.TurnCredit) -> dict[str, Any]:
    return {
        "turn_ref": credit.turn_ref,
        "model": credit.model if credit.HasField("model") else None,
        "trace_id": credit.trace_id if credit.HasField("trace_id") else None,
        "credit": credit.credit,
        "confidence": credit.confidence,
        "episode_id": credit.episode_id,
        "resolution": credit.resolution,
    }


def credits_json(reply: outcomes_pb2.SubmitConversationResponse) -> dict[str, Any]:
    return {"credits": [_credit_json(c) for c in reply.credits], "deferred": reply.deferred}


def conversation_metrics_json(reply: outcomes_pb2.ConversationMetrics) -> dict[str, Any]:
    return {
        "model": reply.model if reply.HasField("model") else None,
        "episodes": reply.episodes,
        "resolved": reply.resolved,
        "abandoned": reply.abandoned,
        "ambiguous": reply.ambiguous,
        "ongoing": reply.ongoing,
        "first_turn_resolutions": reply.first_turn_resolutions,
        "first_turn_resolution_rate": reply.first_turn_resolution_rate,
        "avg_turns_to_resolution": reply.avg_turns_to_resolution,
        "churn_rate": reply.churn_rate,
        "pending": reply.pending,
    }


def routing_json(reply: outcomes_pb2.Routing) -> dict[str, Any]:
    return {
        "key": reply.key,
        "pick": reply.pick or None,
        "seed": reply.seed,
        "arms": [
            {
                "model": arm.model,
                "successes": arm.successes,
                "failures": arm.failures,
                "alpha": arm.alpha,
                "beta": arm.beta,
                "posterior_mean": arm.posterior_mean,
                "pick_probability": arm.pick_probability,
                "credit": {"successes": arm.credit_successes, "failures": arm.credit_failures},
                "decisions": {"successes": arm.decision_successes, "failures": arm.decision_failures},
            }
            for arm in reply.arms
        ],
    }


def _present(message: Any, name: str) -> Any:
    return getattr(message, name) if message.HasField(name) else None


def evaluation_json(reply: outcomes_pb2.Evaluation) -> dict[str, Any]:
    estimate = reply.estimate if reply.HasField("estimate") else None
    logged = reply.logged
    return {
        "decision_type": reply.decision_type,
        "model": reply.model,
        "method": reply.method,
        "estimate": None if estimate is None else {"mean": estimate.mean, "low": estimate.low, "high": estimate.high},
        "logged": {
            "decisions": logged.decisions,
            "judged": logged.judged,
            "with_propensity": logged.with_propensity,
            "mean": _present(logged, "mean"),
            "unknown": logged.unknown,
            "pending": logged.pending,
        },
        "matched": reply.matched,
        "effective_sample_size": reply.effective_sample_size,
        "interval_method": reply.interval_method,
        "reason": reply.reason,
    }


def evidence_json(reply: outcomes_pb2.AutonomyEvidence) -> dict[str, Any]:
    return {
        "agent_id": reply.agent_id,
        "decision_type": reply.decision_type or None,
        "by_execution": {
            execution: {
                "judged": e.judged,
                "successes": e.successes,
                "failures": e.failures,
                "unknown": e.unknown,
                "pending": e.pending,
                "mean": _present(e, "mean"),
                "low": _present(e, "low"),
                "high": _present(e, "high"),
            }
            for execution, e in sorted(reply.by_execution.items())
        },
        "agreement_rate": _present(reply, "agreement_rate"),
        "recommendation": reply.recommendation,
        "reason": reply.reason,
    }


# ─── In ────────────────────────────────────────────────────────────────────


def facts_request(event: bytes) -> outcomes_pb2.RecordFactsRequest:
    return outcomes_pb2.RecordFactsRequest(event=event)


def sweep_request(batch_size: int | None) -> outcomes_pb2.SweepRequest:
    return outcomes_pb2.SweepRequest(batch_size=batch_size or 0)


def _turn(turn: TurnIn) -> outcomes_pb2.Turn:
    message = outcomes_pb2.Turn(**turn.model_dump(exclude_none=True, exclude={"rollout"}))
    if turn.rollout is not None:
        message.rollout.CopyFrom(common_pb2.RolloutArm(id=turn.rollout.id, arm=turn.rollout.arm))
    return message


def conversation_request(body: ConversationIn) -> outcomes_pb2.SubmitConversationRequest:
    return outcomes_pb2.SubmitConversationRequest(
        conversation_id=body.conversation_id,
        turns=[_turn(turn) for turn in body.turns],
        **{k: v for k, v in (("skill", body.skill), ("decision_type", body.decision_type)) if v is not None},
    )


def conversation_metrics_request(model: str | None) -> outcomes_pb2.GetConversationMetricsRequest:
    message = outcomes_pb2.GetConversationMetricsRequest()
    if model is not None:
        message.model = model
    return message


def routing_request(
    *, decision_type: str, skill: str, seed: int | None, candidates: list[str]
) -> outcomes_pb2.GetRoutingRequest:
    message = outcomes_pb2.GetRoutingRequest(decision_type=decision_type, skill=skill, candidates=candidates)
    if seed is not None:
        message.seed = seed
    return message


def evaluate_request(*, decision_type: str, model: str) -> outcomes_pb2.EvaluateRequest:
    return outcomes_pb2.EvaluateRequest(decision_type=decision_type, model=model)


def evidence_request(*, agent_id: str, decision_type: str | None) -> outcomes_pb2.GetAutonomyEvidenceRequest:
    return outcomes_pb2.GetAutonomyEvidenceRequest(agent_id=agent_id, decision_type=decision_type or "")


def alerts_request(*, state: str, page: PageRequest) -> outcomes_pb2.ListAlertsRequest:
    return outcomes_pb2.ListAlertsRequest(state=state, page=page_request(page))


def alert_json(alert: outcomes_pb2.Alert) -> dict[str, Any]:
    return {
        "id": alert.id,
        "rule": alert.rule,
        "agent_id": alert.agent_id or None,
        "decision_type": alert.decision_type or None,
        "rollout_id": alert.rollout_id or None,
        "state": alert.state,
        "summary": alert.summary,
        "value": alert.value,
        "threshold": alert.threshold,
        "started_at": timestamp_text(alert.started_at),
        "resolved_at": timestamp_text(alert.resolved_at) if alert.HasField("resolved_at") else None,
    }


def alert_page_json(reply: outcomes_pb2.ListAlertsResponse) -> dict[str, Any]:
    return {"items": [alert_json(a) for a in reply.items], "next_cursor": reply.next_cursor or None}


def alert_delivery_exposition(reply: outcomes_pb2.AlertDelivery) -> str:
    """Alert webhook delivery, Prometheus text format 0.0.4; the scrape leaves
    it out while the outcomes context does not answer (the other figures
    still scrape)."""
    figures = (
        ("outrider_alert_delivery_failures_total", "counter", "Failed alert webhook attempts.", reply.failed_attempts),
        ("outrider_alert_deliveries_total", "counter", "Alert transitions delivered (2xx).", reply.delivered),
        ("outrider_alert_deliveries_pending", "gauge", "Alert transitions not delivered yet.", reply.pending),
    )
    lines = []
    for metric, kind, help_text, value in figures:
        lines += [f"# HELP {metric} {help_text}", f"# TYPE {metric} {kind}", f"{metric} {value}"]
    return "\n".join(lines) + "\n"


def alert_delivery_request() -> outcomes_pb2.GetAlertDeliveryRequest:
    return outcomes_pb2.GetAlertDeliveryRequest()
