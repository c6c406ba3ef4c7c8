"""Every edge that takes a class of input refuses its hostile values by name.

One property per class, sent to each decoder that reads that class from
outside: the gateway's request models (REST), each context's gRPC codec
(engines call it directly), the NATS payload rules and the OTLP span
mapping. Each edge answers a value within the class's bounds or a refusal
naming the field; no other exception escapes it (issue 28, findings 2, 8, 9).
"""

from __future__ import annotations

import base64
import json
import math
import struct
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import jwt
import pytest
from google.protobuf.timestamp_pb2 import Timestamp
from hypothesis import example, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from gateway.auth import Principal, verify_token
from gateway.contracts.decisions import DecisionIn
from gateway.contracts.humans import HumanInputIn
from gateway.contracts.outcomes import FactsIn
from gateway.contracts.registry import SkillDraft, SkillPatch
from gateway.errors import ApiError
from outrider.v1 import common_pb2, decisions_pb2, outcomes_pb2, playground_pb2, registry_pb2, telemetry_pb2
from services.common import guards
from services.common.errors import InvalidArgument
from services.decisions import codec as decisions_codec
from services.decisions import rules as decisions_rules
from services.decisions.human import codec as human_codec
from services.outcomes import codec as outcomes_codec
from services.outcomes.rules.facts import check_storable, decode_booking_event
from services.playground import codec as playground_codec
from services.registry import codec as registry_codec
from services.telemetry import codec as telemetry_codec
from services.telemetry.otlp.rules import Span, map_span
from services.telemetry.rules import parse_heartbeat, parse_task

OFFSETS = st.builds(lambda minutes: timezone(timedelta(minutes=minutes)), st.integers(-(24 * 60 - 1), 24 * 60 - 1))
INSTANTS = st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31, 23, 59, 59), timezones=OFFSETS)
EXTREMES = [
    datetime(1, 1, 1, tzinfo=timezone(timedelta(hours=14))),
    datetime(9999, 12, 31, 23, 59, 59, tzinfo=timezone(timedelta(hours=-14))),
    datetime(1, 1, 1, tzinfo=UTC),
    datetime(1999, 12, 31, 23, 59, tzinfo=UTC),
    datetime(2554, 7, 21, tzinfo=UTC),
]
# Seconds a Timestamp can carry: int64, far past both ends of the calendar.
EPOCH_SECONDS = st.integers(-(2**63), 2**63 - 1)
HUGE_NUMBERS = st.one_of(
    st.integers(min_value=2**63, max_value=10**4000), st.integers(max_value=-(2**63) - 1, min_value=-(10**4000))
)
ENGINE_TEXT = st.text(st.characters(min_codepoint=1, max_codepoint=0x10FFFF, exclude_categories=("Cs",)), max_size=20)
HIDDEN = st.sampled_from(["\u200b", "\u202e", "\u2066", "\ufeff", "\u041e", "\u0410", "\u00ad", "\u180e"])
PROPERTY = settings(max_examples=60, deadline=None)
SECRET = "a-secret-of-thirty-two-bytes-or-more"


def _text(instant: datetime) -> str:
    return instant.isoformat()


def _now() -> datetime:
    return datetime.now(UTC)


def _clearly_outside(instant: datetime) -> bool:
    """Outside the bounds whatever the clock did while the example ran."""
    return instant < guards.EARLIEST or instant > _now() + guards.AHEAD + timedelta(days=1)


def _answer(call: Callable[[], Any]) -> tuple[Any, Exception | None]:
    try:
        return call(), None
    except (InvalidArgument, ValidationError) as refusal:
        return None, refusal


def _named(refusal: Exception | None) -> set[str]:
    if isinstance(refusal, ValidationError):
        return {".".join(str(part) for part in error["loc"]) for error in refusal.errors()}
    assert isinstance(refusal, InvalidArgument)
    return set(refusal.fields)


# ─── Instants: REST bodies and queries ─────────────────────────────────────

DECISION = {
    "decision_type": "stall_response",
    "agent_id": "EXCEPTION_AGENT",
    "subject_id": "b-1",
    "decision": {"action": "nudge", "confidence": 0.5},
}
HUMAN_INPUT = {"provider": "tracker:ops/bookings", "external_id": "e-1", "subject_id": "b-1", "body": "ok"}
REST_INSTANTS = [
    (DecisionIn, DECISION, "decided_at"),
    (HumanInputIn, HUMAN_INPUT, "at"),
    (FactsIn, {"subject_id": "b-1", "status": "ok"}, "at"),
    (FactsIn, {"subject_id": "b-1", "at": "2026-09-29T10:00:00Z"}, "delivered_at"),
]


@pytest.mark.parametrize(
    ("model", "body", "field"), REST_INSTANTS, ids=[f"{m.__name__}.{f}" for m, _, f in REST_INSTANTS]
)
@PROPERTY
@given(instant=INSTANTS)
def test_rest_instants_are_bounded_or_refused_by_name(
    model: Any, body: dict[str, Any], field: str, instant: datetime
) -> None:
    for value in (instant, *EXTREMES):
        parsed, refusal = _answer(lambda value=value: model.model_validate({**body, field: _text(value)}))
        if refusal is None:
            assert guards.EARLIEST <= getattr(parsed, field) <= _now() + guards.AHEAD + timedelta(days=1)
        else:
            assert _named(refusal) == {field}
        if _clearly_outside(value):
            assert refusal is not None


# ─── Instants: gRPC requests ───────────────────────────────────────────────


def _stamp(seconds: int) -> Timestamp:
    return Timestamp(seconds=seconds)


GRPC_INSTANTS: list[tuple[str, Callable[[Timestamp], Any]]] = [
    (
        "decided_at",
        lambda at: decisions_codec.draft_from_proto(
            decisions_pb2.RecordDecisionRequest(decision_type="stall_response", agent_id="A", decided_at=at)
        ),
    ),
    (
        "decided_from",
        lambda at: decisions_codec.listing_from_proto(decisions_pb2.ListDecisionsRequest(decided_from=at)),
    ),
    ("decided_to", lambda at: decisions_codec.listing_from_proto(decisions_pb2.ListDecisionsRequest(decided_to=at))),
    (
        "decided_before",
        lambda at: decisions_codec.pending_listing_from_proto(decisions_pb2.ListPendingRequest(decided_before=at)),
    ),
    (
        "decided_since",
        lambda at: decisions_codec.counted_span_from_proto(decisions_pb2.CountOutcomesRequest(decided_since=at)),
    ),
    (
        "decided_before",
        lambda at: decisions_codec.counted_span_from_proto(decisions_pb2.CountOutcomesRequest(decided_before=at)),
    ),
    (
        "start",
        lambda at: decisions_codec.outcome_series_from_proto(decisions_pb2.CountOutcomeSeriesRequest(start=at)),
    ),
    ("end", lambda at: decisions_codec.outcome_series_from_proto(decisions_pb2.CountOutcomeSeriesRequest(end=at))),
    ("start", lambda at: telemetry_codec.asked_window(telemetry_pb2.GetInsightsRequest(start=at))),
    ("end", lambda at: telemetry_codec.asked_window(telemetry_pb2.GetRunSeriesRequest(end=at))),
    (
        "at",
        lambda at: human_codec.input_from_proto(
            decisions_pb2.RecordHumanInputRequest(**HUMAN_INPUT, at=at), now=_now()
        ),
    ),
]


@pytest.mark.parametrize(("field", "decode"), GRPC_INSTANTS, ids=[name for name, _ in GRPC_INSTANTS])
@PROPERTY
@given(seconds=EPOCH_SECONDS)
@example(seconds=-62_135_596_800)
@example(seconds=253_402_300_799)
@example(seconds=2**63 - 1)
def test_grpc_timestamps_are_bounded_or_refused_by_name(
    field: str, decode: Callable[[Timestamp], Any], seconds: int
) -> None:
    if seconds == 0:
        return  # proto3's unset Timestamp: the field was not sent
    now = _now()
    _, refusal = _answer(lambda: decode(_stamp(seconds)))
    if not guards.EARLIEST.timestamp() <= seconds <= (now + guards.AHEAD).timestamp():
        assert refusal is not None and _named(refusal) == {field}
    elif field == "at" and seconds > (now + human_codec.CLOCK_SKEW).timestamp():
        # A person's message cannot have been written in the future.
        assert refusal is not None and _named(refusal) == {field}
    elif seconds < (now - timedelta(minutes=1)).timestamp():
        assert refusal is None


# ─── Instants: cursors a caller hands back ─────────────────────────────────


def _forged_cursor(instant: datetime, second_part: str) -> str:
    parts = json.dumps([instant.isoformat(), second_part]).encode()
    return base64.urlsafe_b64encode(parts).decode().rstrip("=")


# Each listing's cursor parser, answering the instant of the position it names.
CURSORED: list[tuple[str, str, Callable[[str], datetime]]] = [
    (
        "decisions",
        str(uuid.uuid4()),
        lambda cursor: (
            decisions_codec.listing_from_proto(
                decisions_pb2.ListDecisionsRequest(page=common_pb2.PageRequest(cursor=cursor))
            ).after.decided_at
        ),
    ),
    (
        "human decisions",
        "7",
        lambda cursor: (
            human_codec.listing_from_proto(
                decisions_pb2.ListHumanDecisionsRequest(subject_id="b-1", page=common_pb2.PageRequest(cursor=cursor))
            ).after.written_at
        ),
    ),
    (
        "playground runs",
        str(uuid.uuid4()),
        lambda cursor: playground_codec.runs_page(
            playground_pb2.ListRunsRequest(page=common_pb2.PageRequest(cursor=cursor))
        )[1][0],
    ),
]


@pytest.mark.parametrize(("listing", "second_part", "decode"), CURSORED, ids=[name for name, _, _ in CURSORED])
@PROPERTY
@given(instant=INSTANTS)
def test_an_instant_in_a_forged_cursor_is_a_position_the_driver_can_send_or_refused_by_name(
    listing: str, second_part: str, decode: Callable[[str], datetime], instant: datetime
) -> None:
    for value in (instant, *EXTREMES):
        moment, refusal = _answer(lambda value=value: decode(_forged_cursor(value, second_part)))
        if refusal is not None:
            assert _named(refusal) == {"cursor"}, listing
            continue
        # What the driver does with every timestamptz it sends.
        assert moment.astimezone(UTC) == value, listing


# ─── Instants: NATS payloads ───────────────────────────────────────────────

RUN = {"agent_id": "EXCEPTION_AGENT", "task_id": "t-1", "task_type": "sweep", "status": "succeeded"}


def _run(started: str, finished: str) -> bytes:
    return json.dumps({**RUN, "started_at": started, "finished_at": finished}).encode()


@PROPERTY
@given(instant=INSTANTS)
def test_nats_instants_are_bounded_or_refused_by_name(instant: datetime) -> None:
    now = _now()
    for value in (instant, *EXTREMES):
        text = _text(value)
        cases = {
            "started_at": lambda text=text: parse_task(_run(text, text), now=now),
            "at": lambda text=text: parse_heartbeat(
                json.dumps({"agent_id": "A", "state": "idle", "at": text}).encode(), now=now
            ),
            "facts.at": lambda text=text: decode_booking_event(
                json.dumps({"subject_id": "b", "at": text, "cancelled": True})
            ),
            "facts.delivered_at": lambda text=text: decode_booking_event(
                json.dumps({"subject_id": "b", "at": "2026-09-29T10:00:00Z", "delivered_at": text})
            ),
            "grpc facts": lambda text=text: outcomes_codec.facts_event(
                outcomes_pb2.RecordFactsRequest(
                    event=json.dumps({"subject_id": "b", "at": text, "cancelled": True}).encode()
                )
            ),
        }
        for name, decode in cases.items():
            _, refusal = _answer(decode)
            if refusal is not None:
                assert _named(refusal) <= {"started_at", "finished_at", "at", "delivered_at"}, name
            if _clearly_outside(value) or (name == "started_at" and value > now + timedelta(minutes=3)):
                assert refusal is not None, (name, text)


# ─── Instants: OTLP spans ──────────────────────────────────────────────────


def _span(start_ns: int, end_ns: int, *, agent: str = "EXCEPTION_AGENT") -> Span:
    return Span(
        trace_id=b"\x01" * 16,
        span_id=b"\x02" * 8,
        parent_span_id=b"",
        name="sweep",
        start_ns=start_ns,
        end_ns=end_ns,
        error_status=False,
        status_message="",
        attributes={"gen_ai.agent.name": agent},
        resource={},
    )


@PROPERTY
@given(nanos=st.integers(min_value=1, max_value=2**64 - 1))
@example(nanos=18_446_744_073_709_551_615)  # 2554-07-21, the span
def test_otlp_span_times_are_bounded_or_refused_by_name(nanos: int) -> None:
    now = _now()
    mapped, refusal = _answer(lambda: map_span(_span(nanos, nanos), now=now))
    seconds = nanos // 10**9
    if refusal is None:
        assert guards.EARLIEST.timestamp() <= seconds <= (now + timedelta(minutes=2)).timestamp()
        assert mapped.run is not None
    else:
        assert _named(refusal) == {"start_time_unix_nano"}


# ─── Numbers: REST and gRPC ────────────────────────────────────────────────

SPEC = {"type": "integer", "min": 5, "max": 60, "step": 5, "default": 15}


@PROPERTY
@given(number=HUGE_NUMBERS, part=st.sampled_from(["min", "max", "step", "default"]))
def test_an_integer_past_int64_in_a_threshold_is_refused_by_name_at_rest_and_grpc(number: int, part: str) -> None:
    draft = {"id": "late", "agent_id": "CONSOLE_OPS_AGENT", "title": "Late", "tool_names": ["scan_bookings"]}
    schema = {"late": {**SPEC, part: number}}
    _, refusal = _answer(lambda: SkillDraft.model_validate({**draft, "thresholds_schema": schema}))
    assert _named(refusal) == {f"thresholds_schema.late.{part}"}
    _, refusal = _answer(lambda: SkillDraft.model_validate({**draft, "thresholds": {"late": number}}))
    assert _named(refusal) == {"thresholds.late"}
    _, refusal = _answer(lambda: SkillPatch.model_validate({"thresholds": {"late": number}}))
    assert _named(refusal) == {"thresholds.late"}

    body = json.dumps(schema).encode()
    request = registry_pb2.CreateSkillRequest(id="late", agent_id="CONSOLE_OPS_AGENT", thresholds_schema_json=body)
    _, refusal = _answer(lambda: registry_codec.skill_draft(request))
    assert _named(refusal) == {f"thresholds_schema.late.{part}"}
    patch = registry_pb2.UpdateSkillRequest(id="late", thresholds_json=json.dumps({"late": number}).encode())
    _, refusal = _answer(lambda: registry_codec.skill_patch(patch))
    assert _named(refusal) == {"thresholds.late"}


# A quiet NaN of any payload and both infinities: what JSON cannot write
# and jsonb cannot hold, though Python's parser and a protobuf double carry them.
NOT_FINITE = st.one_of(
    st.sampled_from([math.inf, -math.inf]),
    st.integers(0, 2**51 - 1).map(lambda payload: struct.unpack("<d", struct.pack("<Q", 0x7FF8 << 48 | payload))[0]),
)


@PROPERTY
@given(number=NOT_FINITE)
def test_a_number_that_is_not_finite_is_refused_by_name_at_every_edge(number: float) -> None:
    decision = {**DECISION, "decision": {"action": "nudge", "confidence": number}}
    _, refusal = _answer(lambda: DecisionIn.model_validate(decision))
    assert _named(refusal) == {"decision.confidence"}
    draft = {"id": "late", "agent_id": "CONSOLE_OPS_AGENT", "title": "Late", "tool_names": ["scan_bookings"]}
    _, refusal = _answer(lambda: SkillDraft.model_validate({**draft, "thresholds": {"late": number}}))
    assert _named(refusal) == {"thresholds.late"}

    for field, changes in (
        ("confidence", {"confidence": number}),
        ("embedding", {"confidence": 0.5, "embedding": [0.5, number]}),
    ):
        request = decisions_pb2.RecordDecisionRequest(
            decision_type="stall_response", agent_id="EXCEPTION_AGENT", subject_id="b-1", action="nudge", **changes
        )
        _, refusal = _answer(
            lambda request=request: decisions_rules.decision_to_record(
                decisions_codec.draft_from_proto(request), now=_now(), embedding_dimension=2
            )
        )
        assert _named(refusal) == {field}, field
    patch = registry_pb2.UpdateSkillRequest(id="late", thresholds_json=json.dumps({"late": number}).encode())
    _, refusal = _answer(lambda: registry_codec.skill_patch(patch))
    assert _named(refusal) in ({"thresholds"}, {"thresholds.late"})

    start = int(datetime(2026, 9, 29, tzinfo=UTC).timestamp() * 10**9)
    usage = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m", "gen_ai.usage.output_tokens": 1}
    called = _span(start, start)
    called = Span(
        **{**vars_of(called), "attributes": {**called.attributes, **usage, "gen_ai.usage.input_tokens": number}}
    )
    _, refusal = _answer(lambda: map_span(called))
    assert _named(refusal) == {"gen_ai.usage.input_tokens"}


# ─── Identifiers: gRPC decisions, NATS and OTLP ───────────────────────────────


@PROPERTY
@given(hidden=HIDDEN, at=st.integers(0, 15))
def test_an_agent_id_with_a_hidden_or_look_alike_character_is_refused_at_every_edge(hidden: str, at: int) -> None:
    agent = "EXCEPTION_AGENT"[:at] + hidden + "EXCEPTION_AGENT"[at:]
    request = decisions_pb2.RecordDecisionRequest(decision_type="stall_response", agent_id=agent)
    _, refusal = _answer(lambda: decisions_codec.draft_from_proto(request))
    assert _named(refusal) == {"agent_id"}
    start = int(datetime(2026, 9, 29, tzinfo=UTC).timestamp() * 10**9)
    _, refusal = _answer(lambda: map_span(_span(start, start, agent=agent)))
    assert _named(refusal) == {"gen_ai.agent.name"}
    _, refusal = _answer(
        lambda: parse_task(
            json.dumps(
                {**RUN, "agent_id": agent, "started_at": "2026-09-29T10:00:00Z", "finished_at": "2026-09-29T10:00:01Z"}
            )
        )
    )
    assert _named(refusal) == {"agent_id"}
    _, refusal = _answer(
        lambda: parse_heartbeat(json.dumps({"agent_id": agent, "state": "idle", "at": "2026-09-29T10:00:00Z"}))
    )
    assert _named(refusal) == {"agent_id"}


@PROPERTY
@given(agent=ENGINE_TEXT)
def test_whatever_agent_id_an_engine_sends_it_is_one_normalised_id_or_refused(agent: str) -> None:
    request = decisions_pb2.RecordDecisionRequest(decision_type="stall_response", agent_id=agent)
    draft, refusal = _answer(lambda: decisions_codec.draft_from_proto(request))
    if refusal is not None:
        assert _named(refusal) == {"agent_id"}
    elif agent.strip():
        assert draft.agent_id == guards.identifier("agent_id", agent.strip(), max_length=256)


def test_a_full_width_agent_id_is_recorded_as_the_id_it_spells() -> None:
    full_width = "".join(chr(ord(letter) + 0xFEE0) for letter in "EXCEPTION")
    request = decisions_pb2.RecordDecisionRequest(decision_type="stall_response", agent_id=f"{full_width}_AGENT")
    assert decisions_codec.draft_from_proto(request).agent_id == "EXCEPTION_AGENT"


# ─── Text: REST, gRPC, NATS and OTLP ───────────────────────────────────────

# What Postgres text and jsonb cannot hold, planted anywhere in ordinary text.
UNCARRIABLE = st.sampled_from(["\x00", "\ud800", "\udbff", "\udc00", "\udfff"])
PLAIN_TEXT = st.text(st.characters(min_codepoint=0x20, max_codepoint=0xFFFF, exclude_categories=("Cs",)), max_size=30)


@st.composite
def _hostile_text(draw: st.DrawFn) -> str:
    base = draw(PLAIN_TEXT)
    at = draw(st.integers(0, len(base)))
    return base[:at] + draw(UNCARRIABLE) + base[at:]


HOSTILE_TEXT = _hostile_text()


def _rest_text_cases(value: str) -> dict[str, Callable[[], Any]]:
    skill = {"id": "late", "agent_id": "CONSOLE_OPS_AGENT", "title": "Late", "tool_names": ["scan_bookings"]}
    return {
        "subject_id": lambda: DecisionIn.model_validate({**DECISION, "subject_id": value}),
        "context": lambda: DecisionIn.model_validate({**DECISION, "context": {"note": value}}),
        "body": lambda: HumanInputIn.model_validate({**HUMAN_INPUT, "at": "2026-09-29T10:00:00Z", "body": value}),
        "status": lambda: FactsIn.model_validate({"subject_id": "b-1", "at": "2026-09-29T10:00:00Z", "status": value}),
        "title": lambda: SkillDraft.model_validate({**skill, "title": value}),
    }


@PROPERTY
@given(value=HOSTILE_TEXT)
def test_rest_text_that_postgres_cannot_hold_is_refused_by_name(value: str) -> None:
    for field, decode in _rest_text_cases(value).items():
        _, refusal = _answer(decode)
        assert refusal is not None, field
        assert {name.split(".")[0] for name in _named(refusal)} == {field}, field


@PROPERTY
@given(value=HOSTILE_TEXT)
def test_grpc_json_documents_holding_text_postgres_cannot_hold_are_refused_by_name(value: str) -> None:
    document = json.dumps({"note": value, value: 1, "nested": [{"deep": value}]}).encode()
    _, refusal = _answer(lambda: decisions_codec.context_from_proto(document))
    assert refusal is not None and all(name.startswith("context") for name in _named(refusal))
    patch = registry_pb2.UpdateSkillRequest(id="late", thresholds_json=document)
    _, refusal = _answer(lambda: registry_codec.skill_patch(patch))
    assert refusal is not None and all(name.startswith("thresholds") for name in _named(refusal))


@PROPERTY
@given(value=HOSTILE_TEXT)
def test_grpc_text_with_a_nul_is_refused_by_name(value: str) -> None:
    # A protobuf string is UTF-8, so only the NUL of the hostile text can cross.
    nul = value.encode("utf-8", "surrogatepass").decode("utf-8", "replace") + "\x00"
    for field in ("subject_id", "action"):
        request = decisions_pb2.RecordDecisionRequest(
            decision_type="stall_response", agent_id="EXCEPTION_AGENT", subject_id="b-1", action="nudge"
        )
        setattr(request, field, nul)
        _, refusal = _answer(
            lambda request=request: decisions_rules.decision_to_record(
                decisions_codec.draft_from_proto(request), now=_now(), embedding_dimension=0
            )
        )
        assert refusal is not None and _named(refusal) == {field}, field
    human = decisions_pb2.RecordHumanInputRequest(**{**HUMAN_INPUT, "body": nul}, at=Timestamp(seconds=1_790_000_000))
    _, refusal = _answer(lambda: human_codec.input_from_proto(human, now=_now()))
    assert refusal is not None and _named(refusal) == {"body"}


def _nats_text_cases(value: str) -> dict[str, Callable[[], Any]]:
    times = {"started_at": "2026-09-29T10:00:00Z", "finished_at": "2026-09-29T10:00:01Z"}
    facts = {"subject_id": "b-1", "at": "2026-09-29T10:00:00Z", "cancelled": True}
    return {
        "task_id": lambda: parse_task(json.dumps({**RUN, **times, "task_id": value})),
        "task_type": lambda: parse_task(json.dumps({**RUN, **times, "task_type": value})),
        "error": lambda: parse_task(json.dumps({**RUN, **times, "status": "failed", "error": value})),
        "state": lambda: parse_heartbeat(json.dumps({"agent_id": "A", "state": value, "at": times["started_at"]})),
        "facts subject_id": lambda: check_storable(decode_booking_event(json.dumps({**facts, "subject_id": value}))),
        "facts status": lambda: check_storable(decode_booking_event(json.dumps({**facts, "status": value}))),
    }


@PROPERTY
@given(value=HOSTILE_TEXT)
def test_nats_text_that_postgres_cannot_hold_is_refused_by_name(value: str) -> None:
    for case, decode in _nats_text_cases(value).items():
        _, refusal = _answer(decode)
        assert refusal is not None, case
        assert _named(refusal) == {case.split(" ")[-1]}, case


@PROPERTY
@given(value=HOSTILE_TEXT)
def test_otlp_span_text_that_postgres_cannot_hold_is_refused_by_name(value: str) -> None:
    start = int(datetime(2026, 9, 29, tzinfo=UTC).timestamp() * 10**9)
    named = Span(**{**vars_of(_span(start, start)), "name": value})
    _, refusal = _answer(lambda: map_span(named))
    assert refusal is not None and _named(refusal) == {"name"}
    failed = Span(**{**vars_of(_span(start, start)), "error_status": True, "status_message": value})
    _, refusal = _answer(lambda: map_span(failed))
    assert refusal is not None and _named(refusal) == {"status.message"}
    _, refusal = _answer(lambda: map_span(_span(start, start, agent=value)))
    assert refusal is not None and _named(refusal) == {"gen_ai.agent.name"}


def vars_of(span: Span) -> dict[str, Any]:
    return {name: getattr(span, name) for name in Span.__slots__}


# ─── Claims: the gateway's token check ─────────────────────────────────────

CLAIM_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    HOSTILE_TEXT,
    st.text(max_size=300),
    st.just("u" * 20_000),
)


@PROPERTY
@given(changes=st.dictionaries(st.sampled_from(["sub", "email", "role", "tenant_id", "iat", "exp"]), CLAIM_VALUES))
def test_any_signed_claims_are_a_principal_or_a_401_naming_the_claim(changes: dict[str, object]) -> None:
    now = int(_now().timestamp())
    claims = {"sub": "u-1", "email": "ops@example.com", "role": 1, "tenant_id": 0, "iat": now, "exp": now + 3600}
    payload = {name: value for name, value in {**claims, **changes}.items() if value is not None}
    try:
        token = jwt.encode(payload, SECRET, algorithm="HS256")
    except (TypeError, ValueError):
        return  # not even JSON (NaN aside): no token carries it
    who, refused = _verified(token)
    if refused is not None:
        assert refused.status == 401
        assert set(refused.details) == {"claim"} and refused.details["claim"] in claims, refused.message
        return
    assert who is not None
    assert who.sub.isprintable() and len(who.sub) <= guards.MAX_CLAIM_LENGTH
    assert who.email.isprintable() and len(who.email) <= guards.MAX_CLAIM_LENGTH


def _verified(token: str) -> tuple[Principal | None, ApiError | None]:
    try:
        return verify_token(SECRET, token), None
    except ApiError as refused:
        return None, refused
