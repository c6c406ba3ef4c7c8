"""Issue 28's reproductions, end to end: each is refused by name, never a 5xx, and nothing is stored.

Findings 2a, 2b, 2c, 2e, 7, 8 and 9, sent exactly as the attacker sent them,
through the gateway (REST), to the contexts directly (gRPC, as engines call
them), on NATS and over OTLP.
"""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

import asyncpg
import grpc
import jwt
import pytest
from google.protobuf.timestamp_pb2 import Timestamp
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

from launcher import cli
from outrider.v1 import decisions_pb2, decisions_pb2_grpc, registry_pb2, registry_pb2_grpc
from services.telemetry.ingest import STREAM
from tests.harness import (
    INTERNAL_KEY,
    JWT_SECRET,
    bearer,
    engine_channel,
    eventually,
    gateway_client,
    internal_headers,
    person,
    running,
    service_channel,
    with_env,
)
from tests.integration.telemetry.otlp_support import START, attribute, export, span
from tests.integration.telemetry.support import broker, counters, run_keys, task

YEAR_ONE_AT_PLUS_14 = "0001-01-01T00:00:00+14:00"
LAST_SECOND_AT_MINUS_14 = "9999-12-31T23:59:59-14:00"
HUGE = int("9" * 4000)
DECISION = {
    "decision_type": "stall_response",
    "agent_id": "EXCEPTION_AGENT",
    "subject_id": "b-1",
    "decision": {"action": "nudge", "confidence": 0.5},
}
HUMAN_INPUT = {"provider": "tracker:ops/bookings", "external_id": "e-1", "subject_id": "b-1", "body": "go ahead"}
LOOK_ALIKES = {
    "zero-width space": "EXCEPTION\u200b_AGENT",
    "right-to-left override": "\u202eEXCEPTION_AGENT",
    "Cyrillic O": "EXCEPTI\u041eN_AGENT",
    "all Cyrillic": "\u0415\u0425\u0421\u0415\u0420\u0422\u0406\u041e\u041d_\u0410\u0412\u0421",
}


def _refused_by_name(reply: Any, field: str) -> None:
    assert reply.status_code == 422, reply.text
    assert field in reply.json()["error"]["details"]["fields"], reply.text


async def _count(template: Any, database: str, schema: str, sql: str) -> int:
    conn = await asyncpg.connect(template.raw_dsn(database), server_settings={"search_path": schema})
    try:
        return await conn.fetchval(sql)
    finally:
        await conn.close()


# ─── 2a: a 4,000-digit integer in a threshold ──────────────────────────────


@pytest.mark.parametrize("part", ["min", "max", "step", "default"])
async def test_a_4000_digit_integer_in_a_threshold_is_refused_by_name(settings, template, database, part) -> None:
    spec = {"type": "integer", "min": 5, "max": 60, "step": 5, "default": 15}
    draft = {
        "id": "late_rider_digest",
        "agent_id": "CONSOLE_OPS_AGENT",
        "title": "Late rider digest",
        "tool_names": ["scan_bookings"],
    }
    async with running(settings, ["registry"]), gateway_client(settings) as client:
        in_schema = await client.post(
            "/admin/ai/skills",
            content=json.dumps({**draft, "thresholds_schema": {"late": {**spec, part: HUGE}}}),
            headers={**bearer(role=1), "content-type": "application/json"},
        )
        in_values = await client.post(
            "/admin/ai/skills",
            content=json.dumps({**draft, "thresholds_schema": {"late": spec}, "thresholds": {"late": HUGE}}),
            headers={**bearer(role=1), "content-type": "application/json"},
        )
        async with service_channel(settings, "registry", person(role=1)) as channel:
            with pytest.raises(grpc.aio.AioRpcError) as direct:
                await registry_pb2_grpc.RegistryStub(channel).CreateSkill(
                    registry_pb2.CreateSkillRequest(
                        **draft, thresholds_schema_json=json.dumps({"late": {**spec, part: HUGE}}).encode()
                    )
                )
    _refused_by_name(in_schema, f"thresholds_schema.late.{part}")
    _refused_by_name(in_values, "thresholds.late")
    assert direct.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert f"thresholds_schema.late.{part}" in direct.value.details()
    assert (
        await _count(template, database, "registry", "select count(*) from skills where id = 'late_rider_digest'") == 0
    )


# ─── 2b, 2c: instants the calendar cannot shift ────────────────────────────


async def test_instants_at_the_calendar_s_ends_are_refused_by_name(settings, template, database) -> None:
    engine = internal_headers()
    async with running(settings, ["decisions", "outcomes"]), gateway_client(settings) as client:
        decided = await client.post(
            "/internal/agent-decisions", json={**DECISION, "decided_at": YEAR_ONE_AT_PLUS_14}, headers=engine
        )
        human = await client.post(
            "/internal/human-inputs", json={**HUMAN_INPUT, "at": YEAR_ONE_AT_PLUS_14}, headers=engine
        )
        facts_at = await client.post(
            "/internal/facts", json={"subject_id": "b-1", "at": YEAR_ONE_AT_PLUS_14, "cancelled": True}, headers=engine
        )
        delivered = await client.post(
            "/internal/facts",
            json={"subject_id": "b-1", "at": "2026-09-29T10:00:00Z", "delivered_at": YEAR_ONE_AT_PLUS_14},
            headers=engine,
        )
        listed = {
            role: await client.get(
                "/admin/ai/decisions", params={"decided_from": LAST_SECOND_AT_MINUS_14}, headers=bearer(role=role)
            )
            for role in (3, 4)
        }
        async with engine_channel(settings, "decisions") as channel:
            stub = decisions_pb2_grpc.DecisionsStub(channel)
            with pytest.raises(grpc.aio.AioRpcError) as direct:
                await stub.RecordDecision(
                    decisions_pb2.RecordDecisionRequest(
                        decision_type="stall_response",
                        agent_id="EXCEPTION_AGENT",
                        subject_id="b-1",
                        action="nudge",
                        confidence=0.5,
                        decided_at=Timestamp(seconds=-62_135_596_800),
                    )
                )
            with pytest.raises(grpc.aio.AioRpcError) as human_direct:
                await stub.RecordHumanInput(
                    decisions_pb2.RecordHumanInputRequest(**HUMAN_INPUT, at=Timestamp(seconds=253_402_300_799))
                )
    _refused_by_name(decided, "decided_at")
    _refused_by_name(human, "at")
    _refused_by_name(facts_at, "at")
    _refused_by_name(delivered, "delivered_at")
    for reply in listed.values():
        _refused_by_name(reply, "decided_from")
    assert direct.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "decided_at" in direct.value.details()
    assert human_direct.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "at" in human_direct.value.details()
    assert await _count(template, database, "decisions", "select count(*) from decisions") == 0
    assert await _count(template, database, "decisions", "select count(*) from human_decisions") == 0
    assert await _count(template, database, "outcomes", "select count(*) from subject_facts where facts <> '{}'") == 0


# ─── 2e, 7: claims ─────────────────────────────────────────────────────────


def _token(**changes: Any) -> dict[str, str]:
    now = int(time.time())
    claims = {"sub": "u-1", "email": "ops@example.com", "role": 1, "tenant_id": 0, "iat": now, "exp": now + 3600}
    claims.update(changes)
    payload = {key: value for key, value in claims.items() if value is not None}
    return {"Authorization": f"Bearer {jwt.encode(payload, JWT_SECRET, algorithm='HS256')}"}


FORGED = {
    "NUL in sub": ({"sub": "u-1\x00"}, "sub"),
    "lone surrogate in sub": ({"sub": "u-\ud800"}, "sub"),
    "NUL in email": ({"email": "ops\x00@example.com"}, "email"),
    "lone surrogate in email": ({"email": "ops\udfff@example.com"}, "email"),
    "10 KB sub": ({"sub": "u" * 10_000}, "sub"),
    "20 KB email": ({"email": "o" * 20_000 + "@example.com"}, "email"),
    "exp 10^30": ({"exp": 10**30}, "exp"),
    "string exp": ({"exp": str(int(time.time()) + 3600)}, "exp"),
    "no iat": ({"iat": None}, "iat"),
    "a year long": ({"exp": int(time.time()) + 366 * 86400}, "exp"),
}


@pytest.mark.parametrize("case", sorted(FORGED))
async def test_a_token_outside_the_claims_rule_is_a_401_naming_the_claim(settings, case) -> None:
    changes, claim = FORGED[case]
    async with running(settings, ["registry"]), gateway_client(settings) as client:
        write = await client.patch(
            "/admin/ai/agents/EXCEPTION_AGENT", json={"model": "claude-sonnet-4-5"}, headers=_token(**changes)
        )
        read = await client.get("/admin/ai/agents", headers=_token(**changes))
    for reply in (write, read):
        assert reply.status_code == 401, reply.text
        assert reply.json()["error"]["details"] == {"claim": claim}, reply.text
        assert "metadata" not in reply.text


async def test_the_token_command_mints_tokens_the_gateway_takes(settings, capsys) -> None:
    args = cli.parser().parse_args(["token", "--role", "1"])
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(cli, "_settings", lambda: settings)
        assert args.handler(args) == 0
        minted = capsys.readouterr().out.strip()
        too_long = cli.parser().parse_args(["token", "--role", "1", "--ttl-hours", str(settings.jwt_max_ttl_hours + 1)])
        assert too_long.handler(too_long) == 2
        assert "exp" in capsys.readouterr().err
    async with running(settings, ["registry"]), gateway_client(settings) as client:
        reply = await client.get("/admin/ai/agents", headers={"Authorization": f"Bearer {minted}"})
    assert reply.status_code == 200, reply.text


# ─── 8: run and span times ─────────────────────────────────────────────────


def _dated(task_id: str, started: str, finished: str) -> bytes:
    body = json.loads(task("EXCEPTION_AGENT", task_id))
    return json.dumps({**body, "started_at": started, "finished_at": finished}).encode()


async def test_runs_dated_outside_the_bounds_are_terminated_and_the_good_run_after_them_lands(
    settings, template, database
) -> None:
    quick = with_env(settings, telemetry_batch_wait_ms=100)
    dated = {
        "year 1 to 9999": ("0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00"),
        "before 2000": ("1999-12-31T23:00:00Z", "1999-12-31T23:59:00Z"),
        "a year ahead": ("2099-01-01T00:00:00Z", "2099-01-01T00:00:01Z"),
    }
    async with broker(quick) as (_, js), running(quick, ["telemetry"]):
        await eventually(lambda: _stream_exists(js), what="the telemetry stream")
        for name, (started, finished) in dated.items():
            await js.publish("telemetry.task", _dated(name, started, finished))
        await js.publish("telemetry.task", task("EXCEPTION_AGENT", "good"))
        await eventually(lambda: run_keys(template, database), lambda keys: keys != [], what="the good run written")
        seen = await counters(quick)
    assert await run_keys(template, database) == [("EXCEPTION_AGENT", "good")]
    assert seen["malformed"] == len(dated)


async def _stream_exists(js: Any) -> bool:
    try:
        await js.stream_info(STREAM)
    except Exception:  # noqa: BLE001 - any failure means "not there yet"
        return False
    return True


async def test_a_span_dated_2554_is_refused_alone(settings) -> None:
    late = span(1, "handle_booking")
    late.start_time_unix_nano = late.end_time_unix_nano = 2**64 - 1
    on_time = span(2, "handle_booking")
    headers = {"Content-Type": "application/x-protobuf", "X-Internal-Key": INTERNAL_KEY}
    async with running(settings, ["telemetry"]), gateway_client(settings) as client:
        reply = await client.post("/v1/traces", content=export(late, on_time).SerializeToString(), headers=headers)
    assert reply.status_code == 200, reply.content
    answer = ExportTraceServiceResponse.FromString(reply.content)
    assert answer.partial_success.rejected_spans == 1
    assert "start_time_unix_nano" in answer.partial_success.error_message
    assert START < 2**64 - 1


# ─── 9: look-alike agent ids ───────────────────────────────────────────────


@pytest.mark.parametrize("name", sorted(LOOK_ALIKES))
async def test_a_look_alike_agent_id_is_refused_at_rest_grpc_and_otlp(settings, template, database, name) -> None:
    agent = LOOK_ALIKES[name]
    headers = {"Content-Type": "application/x-protobuf", "X-Internal-Key": INTERNAL_KEY}
    bad_span = span(1, "handle_booking")
    bad_span.attributes.append(attribute("gen_ai.agent.name", agent))
    async with running(settings, ["decisions", "telemetry"]), gateway_client(settings) as client:
        rest = await client.post(
            "/internal/agent-decisions", json={**DECISION, "agent_id": agent}, headers=internal_headers()
        )
        traced = await client.post("/v1/traces", content=export(bad_span).SerializeToString(), headers=headers)
        async with engine_channel(settings, "decisions") as channel:
            with pytest.raises(grpc.aio.AioRpcError) as direct:
                await decisions_pb2_grpc.DecisionsStub(channel).RecordDecision(
                    decisions_pb2.RecordDecisionRequest(
                        id=str(uuid.uuid4()),
                        decision_type="stall_response",
                        agent_id=agent,
                        subject_id="b-1",
                        action="nudge",
                        confidence=0.5,
                    )
                )
    _refused_by_name(rest, "agent_id")
    assert direct.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "agent_id" in direct.value.details()
    assert ExportTraceServiceResponse.FromString(traced.content).partial_success.rejected_spans == 1
    assert await _count(template, database, "decisions", "select count(*) from decisions") == 0
