"""OTLP traces in, end to end: a real OpenTelemetry SDK exporter and plain
HTTP posts against the gateway served over HTTP, through JetStream and the
telemetry ingest, read back in insights."""

from __future__ import annotations

import asyncio
import base64
import gzip
import json

import httpx
from google.protobuf import json_format
from google.rpc import status_pb2
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse
from opentelemetry.trace import Status, StatusCode

from services.telemetry.otlp import codec as otlp_codec
from services.telemetry.otlp.codec import SUBJECT
from services.telemetry.otlp.ingest import DURABLE
from tests.harness import (
    INTERNAL_KEY,
    bearer,
    database_away,
    eventually,
    internal_headers,
    reserved_port,
    running,
    with_env,
)
from tests.integration.telemetry.otlp_support import (
    export,
    live_gateway,
    metric_samples,
    published,
    register,
    rows,
    span,
    table_text,
    tracer_provider,
)
from tests.integration.telemetry.support import ACKNOWLEDGING, answers, broker, counters, execute

PROMPT = "Customer Ananya Rao, 14 Residency Road, asks where parcel 1001 is"
ANSWER = "Parcel 1001 is with rider Vikram, arriving by 18:30"
PROTOBUF = {"Content-Type": "application/x-protobuf", "X-Internal-Key": INTERNAL_KEY}
JSON = {"Content-Type": "application/json", "X-Internal-Key": INTERNAL_KEY}


def otlp_json(request) -> bytes:
    """OTLP/JSON as an exporter writes it: ids in hex, not base64."""
    payload = json_format.MessageToDict(request)
    for resource_spans in payload.get("resourceSpans", []):
        for scope_spans in resource_spans.get("scopeSpans", []):
            for item in scope_spans.get("spans", []):
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in item:
                        item[key] = base64.b64decode(item[key]).hex()
    return json.dumps(payload).encode()


async def insights(base: str, query: str = "?days=1") -> dict:
    async with httpx.AsyncClient(base_url=base) as client:
        reply = await client.get(f"/admin/ai/insights{query}", headers=bearer(role=3))
    assert reply.status_code == 200, reply.text
    return reply.json()


async def test_sdk_spans_become_runs_and_model_calls_and_contents_are_never_kept(settings, template, database):
    priced = with_env(
        settings, telemetry_batch_wait_ms=100, model_prices={"claude-sonnet-4-*": {"input": 3, "output": 15}}
    )
    await register(template, database, "DISPATCH_AGENT")
    async with (
        running(priced, ["registry", "telemetry"]),
        live_gateway(priced) as base,
        broker(priced) as (nc, _),
        published(nc) as tapped,
    ):

        def engine() -> None:
            with tracer_provider(base, "booking-engine") as provider:
                tracer = provider.get_tracer("booking-engine")
                with tracer.start_as_current_span("handle_booking"):
                    with tracer.start_as_current_span(
                        "chat claude-sonnet-4",
                        attributes={
                            "gen_ai.operation.name": "chat",
                            "gen_ai.provider.name": "anthropic",
                            "gen_ai.request.model": "claude-sonnet-4",
                            "gen_ai.response.model": "claude-sonnet-4-20250514",
                            "gen_ai.usage.input_tokens": 1200,
                            "gen_ai.usage.output_tokens": 80,
                            "gen_ai.input.messages": json.dumps([{"role": "user", "content": PROMPT}]),
                            "gen_ai.output.messages": json.dumps([{"role": "assistant", "content": ANSWER}]),
                        },
                    ) as call:
                        call.add_event("gen_ai.user.message", {"content": PROMPT})
                    with tracer.start_as_current_span(
                        "invoke_agent Dispatcher",
                        attributes={
                            "gen_ai.operation.name": "invoke_agent",
                            "gen_ai.agent.name": "DISPATCH_AGENT",
                        },
                    ):
                        with tracer.start_as_current_span(
                            "chat claude-haiku",
                            attributes={
                                "gen_ai.operation.name": "chat",
                                "gen_ai.agent.name": "DISPATCH_AGENT",
                                "gen_ai.request.model": "claude-haiku",
                                "gen_ai.usage.input_tokens": 300,
                                "gen_ai.usage.output_tokens": 20,
                                "error.type": "OverloadedError",
                                "gen_ai.system_instructions": PROMPT,
                            },
                        ) as failed:
                            failed.set_status(Status(StatusCode.ERROR, "overloaded"))
                    with tracer.start_as_current_span("GET /bookings/1001"):
                        pass

        await asyncio.to_thread(engine)
        await eventually(
            lambda: counters(priced),
            lambda seen: seen["otlp_runs_inserted"] == 2 and seen["model_calls_inserted"] == 2,
            what="two runs and two model calls from the SDK's spans",
        )
        body = await insights(base)
        async with httpx.AsyncClient(base_url=base) as client:
            metrics = metric_samples((await client.get("/metrics", headers=internal_headers())).text)
        held = b"".join(tapped)
        assert held, "the gateway published what it took in"

    agents = {a["agent_id"]: a for a in body["agents"]}
    engine_row, dispatcher = agents["booking-engine"], agents["DISPATCH_AGENT"]
    assert (engine_row["runs"], engine_row["registered"], engine_row["model_calls"]) == (1, False, 1)
    assert (engine_row["input_tokens"], engine_row["output_tokens"]) == (1200, 80)
    assert engine_row["estimated_cost"] == round((1200 * 3 + 80 * 15) / 1e6, 6)
    assert (dispatcher["runs"], dispatcher["registered"], dispatcher["model_calls"]) == (1, True, 1)
    assert dispatcher["estimated_cost"] is None, "claude-haiku has no price, so the agent's total is unknown"
    models = {(m["agent_id"], m["model"]): m for m in body["models"]}
    sonnet = models[("booking-engine", "claude-sonnet-4-20250514")]
    assert (sonnet["calls"], sonnet["failures"], sonnet["provider"]) == (1, 0, "anthropic")
    haiku = models[("DISPATCH_AGENT", "claude-haiku")]
    assert (haiku["calls"], haiku["failures"], haiku["input_tokens"], haiku["estimated_cost"]) == (1, 1, 300, None)
    assert body["prices_configured"] is True and body["unpriced_models"] == ["claude-haiku"]
    assert body["receiving"] is True

    runs = await rows(template, database, "select agent_id, task_type, status from runs order by agent_id")
    assert runs == [
        {"agent_id": "DISPATCH_AGENT", "task_type": "invoke_agent Dispatcher", "status": "succeeded"},
        {"agent_id": "booking-engine", "task_type": "handle_booking", "status": "succeeded"},
    ]
    [failed_call] = await rows(
        template, database, "select error_type, status from model_calls where agent_id = 'DISPATCH_AGENT'"
    )
    assert failed_call == {"error_type": "OverloadedError", "status": "failed"}
    # The contents were sent; they are nowhere after the gateway.
    for secret in ("Ananya", "Residency", "Vikram"):
        assert secret not in await table_text(template, database)
        assert secret.encode() not in held
    assert metrics['outrider_otlp_spans_total{outcome="accepted"}'] == 4
    assert metrics['outrider_otlp_spans_total{outcome="ignored"}'] == 1
    assert metrics["outrider_telemetry_model_calls_inserted_total"] == 2


async def test_json_posts_and_gzip_protobuf_posts_are_read_back(settings):
    # An empty price table: with it insights price nothing, and say so.
    fast = with_env(settings, telemetry_batch_wait_ms=100, model_prices={})
    first = export(
        span(1, "sweep_bookings", ms=250),
        span(
            2,
            "chat",
            parent=1,
            ms=90,
            gen_ai__operation__name="chat",
            gen_ai__request__model="claude-sonnet-4",
            gen_ai__usage__input_tokens=10,
            gen_ai__usage__output_tokens=2,
        ),
        service="json-engine",
    )
    second = export(span(1, "sweep_bookings", trace=b"\x07" * 16, failed=True), service="json-engine")
    async with running(fast, ["telemetry"]), live_gateway(fast) as base, httpx.AsyncClient(base_url=base) as client:
        as_json = await client.post(
            "/v1/traces",
            content=otlp_json(first),
            headers={"Content-Type": "application/json", "Authorization": f"Bearer {INTERNAL_KEY}"},
        )
        zipped = await client.post(
            "/v1/traces",
            content=gzip.compress(second.SerializeToString()),
            headers={**PROTOBUF, "Content-Encoding": "gzip"},
        )
        await eventually(lambda: counters(fast), lambda seen: seen["otlp_runs_inserted"] == 2, what="both runs written")
        body = await insights(base)
    assert as_json.status_code == 200 and as_json.headers["content-type"] == "application/json"
    assert as_json.json() == {}
    assert zipped.status_code == 200 and zipped.headers["content-type"] == "application/x-protobuf"
    assert ExportTraceServiceResponse.FromString(zipped.content) == ExportTraceServiceResponse()
    [agent] = body["agents"]
    assert (agent["agent_id"], agent["runs"], agent["failures"], agent["model_calls"]) == ("json-engine", 2, 1, 1)
    assert agent["avg_ms"] == 175.0
    [model] = body["models"]
    assert (model["model"], model["input_tokens"], model["output_tokens"], model["avg_ms"]) == (
        "claude-sonnet-4",
        10,
        2,
        90.0,
    )
    assert body["prices_configured"] is False and model["estimated_cost"] is None


async def test_refusals_are_otlp_status_answers_counted_by_reason_and_lose_nothing(settings):
    small = with_env(settings, telemetry_batch_wait_ms=100, otlp_max_body_bytes=4096)
    good = export(span(1, "handle_booking"))
    bomb = gzip.compress(b"\x00" * 1_000_000)
    cases = [
        ({"Content-Type": "application/json"}, otlp_json(good), 401, 16),
        ({**JSON, "X-Internal-Key": "wrong-key"}, otlp_json(good), 401, 16),
        ({"Content-Type": "text/plain", "X-Internal-Key": INTERNAL_KEY}, b"spans", 415, 3),
        ({**PROTOBUF, "Content-Encoding": "br"}, b"\x00", 415, 3),
        (PROTOBUF, b"\x0a\xff\xff\xff", 400, 3),
        (JSON, b'{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "not-hex"}]}]}]}', 400, 3),
        ({**PROTOBUF, "Content-Encoding": "gzip"}, b"not gzip at all", 400, 3),
        (PROTOBUF, b"\x0a" + b"\x00" * 5000, 413, 3),
        ({**PROTOBUF, "Content-Encoding": "gzip"}, bomb, 413, 3),
    ]
    async with running(small, ["telemetry"]), live_gateway(small) as base, httpx.AsyncClient(base_url=base) as client:
        answers = [await client.post("/v1/traces", content=body, headers=headers) for headers, body, _, _ in cases]
        accepted = await client.post("/v1/traces", content=good.SerializeToString(), headers=PROTOBUF)
        await eventually(
            lambda: counters(small), lambda seen: seen["otlp_runs_inserted"] == 1, what="the good export written"
        )
        metrics = metric_samples((await client.get("/metrics", headers=internal_headers())).text)
    for (headers, _, status, code), answer in zip(cases, answers, strict=True):
        assert answer.status_code == status, (headers, answer.content)
        if headers["Content-Type"] == "application/x-protobuf":
            assert answer.headers["content-type"] == "application/x-protobuf"
            refusal = status_pb2.Status.FromString(answer.content)
        else:
            assert answer.headers["content-type"] == "application/json"
            refusal = json_format.Parse(answer.content, status_pb2.Status())
        assert refusal.code == code and refusal.message, answer.content
    assert "not-hex" in json.loads(answers[5].content)["message"]
    assert accepted.status_code == 200
    assert {
        outcome: metrics[f'outrider_otlp_requests_total{{outcome="{outcome}"}}']
        for outcome in ("accepted", "unauthenticated", "unsupported", "undecodable", "too_large", "unavailable")
    } == {"accepted": 1, "unauthenticated": 2, "unsupported": 2, "undecodable": 3, "too_large": 2, "unavailable": 0}


async def test_without_jetstream_the_answer_is_a_503_to_retry(settings):
    away = with_env(settings, nats_url=f"nats://127.0.0.1:{reserved_port()}")
    async with live_gateway(away) as base, httpx.AsyncClient(base_url=base) as client:
        answer = await client.post("/v1/traces", content=export(span(1, "x")).SerializeToString(), headers=PROTOBUF)
        health = await client.get("/healthz")
    assert answer.status_code == 503 and answer.headers["retry-after"] == "5"
    assert status_pb2.Status.FromString(answer.content).code == 14
    assert health.status_code == 200, "the rest of the gateway answers without NATS"


async def test_spans_missing_what_they_need_are_refused_alone_and_the_rest_written(settings, template, database):
    fast = with_env(settings, telemetry_batch_wait_ms=100)
    request = export(
        span(1, "handle_booking"),
        span(2, "no trace id", trace=b""),
        span(3, "chat", parent=1, gen_ai__operation__name="chat"),
        span(4, "chat", parent=1, gen_ai__operation__name="chat", gen_ai__usage__input_tokens=-5),
    )
    request.resource_spans.extend(export(span(5, "nobody's run", trace=b"\x05" * 16), service=None).resource_spans)
    async with running(fast, ["telemetry"]), live_gateway(fast) as base, httpx.AsyncClient(base_url=base) as client:
        answer = await client.post("/v1/traces", content=otlp_json(request), headers=JSON)
        await eventually(
            lambda: counters(fast),
            lambda seen: seen["otlp_runs_inserted"] == 1 and seen["model_calls_inserted"] == 1,
            what="the usable run and model call written",
        )
        metrics = metric_samples((await client.get("/metrics", headers=internal_headers())).text)
    assert answer.status_code == 200
    partial = answer.json()["partialSuccess"]
    assert partial["rejectedSpans"] == "3"
    message = partial["errorMessage"]
    assert message.startswith("3 span(s) rejected:")
    for named in ("trace_id", "gen_ai.usage.input_tokens must be a non-negative token count", "agent names no agent"):
        assert named in message
    [call] = await rows(template, database, "select span_id, input_tokens, output_tokens from model_calls")
    assert call == {"span_id": (3).to_bytes(8, "big").hex(), "input_tokens": None, "output_tokens": None}
    assert metrics['outrider_otlp_spans_total{outcome="rejected"}'] == 3
    assert metrics['outrider_otlp_spans_total{outcome="accepted"}'] == 2


async def test_a_resent_export_is_stored_once_and_a_copy_past_the_stream_is_written_once(settings, template, database):
    fast = with_env(settings, telemetry_batch_wait_ms=100)
    request = export(span(1, "handle_booking"), span(2, "chat", parent=1, gen_ai__operation__name="chat"))
    async with (
        running(fast, ["telemetry"]),
        live_gateway(fast) as base,
        broker(fast) as (_, js),
        httpx.AsyncClient(base_url=base) as client,
    ):
        # An exporter retrying a request whose answer it never saw, once in
        # the other encoding: the stream drops the re-sends by message id.
        for body, headers in (
            (request.SerializeToString(), PROTOBUF),
            (request.SerializeToString(), PROTOBUF),
            (otlp_json(request), JSON),
        ):
            assert (await client.post("/v1/traces", content=body, headers=headers)).status_code == 200
        # The stream numbers only what it stored; consumed, it no longer holds it.
        stored = await js.stream_info("TELEMETRY")
        # A copy the stream cannot recognise (one published without the id,
        # as a re-send past the duplicate window arrives) is refused by the tables.
        [message] = otlp_codec.admit(request).messages
        await js.publish(SUBJECT, message)
        seen = await eventually(
            lambda: counters(fast), lambda c: c["otlp_duplicates"] == 2, what="the copy refused by the tables"
        )
    assert stored.state.last_seq == 1
    assert (seen["otlp_received"], seen["otlp_runs_inserted"], seen["model_calls_inserted"]) == (2, 1, 1)
    assert len(await rows(template, database, "select 1 from runs")) == 1
    assert len(await rows(template, database, "select 1 from model_calls")) == 1


async def test_spans_taken_in_while_the_database_is_away_land_once_when_it_returns(settings, template, database):
    fast = with_env(settings, telemetry_batch_size=5, telemetry_batch_wait_ms=100, telemetry_ack_wait_s=5)

    def trace(n: int) -> bytes:
        return export(
            span(1, "handle_booking", trace=n.to_bytes(16, "big")),
            span(
                2,
                "chat",
                parent=1,
                trace=n.to_bytes(16, "big"),
                gen_ai__operation__name="chat",
                gen_ai__usage__input_tokens=n,
            ),
        ).SerializeToString()

    async with (
        running(fast, ["telemetry"]),
        live_gateway(fast) as base,
        broker(fast) as (nc, js),
        answers(nc, DURABLE) as answered,
        httpx.AsyncClient(base_url=base) as client,
    ):
        for n in range(1, 11):
            assert (await client.post("/v1/traces", content=trace(n), headers=PROTOBUF)).status_code == 200
        await eventually(lambda: counters(fast), lambda seen: seen["otlp_runs_inserted"] == 10, what="first traces")
        landed = (await js.stream_info("TELEMETRY")).state.last_seq
        async with database_away(template, database):
            for n in range(11, 41):
                answer = await client.post("/v1/traces", content=trace(n), headers=PROTOBUF)
                assert answer.status_code == 200, "taking spans in needs no database"
            # Sent again across the outage: dropped by the stream, by its message id.
            await client.post("/v1/traces", content=trace(3), headers=PROTOBUF)

            # Until the ingest has answered for spans it took in the outage,
            # whatever it answered: then not one of those answers was an ack.
            async def answered_in_the_outage() -> list[str]:
                return answered.after(landed)

            given = await eventually(answered_in_the_outage, what="the ingest answered for spans sent in the outage")
            assert ACKNOWLEDGING.isdisjoint(given), f"spans were acked while the database was away: {given}"
        seen = await eventually(
            lambda: counters(fast),
            lambda c: (c["otlp_runs_inserted"], c["model_calls_inserted"], c["otlp_duplicates"]) == (40, 40, 0),
            timeout=30,
            what="every trace written once after the database returned",
        )
        stored = await js.stream_info("TELEMETRY")
    # Forty stored (the stream numbers only what it stores), and every one taken out again.
    assert (stored.state.last_seq, stored.state.messages) == (40, 0)
    assert seen["otlp_unwritable"] == 0 and seen["otlp_malformed"] == 0
    calls = await rows(template, database, "select sum(input_tokens) as total, count(*) as n from model_calls")
    assert calls == [{"total": sum(range(1, 41)), "n": 40}]


async def test_a_message_that_does_not_decode_is_terminated_and_counted(settings):
    fast = with_env(settings, telemetry_batch_wait_ms=100)
    [good] = otlp_codec.admit(export(span(1, "handle_booking"))).messages
    async with running(fast, ["telemetry"]), broker(fast) as (_, js):
        await js.publish(SUBJECT, b"\x0a\xff\xff")
        await js.publish(SUBJECT, good)
        seen = await eventually(
            lambda: counters(fast), lambda c: c["otlp_received"] == 2 and c["otlp_runs_inserted"], what="both handled"
        )
        info = await eventually(
            lambda: js.consumer_info("TELEMETRY", "telemetry-otlp-ingest"),
            lambda i: i.num_ack_pending == 0 and i.num_pending == 0,
            what="nothing held",
        )
    assert seen["otlp_malformed"] == 1 and info.num_redelivered == 0


async def test_a_message_that_cannot_be_written_does_not_hold_its_batch_back(settings, template, database):
    fast = with_env(settings, telemetry_batch_wait_ms=300)
    # A table that refuses one agent's rows: the write fails for that message
    # only, with the database answering.
    await execute(
        template,
        database,
        """
        create function telemetry.refuse_poison() returns trigger language plpgsql as $$
        begin
            if new.agent_id = 'POISON' then raise exception 'refused for the test'; end if;
            return new;
        end $$;
        create trigger refuse_poison before insert on telemetry.runs
            for each row execute function telemetry.refuse_poison();
    """,
    )
    messages = [
        otlp_codec.admit(export(span(1, "run", trace=n.to_bytes(16, "big")), service=service)).messages[0]
        for n, service in enumerate(["engine-a", "POISON", "engine-b"], start=1)
    ]
    async with running(fast, ["telemetry"]), broker(fast) as (_, js):
        for message in messages:
            await js.publish(SUBJECT, message)
        seen = await eventually(
            lambda: counters(fast),
            lambda c: c["otlp_unwritable"] == 1,
            timeout=30,
            what="the poison message terminated after its last delivery",
        )
    assert seen["otlp_runs_inserted"] == 2
    assert sorted(r["agent_id"] for r in await rows(template, database, "select agent_id from runs")) == [
        "engine-a",
        "engine-b",
    ]
