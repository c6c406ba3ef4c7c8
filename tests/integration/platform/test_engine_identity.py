"""Each engine its own identity on every edge, against the real NATS,
Postgres, contexts and gateway.

On NATS an engine key's derived credential publishes only its engine's own
subjects, both keys of a rollover work until the previous one is removed,
the services answer a request only on the sender's own inbox, and what the
SDK publishes on an engine's subjects reaches every consumer. An engine key
held to some agents has a run, a heartbeat, a decision (gRPC and REST) or a
span for any other agent refused and counted, while its own land.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from datetime import UTC, datetime, timedelta

import grpc
import pytest
from nats.aio.msg import Msg
from nats.js.api import AckPolicy, ConsumerConfig
from nats.js.errors import KeyNotFoundError
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

from outrider.client.telemetry import TelemetryPublisher
from outrider.engine_identity import BOOKING_FACTS, subjects_of
from outrider.nats_access import CredentialRefused
from outrider.v1 import decisions_pb2, decisions_pb2_grpc
from outrider.wire import json_bytes
from services.common.embedded import EmbeddedNats
from services.common.nats import HEARTBEAT_BUCKET, engine_nkeys, ensure_topology
from services.common.settings import load
from services.outcomes.consumer import DURABLE as FACTS_DURABLE
from services.outcomes.consumer import STREAM as FACTS_STREAM
from services.telemetry.heartbeats import JETSTREAM_REFUSAL
from tests.harness import (
    DISPATCH_KEY,
    DISPATCH_PREVIOUS_KEY,
    ENGINE_KEYS,
    NATS_ENGINE,
    NATS_SERVICE,
    SUPPORT_KEY,
    engine_channel,
    engine_key_nats,
    engine_nats,
    eventually,
    gateway_client,
    internal_headers,
    make_settings,
    running,
    service_nats,
)
from tests.integration.outcomes.helpers import outcomes_db, stored_facts
from tests.integration.platform.nats_support import CANCELLED, LIMITS, Refusals
from tests.integration.telemetry.otlp_support import export, metric_samples, span
from tests.integration.telemetry.support import counters, heartbeat, run_keys, task


@pytest.fixture
async def fleet(settings, template, database):
    """The test's settings with the suite's engines configured: `dispatch`
    (held to DISPATCH_AGENT, during a rollover) and `support` (no list)."""
    return make_settings(template, database, OUTRIDER_ENGINE_KEYS=ENGINE_KEYS)


class Heard:
    """Every message a services' connection hears on `>`, in the order the
    server delivered them: what one publisher sent arrives in its order."""

    def __init__(self) -> None:
        self.messages: asyncio.Queue[Msg] = asyncio.Queue()

    async def note(self, msg: Msg) -> None:
        await self.messages.put(msg)

    async def first_of(self, subjects: set[str], *, data: bytes | None = None) -> Msg:
        while True:
            msg = await asyncio.wait_for(self.messages.get(), 10)
            if msg.subject in subjects and (data is None or msg.data == data):
                return msg


async def listening(client) -> Heard:
    heard = Heard()
    await client.subscribe(">", cb=heard.note)
    # A request answered after the subscription proves the server holds it.
    await client.jetstream().stream_info("TELEMETRY")
    return heard


# ─── NATS: each key its own subjects ───────────────────────────────────────


async def test_each_engine_key_publishes_its_own_runs_heartbeats_and_facts(stack, topology):
    service, js = topology
    heard = await listening(service)
    for engine, key in (("dispatch", DISPATCH_KEY), ("dispatch", DISPATCH_PREVIOUS_KEY), ("support", SUPPORT_KEY)):
        client = await engine_key_nats(stack.nats_url, engine, key)
        try:
            engine_js = client.jetstream(timeout=5)
            run = await engine_js.publish(f"telemetry.task.{engine}", b"{}", headers={"Nats-Msg-Id": key})
            fact = await engine_js.publish(f"facts.booking.{engine}", CANCELLED, headers={"Nats-Msg-Id": key})
            await client.publish(f"telemetry.agent.{engine}", b"{}")
            await heard.first_of({f"telemetry.agent.{engine}"})
        finally:
            await client.close()
        assert (run.stream, fact.stream) == ("TELEMETRY", "FACTS")
    assert (await js.stream_info("TELEMETRY")).state.messages == 3
    assert (await js.stream_info("FACTS")).state.messages == 3


@pytest.mark.parametrize(
    "subject",
    [
        "telemetry.task.support",
        "telemetry.agent.support",
        "facts.booking.support",
        "telemetry.task",
        "telemetry.agent",
        "facts.booking",
        "telemetry.otlp",
        "telemetry.task.dispatch.more",
        "facts.other.dispatch",
    ],
)
async def test_an_engine_key_cannot_publish_another_engines_subjects_or_the_bare_ones(stack, topology, subject):
    service, js = topology
    heard = await listening(service)
    refusals = Refusals()
    client = await engine_key_nats(stack.nats_url, "dispatch", DISPATCH_KEY, error_cb=refusals.note)
    try:
        # The probe, then a sentinel on the engine's own subject, from one
        # connection: the server takes them in that order, so a probe that
        # got through reaches the listener first.
        await client.publish(subject, CANCELLED)
        await client.publish("telemetry.agent.dispatch", b"sentinel")
        first = await heard.first_of({subject, "telemetry.agent.dispatch"})
        assert first.subject == "telemetry.agent.dispatch", f"dispatch's credential published on {subject}"
        await eventually(lambda: _true(refusals.mention(subject)), what=f"the publish on {subject} refused")
    finally:
        await client.close()
    assert (await js.stream_info("TELEMETRY")).state.messages == 0
    assert (await js.stream_info("FACTS")).state.messages == 0


@pytest.mark.parametrize("subject", ["_INBOX_engine.>", "_INBOX_engine_support.>", "telemetry.task.dispatch"])
async def test_an_engine_key_hears_only_its_own_inbox(stack, topology, subject):
    service, _ = topology
    refusals = Refusals()
    client = await engine_key_nats(stack.nats_url, "dispatch", DISPATCH_KEY, error_cb=refusals.note)
    try:
        got: asyncio.Queue[Msg] = asyncio.Queue()
        sentinel = "_INBOX_engine_dispatch.sentinel"
        await client.subscribe(sentinel, cb=got.put)
        await client.subscribe(subject, cb=got.put)
        await eventually(lambda: _true(refusals.mention(subject)), what=f"the subscription to {subject} refused")
        await service.publish(subject.replace(">", "x"), b"{}")
        await service.publish(sentinel, b"{}")
        first = await asyncio.wait_for(got.get(), 5)
        assert first.subject == sentinel, f"dispatch's credential heard {first.subject}"
    finally:
        await client.close()


async def _true(value: bool) -> bool:
    return value


async def test_the_sdk_publishes_an_engines_runs_heartbeats_and_facts_and_each_consumer_reads_them(
    fleet, template, database
):
    # A facts durable made before engines had subjects of their own reads
    # only the bare subject: starting the outcomes context brings it to both.
    service = await service_nats(fleet.nats_url)
    try:
        js = service.jetstream()
        await ensure_topology(js, LIMITS)
        await js.add_consumer(
            FACTS_STREAM,
            ConsumerConfig(durable_name=FACTS_DURABLE, ack_policy=AckPolicy.EXPLICIT, filter_subject=BOOKING_FACTS),
        )
    finally:
        await service.close()
    async with running(fleet, ["telemetry", "outcomes"]):
        publisher = await TelemetryPublisher.connect(fleet.nats_url, engine="dispatch", key=DISPATCH_KEY, timeout_s=10)
        try:
            assert publisher.subjects == subjects_of("dispatch")
            finished = datetime.now(UTC)
            await publisher.task_run(
                agent_id="DISPATCH_AGENT",
                task_id="t-sdk",
                task_type="assign",
                status="succeeded",
                started_at=finished - timedelta(seconds=2),
                finished_at=finished,
            )
            await publisher.heartbeat(agent_id="DISPATCH_AGENT", state="running")
            ack = await publisher.booking_facts(
                {"subject_id": "BK-77", "at": "2026-09-29T10:00:00+00:00", "status": "assigned"}, msg_id="BK-77@1"
            )
        finally:
            await publisher.close()
        assert ack.stream == FACTS_STREAM and not ack.duplicate
        await eventually(
            lambda: counters(fleet),
            lambda seen: seen["inserted"] == 1 and seen["heartbeats"] == 1,
            what="the run written and the heartbeat stored",
        )
        conn = await outcomes_db(template, database)
        try:
            facts = await eventually(
                lambda: stored_facts(conn, "BK-77"), lambda facts: facts is not None, what="the facts merged"
            )
        finally:
            await conn.close()
    assert facts["status"]["value"] == "assigned"
    assert await run_keys(template, database) == [("DISPATCH_AGENT", "t-sdk")]


# ─── A rollover ────────────────────────────────────────────────────────────

NEW_KEY, OLD_KEY = "rotated-dispatch-key-new-0123456789ab", "rotated-dispatch-key-old-0123456789ab"


def _server_for(tmp_path, keys: list[str]) -> EmbeddedNats:
    """The embedded server as `outrider up` configures it for these dispatch keys."""
    settings = load(
        {
            "OUTRIDER_DATA_DIR": str(tmp_path / "settings"),
            "OUTRIDER_ENGINE_KEYS": json.dumps({"dispatch": keys}),
            "OUTRIDER_INTERNAL_KEY": "rotation-default-key-0123456789abcdef",
        }
    )
    return EmbeddedNats(
        tmp_path / "data", None, service=NATS_SERVICE, engine=NATS_ENGINE, engines=engine_nkeys(settings)
    )


async def _publishes_a_run(url: str, key: str, task_id: str) -> None:
    publisher = await TelemetryPublisher.connect(url, engine="dispatch", key=key, timeout_s=10)
    try:
        started = datetime.now(UTC)
        await publisher.task_run(
            agent_id="DISPATCH_AGENT",
            task_id=task_id,
            task_type="assign",
            status="succeeded",
            started_at=started,
            finished_at=started + timedelta(seconds=1),
        )
    finally:
        await publisher.close()


async def test_both_keys_of_a_rollover_connect_and_the_old_one_stops_once_removed(tmp_path):
    during = _server_for(tmp_path, [NEW_KEY, OLD_KEY])
    url = during.start()
    try:
        service = await service_nats(url)
        try:
            await ensure_topology(service.jetstream(), LIMITS)
        finally:
            await service.close()
        await _publishes_a_run(url, NEW_KEY, "t-new")
        await _publishes_a_run(url, OLD_KEY, "t-old")
    finally:
        during.stop()

    after = _server_for(tmp_path, [NEW_KEY])
    url = after.start()
    try:
        with pytest.raises(CredentialRefused):
            await TelemetryPublisher.connect(url, engine="dispatch", key=OLD_KEY, timeout_s=10)
        await _publishes_a_run(url, NEW_KEY, "t-after")
        service = await service_nats(url)
        try:
            assert (await service.jetstream().stream_info("TELEMETRY")).state.messages == 3
        finally:
            await service.close()
    finally:
        after.stop()


# ─── Agents outside the engine's list ──────────────────────────────────────


async def test_runs_and_heartbeats_for_an_agent_outside_the_list_are_refused_and_counted(fleet, template, database):
    async with running(fleet, ["telemetry", "decisions"]), gateway_client(fleet) as client:
        dispatch = await engine_key_nats(fleet.nats_url, "dispatch", DISPATCH_KEY)
        support = await engine_key_nats(fleet.nats_url, "support", SUPPORT_KEY)
        try:
            dispatch_js = dispatch.jetstream(timeout=5)
            # The payload names another agent: the subject, not the payload, says who sent it.
            await dispatch_js.publish("telemetry.task.dispatch", task("EXCEPTION_AGENT", "t-1"))
            await dispatch_js.publish("telemetry.task.dispatch", task("DISPATCH_AGENT", "t-2"))
            await support.jetstream(timeout=5).publish("telemetry.task.support", task("EXCEPTION_AGENT", "s-1"))
            await dispatch.publish("telemetry.agent.dispatch", heartbeat("EXCEPTION_AGENT", "hijacked"))
            await dispatch.publish("telemetry.agent.dispatch", heartbeat("DISPATCH_AGENT", "idle"))
            await dispatch.flush()
        finally:
            await dispatch.close()
            await support.close()

        seen = await eventually(
            lambda: counters(fleet),
            lambda seen: (
                seen["inserted"] == 2 and seen["heartbeats"] == 1 and sum(seen["agent_refusals"].values()) == 2
            ),
            what="two runs written, one heartbeat stored, one of each refused",
        )
        assert dict(seen["agent_refusals"]) == {"task_run": 1, "heartbeat": 1}
        assert seen["malformed"] == 0
        assert await run_keys(template, database) == [("DISPATCH_AGENT", "t-2"), ("EXCEPTION_AGENT", "s-1")]
        service = await service_nats(fleet.nats_url)
        try:
            assert await (await service.jetstream().key_value(HEARTBEAT_BUCKET)).keys() == ["DISPATCH_AGENT"]
            # The refused run was terminated, not left to come back.
            info = await service.jetstream().consumer_info("TELEMETRY", "telemetry-ingest")
            assert (info.num_pending, info.num_ack_pending) == (0, 0)
        finally:
            await service.close()
        scrape = await client.get("/metrics", headers=internal_headers())
    samples = metric_samples(scrape.text)
    assert samples['outrider_engine_agent_refusals_total{kind="task_run"}'] == 1
    assert samples['outrider_engine_agent_refusals_total{kind="heartbeat"}'] == 1


def _decision(agent_id: str) -> decisions_pb2.RecordDecisionRequest:
    return decisions_pb2.RecordDecisionRequest(
        id=str(uuid.uuid4()),
        decision_type="stall_response",
        agent_id=agent_id,
        subject_id="booking-4411",
        action="reassign",
        confidence=0.8,
        context_json=json_bytes({"facts": {"stall_minutes": 12}}),
    )


async def test_decisions_for_an_agent_outside_the_list_are_refused_over_grpc_and_rest(fleet, template, database):
    async with running(fleet, ["decisions", "telemetry"]), gateway_client(fleet) as client:
        async with engine_channel(fleet, "decisions", DISPATCH_KEY) as channel:
            stub = decisions_pb2_grpc.DecisionsStub(channel)
            batch = await stub.RecordDecisions(
                decisions_pb2.RecordDecisionsRequest(
                    decisions=[_decision("EXCEPTION_AGENT"), _decision("DISPATCH_AGENT")]
                )
            )
            with pytest.raises(grpc.aio.AioRpcError) as alone:
                await stub.RecordDecision(_decision("EXCEPTION_AGENT"))
        async with engine_channel(fleet, "decisions", SUPPORT_KEY) as channel:
            unlimited = await decisions_pb2_grpc.DecisionsStub(channel).RecordDecision(_decision("EXCEPTION_AGENT"))
        body = {
            "decision_type": "stall_response",
            "agent_id": "EXCEPTION_AGENT",
            "subject_id": "booking-4411",
            "context": {"facts": {"stall_minutes": 12}},
            "decision": {"action": "reassign", "confidence": 0.8},
        }
        refused = await client.post("/internal/agent-decisions", json=body, headers=internal_headers(DISPATCH_KEY))
        own = await client.post(
            "/internal/agent-decisions",
            json={**body, "agent_id": "DISPATCH_AGENT"},
            headers=internal_headers(DISPATCH_PREVIOUS_KEY),
        )
        scrape = await client.get("/metrics", headers=internal_headers())
    first, second = batch.results
    assert first.error_code == "AGENT_NOT_PERMITTED" and "EXCEPTION_AGENT" in first.error_message
    assert second.created and not second.error_code
    assert alone.value.code() == grpc.StatusCode.PERMISSION_DENIED and "EXCEPTION_AGENT" in alone.value.details()
    assert unlimited.created
    assert refused.status_code == 403, refused.text
    assert refused.json()["error"]["code"] == "AGENT_NOT_PERMITTED"
    assert "EXCEPTION_AGENT" in refused.json()["error"]["message"]
    assert own.status_code == 201, own.text
    assert metric_samples(scrape.text)['outrider_engine_agent_refusals_total{kind="decision"}'] == 3


async def test_spans_for_an_agent_outside_the_list_are_refused_alone_and_counted(fleet, template, database):
    request = export(
        span(1, "run", gen_ai__agent__name="EXCEPTION_AGENT"),
        span(2, "run", trace=b"\x02" * 16, gen_ai__agent__name="DISPATCH_AGENT"),
    )
    headers = {"Content-Type": "application/x-protobuf", "X-Internal-Key": DISPATCH_KEY}
    async with running(fleet, ["telemetry", "decisions"]), gateway_client(fleet) as client:
        answer = await client.post("/v1/traces", content=request.SerializeToString(), headers=headers)
        await eventually(
            lambda: counters(fleet), lambda seen: seen["otlp_runs_inserted"] == 1, what="the engine's own span written"
        )
        scrape = await client.get("/metrics", headers=internal_headers())
    partial = ExportTraceServiceResponse.FromString(answer.content).partial_success
    assert answer.status_code == 200
    assert partial.rejected_spans == 1 and "EXCEPTION_AGENT" in partial.error_message
    assert [agent for agent, _ in await run_keys(template, database)] == ["DISPATCH_AGENT"]
    assert metric_samples(scrape.text)['outrider_engine_agent_refusals_total{kind="span"}'] == 1


# ─── No answer onto a subject the caller chose ────────────────────────────


@pytest.mark.parametrize(
    "reply", ["telemetry.otlp", "$JS.API.STREAM.DELETE.TELEMETRY", "$KV.agent_heartbeats.EXCEPTION_AGENT", "_INBOX.x"]
)
async def test_the_heartbeat_sink_answers_only_on_the_senders_own_inbox(fleet, reply):
    async with running(fleet, ["telemetry"]):
        service = await service_nats(fleet.nats_url)
        shared = await engine_nats(fleet.nats_url)
        dispatch = await engine_key_nats(fleet.nats_url, "dispatch", DISPATCH_KEY)
        try:
            heard = await listening(service)
            for client, subject in ((shared, "telemetry.agent"), (dispatch, "telemetry.agent.dispatch")):
                await client.publish(subject, b"{}", reply=reply)
                # The barrier: a request on the same subject from the same
                # connection, answered on the sender's own inbox. The sink
                # handles one subject's messages in order and answers in
                # that order, so an answer to the probe would reach the
                # listener before this one.
                sentinel = await client.request(subject, b"{}", timeout=10)
                assert sentinel.data == JETSTREAM_REFUSAL
                first = await heard.first_of({reply, sentinel.subject}, data=JETSTREAM_REFUSAL)
                assert first.subject == sentinel.subject, f"the sink answered on {reply}"
            seen = await counters(fleet)
            assert seen["replies_refused"] == 2
            assert (await service.jetstream().stream_info("TELEMETRY")).state.messages == 0
            with pytest.raises(KeyNotFoundError):
                await (await service.jetstream().key_value(HEARTBEAT_BUCKET)).get("EXCEPTION_AGENT")
        finally:
            for client in (service, shared, dispatch):
                await client.close()
