"""Alerts end to end on the real database: a judged-success drop fires one
signed webhook to a local receiver and its resolution sends the resolved
transition; a receiver failing some calls still gets each transition once;
a deliverer stopped mid-delivery and started afresh does not send a
delivered transition again; ListAlerts pages firing before resolved."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import threading
import uuid
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest

from outrider.v1 import (
    common_pb2,
    decisions_pb2,
    decisions_pb2_grpc,
    outcomes_pb2,
    registry_pb2_grpc,
    telemetry_pb2_grpc,
)
from outrider.wire import timestamp
from services.common.clients import ContextClients
from services.common.db import context_engine
from services.outcomes import codec, store
from services.outcomes.alerting.delivery import Deliverer
from services.outcomes.alerting.job import Alerter
from services.outcomes.alerting.signals import Reading, SignalSources
from services.outcomes.rules import alerts
from services.outcomes.rules.alerts import JudgedWindow, Signals, Thresholds
from tests.harness import bearer, engine_channel, gateway_client, running

SECRET = "s" * 40


@dataclass
class Receiver:
    """A webhook receiver: answers 500 to the calls `fail` picks, can hold a
    call until released, and records each call it answered."""

    fail: Any = lambda n: False
    hold: threading.Event | None = None
    held: threading.Event = field(default_factory=threading.Event)
    calls: int = 0
    accepted: list[dict[str, Any]] = field(default_factory=list)
    deliveries: Counter[str] = field(default_factory=Counter)
    attempts: Counter[str] = field(default_factory=Counter)
    bad_signatures: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


@pytest.fixture
def receiver() -> Iterator[tuple[Receiver, str]]:
    state = Receiver()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            with state.lock:
                state.calls += 1
                n = state.calls
                state.attempts[self.headers["X-Outrider-Delivery"]] += 1
            if state.hold is not None and not state.held.is_set():
                state.held.set()
                state.hold.wait(10)
            expected = "sha256=" + hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
            if not hmac.compare_digest(expected, self.headers["X-Outrider-Signature"]):
                state.bad_signatures += 1
            if state.fail(n):
                self.send_response(500)
                self.end_headers()
                return
            with state.lock:
                state.accepted.append(json.loads(body))
                state.deliveries[self.headers["X-Outrider-Delivery"]] += 1
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state, f"http://127.0.0.1:{server.server_port}/hook"
    finally:
        if state.hold is not None:
            state.hold.set()
        server.shutdown()


class Windows:
    """The judged windows a pass reads (CountJudgedWindows' answer)."""

    def __init__(self) -> None:
        self.items: list[JudgedWindow] = []

    async def read(self) -> Reading:
        return Reading(Signals(windows=list(self.items)), frozenset({alerts.JUDGED_SUCCESS_DROP}))


DROPPED = JudgedWindow("agent-a", "refund", 100, 50, 100, 85)
STEADY = JudgedWindow("agent-a", "refund", 100, 84, 100, 85)


async def deliver_all(deliverer: Deliverer, *, rounds: int = 200) -> None:
    for _ in range(rounds):
        await deliverer.deliver_due()
        async with deliverer._engine.connect() as conn:
            left = (await conn.exec_driver_sql("select count(*) from alert_outbox where delivered_at is null")).scalar()
        if not left:
            return
        await asyncio.sleep(0.01)
    raise AssertionError("transitions still undelivered")


async def test_a_drop_fires_one_signed_webhook_and_its_resolution_another(settings, receiver):
    state, url = receiver
    engine = context_engine(settings.database_url, "outcomes")
    windows = Windows()
    alerter = Alerter(engine=engine, sources=windows, thresholds=Thresholds())
    try:
        async with httpx.AsyncClient() as client:
            deliverer = Deliverer(engine=engine, url=url, secret=SECRET, client=client, backoff_base_s=0.01)
            windows.items = [DROPPED]
            assert [m.transition for m in await alerter.evaluate()] == ["firing"]
            assert await alerter.evaluate() == []  # still firing: no second row, no second webhook
            await deliver_all(deliverer)
            windows.items = [STEADY]
            assert [m.transition for m in await alerter.evaluate()] == ["resolved"]
            await deliver_all(deliverer)
        async with engine.connect() as conn:
            listed = await store.list_alerts(conn, state=None, after=None, limit=10)
    finally:
        await engine.dispose()
    assert state.bad_signatures == 0
    assert [b["transition"] for b in state.accepted] == ["firing", "resolved"]
    fired = state.accepted[0]
    assert fired["alert"]["rule"] == "judged_success_drop"
    assert fired["alert"]["agent_id"] == "agent-a"
    assert fired["alert"]["value"] == pytest.approx(0.35)
    assert "\n" not in fired["text"] and "[firing] judged_success_drop" in fired["text"]
    assert state.accepted[1]["alert"]["id"] == fired["alert"]["id"]
    assert state.accepted[1]["alert"]["resolved_at"] is not None
    assert [(a.rule, a.state) for a in listed] == [("judged_success_drop", "resolved")]


async def test_a_failing_receiver_still_gets_each_transition_once(settings, receiver):
    state, url = receiver
    state.fail = lambda n: n % 3 != 0  # two calls of every three fail
    engine = context_engine(settings.database_url, "outcomes")
    windows = Windows()
    alerter = Alerter(engine=engine, sources=windows, thresholds=Thresholds())
    try:
        async with httpx.AsyncClient() as client:
            deliverer = Deliverer(engine=engine, url=url, secret=SECRET, client=client, backoff_base_s=0.01)
            windows.items = [JudgedWindow(f"agent-{i}", "refund", 100, 50, 100, 85) for i in range(4)]
            await alerter.evaluate()
            windows.items = []
            await alerter.evaluate()
            await deliver_all(deliverer)
            assert deliverer.failures > 0
    finally:
        await engine.dispose()
    assert len(state.deliveries) == 8
    # Retries carried the id of the transition they repeated.
    assert set(state.attempts) == set(state.deliveries)
    assert sum(state.attempts.values()) > 8
    assert set(state.deliveries.values()) == {1}
    assert Counter(b["transition"] for b in state.accepted) == {"firing": 4, "resolved": 4}


async def test_a_deliverer_stopped_mid_delivery_does_not_resend_what_was_delivered(settings, receiver):
    state, url = receiver
    engine = context_engine(settings.database_url, "outcomes")
    windows = Windows()
    alerter = Alerter(engine=engine, sources=windows, thresholds=Thresholds())
    try:
        windows.items = [DROPPED]
        await alerter.evaluate()
        async with httpx.AsyncClient() as client:
            await Deliverer(engine=engine, url=url, secret=SECRET, client=client).deliver_due()
        windows.items = []
        await alerter.evaluate()
        # The resolved transition's POST is held by the receiver; the
        # deliverer is stopped while it waits, as a replica that dies would be.
        state.hold = threading.Event()
        state.fail = lambda n: n == 2  # the held call, answered only after the stop
        async with httpx.AsyncClient() as client:
            task = asyncio.create_task(Deliverer(engine=engine, url=url, secret=SECRET, client=client).deliver_due())
            await asyncio.to_thread(state.held.wait, 5)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
        state.hold.set()
    finally:
        await engine.dispose()
    restarted = context_engine(settings.database_url, "outcomes")
    try:
        async with httpx.AsyncClient() as client:
            await deliver_all(Deliverer(engine=restarted, url=url, secret=SECRET, client=client))
    finally:
        await restarted.dispose()
    # The firing transition, delivered before the stop, came once; the
    # resolved one, whose held call the receiver refused, came once more
    # from the restarted deliverer, under the id the held call carried.
    assert [b["transition"] for b in state.accepted] == ["firing", "resolved"]
    assert set(state.deliveries.values()) == {1}
    assert state.calls == 3


async def test_list_alerts_pages_firing_before_resolved(settings):
    engine = context_engine(settings.database_url, "outcomes")
    windows = Windows()
    alerter = Alerter(engine=engine, sources=windows, thresholds=Thresholds())
    try:
        windows.items = [JudgedWindow(f"agent-{i}", "refund", 100, 50, 100, 85) for i in range(3)]
        await alerter.evaluate()
        windows.items = windows.items[:1]
        await alerter.evaluate()
        pages: list[list[tuple[str, str]]] = []
        cursor = ""
        while True:
            request = outcomes_pb2.ListAlertsRequest(page=common_pb2.PageRequest(limit=2, cursor=cursor))
            state, after, limit = codec.list_alerts_query(request)
            async with engine.connect() as conn:
                rows = await store.list_alerts(conn, state=state, after=after, limit=limit)
            reply = codec.alerts_response(rows, limit)
            pages.append([(a.agent_id, a.state) for a in reply.items])
            cursor = reply.next_cursor
            if not cursor:
                break
        async with engine.connect() as conn:
            resolved = await store.list_alerts(conn, state="resolved", after=None, limit=10)
    finally:
        await engine.dispose()
    flat = [row for page in pages for row in page]
    assert [len(p) for p in pages] == [2, 1]
    assert flat[0] == ("agent-0", "firing")
    assert sorted(flat[1:]) == [("agent-1", "resolved"), ("agent-2", "resolved")]
    assert {a.state for a in resolved} == {"resolved"}


@pytest.fixture
async def alerts_api(settings):
    engine = context_engine(settings.database_url, "outcomes")
    windows = Windows()
    alerter = Alerter(engine=engine, sources=windows, thresholds=Thresholds())
    try:
        windows.items = [JudgedWindow(f"agent-{i}", "refund", 100, 50, 100, 85) for i in range(2)]
        await alerter.evaluate()
        windows.items = windows.items[:1]
        await alerter.evaluate()
    finally:
        await engine.dispose()
    async with running(settings, ["outcomes"]), gateway_client(settings) as client:
        yield client


@pytest.mark.parametrize(("role", "status"), [(1, 200), (2, 403), (3, 200), (4, 200), (5, 403)])
async def test_alerts_route_is_for_staff_and_filters_by_state(alerts_api, role, status):
    reply = await alerts_api.get("/admin/ai/alerts?state=firing", headers=bearer(role=role))
    assert reply.status_code == status
    if status != 200:
        return
    body = reply.json()
    assert [(a["agent_id"], a["state"], a["resolved_at"]) for a in body["items"]] == [("agent-0", "firing", None)]
    assert body["items"][0]["decision_type"] == "refund"
    assert body["next_cursor"] is None
    both = (await alerts_api.get("/admin/ai/alerts?limit=1", headers=bearer(role=role))).json()
    assert [a["state"] for a in both["items"]] == ["firing"]
    rest = await alerts_api.get(f"/admin/ai/alerts?limit=1&cursor={both['next_cursor']}", headers=bearer(role=role))
    assert [(a["agent_id"], a["state"]) for a in rest.json()["items"]] == [("agent-1", "resolved")]


async def test_alerts_route_refuses_an_unknown_state_and_no_token(alerts_api):
    assert (await alerts_api.get("/admin/ai/alerts?state=open", headers=bearer(role=1))).status_code == 422
    assert (await alerts_api.get("/admin/ai/alerts")).status_code == 401


async def test_a_drop_recorded_in_the_decisions_context_fires_through_its_api(settings, receiver):
    """The signals over gRPC: judged decisions recorded in the decisions
    context, their windows read by CountJudgedWindows, the drop fired and
    delivered. Telemetry and registry are not running: their rules are left
    unknown rather than resolving anything."""
    state, url = receiver
    start = datetime(2026, 11, 1, tzinfo=UTC)
    async with running(settings, ["decisions"]):
        async with engine_channel(settings, "decisions") as channel:
            stub = decisions_pb2_grpc.DecisionsStub(channel)
            # 20 judged decisions, 18 successes; then 20 more, 6 successes.
            for minute in range(40):
                success = minute % 10 != 0 if minute < 20 else minute % 10 < 3
                recorded = await stub.RecordDecision(
                    decisions_pb2.RecordDecisionRequest(
                        id=str(uuid.uuid4()),
                        decision_type="refund",
                        agent_id="agent-g",
                        subject_id="b-1",
                        action="reassign",
                        confidence=0.5,
                        model="m",
                        decided_at=timestamp(start + timedelta(minutes=minute)),
                    )
                )
                await stub.SetOutcome(
                    decisions_pb2.SetOutcomeRequest(id=recorded.id, outcome="success" if success else "failure")
                )
        clients = ContextClients(settings)
        engine = context_engine(settings.database_url, "outcomes")
        try:
            sources = SignalSources(
                decisions=clients.stub("decisions", decisions_pb2_grpc.DecisionsStub),
                telemetry=clients.stub("telemetry", telemetry_pb2_grpc.TelemetryStub),
                registry=clients.stub("registry", registry_pb2_grpc.RegistryStub),
                window=20,
            )
            reading = await sources.read()
            moves = await Alerter(engine=engine, sources=sources, thresholds=Thresholds()).evaluate()
            async with httpx.AsyncClient() as client:
                await deliver_all(Deliverer(engine=engine, url=url, secret=SECRET, client=client))
        finally:
            await engine.dispose()
            await clients.close()
    assert reading.known_rules == {alerts.JUDGED_SUCCESS_DROP}
    assert [(m.transition, m.key.agent_id, m.key.decision_type) for m in moves] == [("firing", "agent-g", "refund")]
    [sent] = state.accepted
    assert sent["alert"]["value"] == pytest.approx(18 / 20 - 6 / 20)
    assert state.bad_signatures == 0
