"""The counts DESIGN §10's evidence is built from, over gRPC with real
Postgres: known decisions give known inverse-propensity sums (WeighDecisions),
known outcomes per execution (CountExecutions) and known judged windows
(CountJudgedWindows), and only the platform may ask for them."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import grpc
import pytest

from outrider.v1 import decisions_pb2, decisions_pb2_grpc
from outrider.wire import timestamp, timestamp_datetime
from tests.harness import engine_channel, running, service_channel

START = datetime(2026, 11, 1, tzinfo=UTC)


@pytest.fixture
async def served(settings):
    async with running(settings, ["decisions"]):
        yield settings


async def record(
    settings,
    *,
    outcome: str | None,
    decision_type: str = "stall_response",
    agent_id: str = "A1",
    model: str = "m-a",
    propensity: float | None = None,
    execution: str = "",
    minute: int = 0,
    decision_id: str | None = None,
) -> str:
    """One decision, judged `outcome` unless None (pending)."""
    request = decisions_pb2.RecordDecisionRequest(
        id=decision_id or str(uuid.uuid4()),
        decision_type=decision_type,
        agent_id=agent_id,
        subject_id="b-1",
        action="reassign",
        confidence=0.5,
        model=model,
        model_propensity=propensity,
        execution=execution,
        decided_at=timestamp(START + timedelta(minutes=minute)),
    )
    async with engine_channel(settings, "decisions") as channel:
        stub = decisions_pb2_grpc.DecisionsStub(channel)
        recorded = await stub.RecordDecision(request)
        if outcome is not None:
            await stub.SetOutcome(decisions_pb2.SetOutcomeRequest(id=recorded.id, outcome=outcome))
    return recorded.id


async def ask(settings, method: str, request):
    async with service_channel(settings, "decisions") as channel:
        return await getattr(decisions_pb2_grpc.DecisionsStub(channel), method)(request)


async def refused(channel_of, settings, method: str, request) -> grpc.aio.AioRpcError:
    async with channel_of(settings, "decisions") as channel:
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await getattr(decisions_pb2_grpc.DecisionsStub(channel), method)(request)
    return caught.value


async def test_weights_sum_the_matched_judged_decisions_of_the_type(served):
    # (model, propensity, outcome)
    for model, propensity, outcome in [
        ("m-a", 0.5, "success"),
        ("m-a", 0.25, "failure"),
        ("m-a", 0.8, "success"),
        ("m-a", None, "success"),
        ("m-b", 0.5, "failure"),
        ("m-b", 0.2, "success"),
        ("m-a", 0.5, "unknown"),
        ("m-a", 0.5, None),
        ("m-a", None, None),
    ]:
        await record(served, model=model, propensity=propensity, outcome=outcome)
    await record(served, decision_type="route_choice", propensity=0.5, outcome="success")

    weights = await ask(
        served, "WeighDecisions", decisions_pb2.WeighDecisionsRequest(decision_type="stall_response", model="m-a")
    )
    assert (weights.decisions, weights.judged, weights.unknown, weights.pending) == (9, 6, 1, 2)
    assert (weights.logged_successes, weights.with_propensity, weights.matched) == (4, 5, 3)
    assert weights.sum_w == pytest.approx(2 + 4 + 1.25)
    assert weights.sum_w_r == pytest.approx(2 + 1.25)
    assert weights.sum_w2 == pytest.approx(4 + 16 + 1.5625)
    assert weights.sum_w2_r == pytest.approx(4 + 1.5625)
    assert weights.sum_inverse_all == pytest.approx(7.25 + 2 + 5)

    other = await ask(
        served, "WeighDecisions", decisions_pb2.WeighDecisionsRequest(decision_type="stall_response", model="m-b")
    )
    assert (other.matched, other.sum_w, other.sum_w_r) == (2, pytest.approx(7), pytest.approx(5))
    assert other.sum_inverse_all == pytest.approx(weights.sum_inverse_all)
    nobody = await ask(
        served, "WeighDecisions", decisions_pb2.WeighDecisionsRequest(decision_type="never_made", model="m-a")
    )
    assert nobody == decisions_pb2.DecisionWeights()


async def test_executions_count_each_way_an_action_was_carried_out(served):
    for decision_type, execution, outcome in [
        ("stall_response", "autonomous", "success"),
        ("stall_response", "autonomous", "success"),
        ("stall_response", "autonomous", "failure"),
        ("stall_response", "confirmed", "unknown"),
        ("stall_response", "confirmed", None),
        ("stall_response", "", "success"),
        ("route_choice", "overridden", "failure"),
        ("route_choice", "proposed", None),
    ]:
        await record(served, decision_type=decision_type, execution=execution, outcome=outcome)
    await record(served, agent_id="A2", execution="autonomous", outcome="success")

    def counted(reply) -> list[tuple[str, str, int, int, int, int]]:
        return [(i.decision_type, i.execution, i.successes, i.failures, i.unknown, i.pending) for i in reply.items]

    stall = [
        ("stall_response", "", 1, 0, 0, 0),
        ("stall_response", "autonomous", 2, 1, 0, 0),
        ("stall_response", "confirmed", 0, 0, 1, 1),
    ]
    every = await ask(served, "CountExecutions", decisions_pb2.CountExecutionsRequest(agent_id="A1"))
    assert counted(every) == [
        ("route_choice", "overridden", 0, 1, 0, 0),
        ("route_choice", "proposed", 0, 0, 0, 1),
        *stall,
    ]
    one_type = await ask(
        served, "CountExecutions", decisions_pb2.CountExecutionsRequest(agent_id="A1", decision_type="stall_response")
    )
    assert counted(one_type) == stall
    other_agent = await ask(served, "CountExecutions", decisions_pb2.CountExecutionsRequest(agent_id="A2"))
    assert counted(other_agent) == [("stall_response", "autonomous", 1, 0, 0, 0)]
    assert (await ask(served, "CountExecutions", decisions_pb2.CountExecutionsRequest(agent_id="A3"))).items == []


async def test_judged_windows_are_the_latest_judged_by_decision_time_and_the_ones_before(served):
    # A1 × stall_response, oldest first: beyond both windows, then the
    # previous window, then the latest; the fourth and third newest share an
    # instant, and the larger id is the newer.
    tie_newer = "ffffffff-0000-4000-8000-000000000000"
    tie_older = "00000000-0000-4000-8000-000000000000"
    await record(served, outcome="success", minute=0)
    await record(served, outcome="failure", minute=1)
    await record(served, outcome="failure", minute=2)
    await record(served, outcome="success", minute=3)
    await record(served, outcome="failure", minute=4, decision_id=tie_older)
    await record(served, outcome="success", minute=4, decision_id=tie_newer)
    await record(served, outcome="failure", minute=5)
    await record(served, outcome="success", minute=6)
    # Newer than every judged one, and neither judged: not in any window.
    await record(served, outcome="unknown", minute=7)
    await record(served, outcome=None, minute=8)
    # A judged decision of another agent and type, and a pair with nothing judged.
    await record(served, agent_id="A2", decision_type="route_choice", outcome="success", minute=2)
    await record(served, agent_id="A2", decision_type="route_choice", outcome="failure", minute=9)
    await record(served, decision_type="route_choice", outcome="unknown", minute=3)

    reply = await ask(served, "CountJudgedWindows", decisions_pb2.CountJudgedWindowsRequest(window=3))
    windows = {
        (w.agent_id, w.decision_type): (
            w.latest_judged,
            w.latest_successes,
            w.previous_judged,
            w.previous_successes,
            timestamp_datetime(w.latest_decided_at),
        )
        for w in reply.items
    }
    assert windows == {
        # Latest: minute 6 S, 5 F, 4 (newer id) S; previous: 4 (older id) F, 3 S, 2 F.
        ("A1", "stall_response"): (3, 2, 3, 1, START + timedelta(minutes=6)),
        ("A2", "route_choice"): (2, 1, 0, 0, START + timedelta(minutes=9)),
    }
    wide = await ask(served, "CountJudgedWindows", decisions_pb2.CountJudgedWindowsRequest(window=5))
    first = next(w for w in wide.items if w.agent_id == "A1")
    assert (first.latest_judged, first.latest_successes, first.previous_judged, first.previous_successes) == (
        5,
        3,
        3,
        1,
    )
    single = await ask(served, "CountJudgedWindows", decisions_pb2.CountJudgedWindowsRequest(window=1))
    first = next(w for w in single.items if w.agent_id == "A1")
    assert (first.latest_judged, first.latest_successes, first.previous_judged, first.previous_successes) == (
        1,
        1,
        1,
        0,
    )


@pytest.mark.parametrize(
    ("method", "request_message", "field"),
    [
        ("WeighDecisions", decisions_pb2.WeighDecisionsRequest(model="m-a"), "decision_type"),
        ("WeighDecisions", decisions_pb2.WeighDecisionsRequest(decision_type="Stall", model="m-a"), "decision_type"),
        ("WeighDecisions", decisions_pb2.WeighDecisionsRequest(decision_type="stall_response"), "model"),
        ("CountExecutions", decisions_pb2.CountExecutionsRequest(), "agent_id"),
        ("CountExecutions", decisions_pb2.CountExecutionsRequest(agent_id="A1", decision_type="x y"), "decision_type"),
        ("CountJudgedWindows", decisions_pb2.CountJudgedWindowsRequest(), "window"),
        ("CountJudgedWindows", decisions_pb2.CountJudgedWindowsRequest(window=-1), "window"),
        ("CountJudgedWindows", decisions_pb2.CountJudgedWindowsRequest(window=10_001), "window"),
    ],
)
async def test_a_malformed_ask_is_refused_naming_the_field(served, method, request_message, field):
    error = await refused(service_channel, served, method, request_message)
    assert error.code() is grpc.StatusCode.INVALID_ARGUMENT
    assert field in error.details()


@pytest.mark.parametrize(
    ("method", "request_message"),
    [
        ("WeighDecisions", decisions_pb2.WeighDecisionsRequest(decision_type="stall_response", model="m-a")),
        ("CountExecutions", decisions_pb2.CountExecutionsRequest(agent_id="A1")),
        ("CountJudgedWindows", decisions_pb2.CountJudgedWindowsRequest(window=3)),
    ],
)
async def test_the_counts_are_the_platforms_alone(served, method, request_message):
    error = await refused(engine_channel, served, method, request_message)
    assert error.code() is grpc.StatusCode.PERMISSION_DENIED
