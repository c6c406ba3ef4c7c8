"""No personal value from a bad message reaches a log line or a stored
rejection: each consumer is handed generated bad messages carrying planted
phones, e-mails, Aadhaar and PAN numbers and names, plainly written or
obfuscated, and everything it logs (as the JSON log stream writes it) and
everything it would store is searched for them."""

from __future__ import annotations

import json
import logging
import random
from collections.abc import AsyncIterator
from types import SimpleNamespace
from typing import Any

import grpc
import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gateway.app import create_app
from gateway.errors import context_refusal
from services.common.consuming import guarded, preview, printable
from services.common.logs import JsonFormatter
from services.common.settings import load
from services.outcomes import consumer as facts_consumer
from services.outcomes.consumer import FactsConsumer, read_event
from services.telemetry.counters import Counters
from services.telemetry.heartbeats import HeartbeatSink
from services.telemetry.ingest import Ingest, IngestConfig
from services.telemetry.otlp.codec import read_message
from services.telemetry.otlp.ingest import OtlpIngest
from services.telemetry.rules import MalformedTelemetry, parse_heartbeat, parse_task
from tests.harness import INTERNAL_KEY, JWT_SECRET, bearer
from tests.unit.platform.bad_messages import bad_message, planted_value
from tests.unit.playground.planted import Personal, strings_in

PROPERTY = settings(
    max_examples=120, deadline=None, database=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
PARSERS = {"telemetry.task": parse_task, "telemetry.agent": parse_heartbeat, "facts.booking": read_event}


class FakeMessage:
    """What a consumer reads of a JetStream message, and how it settles it."""

    def __init__(self, subject: str, data: bytes) -> None:
        self.subject, self.data, self.reply = subject, data, ""
        self.metadata = SimpleNamespace(num_delivered=1, sequence=SimpleNamespace(stream=1))
        self.settled: list[str] = []

    async def ack(self) -> None:
        self.settled.append("ack")

    async def term(self) -> None:
        self.settled.append("term")

    async def nak(self, delay: float | None = None) -> None:
        self.settled.append("nak")


class FakeEngine:
    """A database that takes every transaction; the rows are what a test reads."""

    def begin(self) -> FakeEngine:
        return self

    async def __aenter__(self) -> object:
        return object()

    async def __aexit__(self, *exc: object) -> None:
        return None


def logged(caplog: pytest.LogCaptureFixture) -> str:
    """Every captured record as the JSON log stream writes it, read back as text."""
    formatter = JsonFormatter("test")
    # The test's own HTTP client logs the requests it sends; that is not the gateway speaking.
    records = [record for record in caplog.records if not record.name.startswith(("httpx", "httpcore"))]
    return "\n".join("\n".join(strings_in(json.loads(formatter.format(record)))) for record in records)


def assert_hidden(value: Personal, *texts: str) -> None:
    for text in texts:
        assert value.leaked(text) == [], text


@pytest.fixture
def stored(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []

    async def count_rejection(_conn: object, **row: Any) -> None:
        rows.append(row)

    monkeypatch.setattr(facts_consumer.store, "count_rejection", count_rejection)
    return rows


@PROPERTY
@given(st.sampled_from(sorted(PARSERS)), st.randoms(use_true_random=False))
def test_what_a_consumer_shows_of_a_bad_message_holds_no_planted_value(subject, rng):
    value = planted_value(rng)
    data = bad_message(rng, subject, value)
    problem = guarded(PARSERS[subject], data).malformed

    shown = [preview(data), preview(data, 512), preview(data[:60], 60)]
    if problem is not None:
        shown.append(printable(problem.problem))

    assert_hidden(value, *shown)


@PROPERTY
@given(st.randoms(use_true_random=False))
async def test_facts_consumer_logs_and_stores_no_planted_value(caplog, stored, rng):
    stored.clear()
    caplog.clear()
    values = [planted_value(rng) for _ in range(rng.randrange(1, 6))]
    messages = [FakeMessage("facts.booking", bad_message(rng, "facts.booking", value)) for value in values]

    with caplog.at_level(logging.DEBUG):
        await FactsConsumer(js=None, engine=FakeEngine()).handle(messages)  # type: ignore[arg-type]

    rows = "\n".join(f"{row['problem']}\n{row['payload']}" for row in stored)
    for value in values:
        assert_hidden(value, logged(caplog), rows)
    # Every one was refused, counted and terminated, not merely skipped.
    assert len(stored) == sum("term" in message.settled for message in messages)


@PROPERTY
@given(st.randoms(use_true_random=False))
async def test_heartbeat_sink_logs_no_planted_value(caplog, rng):
    caplog.clear()
    value = planted_value(rng)
    sink = HeartbeatSink(bucket=None, counters=Counters(), engine_agents={})  # type: ignore[arg-type]

    with caplog.at_level(logging.DEBUG):
        await sink._on_message(FakeMessage("telemetry.agent", bad_message(rng, "telemetry.agent", value)))  # type: ignore[arg-type]

    assert caplog.records
    assert_hidden(value, logged(caplog))


def _ingest(kind: type[Ingest]) -> Ingest:
    nc = SimpleNamespace(new_inbox=lambda: "_INBOX.test")
    return kind(nc, js=None, engine=FakeEngine(), counters=Counters(), config=IngestConfig())  # type: ignore[arg-type]


@PROPERTY
@given(st.randoms(use_true_random=False))
async def test_task_ingest_logs_no_planted_value(caplog, rng):
    caplog.clear()
    values = [planted_value(rng) for _ in range(rng.randrange(1, 6))]
    batch = [FakeMessage("telemetry.task", bad_message(rng, "telemetry.task", value)) for value in values]
    # Only the malformed ones are this test's: a valid run would need the database.
    batch = [message for message in batch if guarded(parse_task, message.data).value is None]

    with caplog.at_level(logging.DEBUG):
        await _ingest(Ingest)._write(batch)  # type: ignore[arg-type]

    for value in values:
        assert_hidden(value, logged(caplog))


@PROPERTY
@given(st.randoms(use_true_random=False))
async def test_otlp_ingest_logs_no_planted_value(caplog, rng):
    caplog.clear()
    value = planted_value(rng)
    data = bad_message(rng, "telemetry.otlp", value)
    try:
        problems = [error.problem for error in read_message(data).rejected]
    except MalformedTelemetry as error:
        problems = [error.problem]
        with caplog.at_level(logging.DEBUG):
            await _ingest(OtlpIngest)._write([FakeMessage("telemetry.otlp", data)])  # type: ignore[list-item]

    assert problems
    assert_hidden(value, *problems, logged(caplog))


def test_a_long_payload_is_cut_after_it_is_redacted_never_through_a_value():
    phone = "+91 98450 12345"
    for padding in range(90, 130):
        data = json.dumps({"x": "p" * padding, "alt": f"call {phone} now"}).encode()
        shown = preview(data)
        assert "98450" not in shown and "+91 9" not in shown and shown.endswith("…")


def test_a_quoted_field_under_a_personal_key_is_replaced_whole_even_in_cut_json():
    shown = preview(b'{"status": "created", "customer_name": "Zzyzx Qwerty", "subject_id": "b-1", "at": 7')

    assert "Zzyzx" not in shown and '"customer_name": "<person#1>"' in shown


def test_a_small_json_document_keeps_its_shape_with_personal_fields_replaced():
    shown = preview(json.dumps({"customer": {"given": "Zzyzx"}, "at": "yesterday"}).encode(), 512)

    assert json.loads(shown) == {"customer": "<person#1>", "at": "yesterday"}


def test_the_issue_example_reaches_neither_log_nor_row():
    data = json.dumps({"subject_id": "b-1", "at": "yesterday", "customer_phone": "+91 98450 12345"}).encode()

    assert "98450" not in preview(data) + preview(data, 512)
    assert "meera" not in printable("traceId: 'meera.iyer@example.com +91 98450 12345' is not a hex string")


def test_rng_driven_generators_reach_every_form():
    # Each form of bad message is drawn often enough for the properties above to try it.
    rng = random.Random(5)
    kinds = {bad_message(rng, "facts.booking", planted_value(rng))[:1] for _ in range(200)}
    assert {b"{", b"\xff", b"<", b"\x00", b"n"} <= kinds


# --- the gateway: every answer that refuses a request ------------------------------------


@pytest.fixture
async def gateway(tmp_path) -> AsyncIterator[tuple[httpx.AsyncClient, dict[str, Any]]]:
    # No context is running: what a route refuses before calling one, it
    # refuses here, and a call that reaches a context answers 503.
    app = create_app(
        load(
            {
                "OUTRIDER_DATA_DIR": str(tmp_path),
                "OUTRIDER_JWT_SECRET": JWT_SECRET,
                "OUTRIDER_INTERNAL_KEY": INTERNAL_KEY,
                "OUTRIDER_EMBEDDING_DIM": "4",
            }
        )
    )
    headers = {**bearer(role=1), "X-Internal-Key": INTERNAL_KEY}
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://gateway", headers=headers) as client,
    ):
        yield client, app.openapi()


def _planted_request(operation: dict[str, Any], path: str, text: str, rng: random.Random) -> dict[str, Any]:
    """Every parameter and every property of the body set to the planted text; one of them of the wrong type."""
    url = path
    query: dict[str, str] = {}
    for parameter in operation.get("parameters", []):
        if parameter["in"] == "path":
            url = url.replace("{" + parameter["name"] + "}", httpx.URL("/" + text).raw_path.decode()[1:])
        elif parameter["in"] == "query":
            query[parameter["name"]] = text
    body: Any = None
    if "requestBody" in operation:
        body = dict.fromkeys(_body_properties(operation), text) or {"x": text}
        body[rng.choice(sorted(body))] = rng.choice(([text], {"v": text}, 7))
    return {"url": url, "params": query, "json": body}


def _body_properties(operation: dict[str, Any]) -> list[str]:
    schema = operation["requestBody"]["content"].get("application/json", {}).get("schema", {})
    return sorted(GATEWAY_SCHEMAS.get(schema.get("$ref", "").rsplit("/", 1)[-1], {}).get("properties", {}))


GATEWAY_SCHEMAS: dict[str, Any] = {}


async def test_no_refusal_of_any_endpoint_echoes_a_planted_value(gateway, caplog):
    client, document = gateway
    GATEWAY_SCHEMAS.update(document["components"]["schemas"])
    rng = random.Random(11)
    refused = 0
    with caplog.at_level(logging.DEBUG):
        for path, methods in sorted(document["paths"].items()):
            for method, operation in sorted(methods.items()):
                for _ in range(3):
                    value = planted_value(rng)
                    request = _planted_request(operation, path, value.written, rng)
                    answer = await client.request(method.upper(), **request)
                    if answer.status_code >= 400:
                        refused += 1
                        assert_hidden(value, answer.text, json.dumps(answer.json(), ensure_ascii=False))
                    caplog_text = logged(caplog)
                    assert_hidden(value, caplog_text)
                    caplog.clear()
    assert refused > 50


async def test_an_otlp_refusal_quotes_no_planted_value(gateway):
    client, _ = gateway
    rng = random.Random(3)
    refused = 0
    for _ in range(30):
        value = planted_value(rng)
        export = {"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": value.written, "spanId": "00" * 8}]}]}]}
        answer = await client.post("/v1/traces", json=export)
        # A value that happens to be hex (a bare phone number) is a trace id,
        # and the span is refused in a partial success instead.
        assert answer.status_code in (200, 400), answer.text
        refused += answer.status_code == 400
        assert_hidden(value, answer.text, json.dumps(answer.json(), ensure_ascii=False))
    assert refused > 15


@PROPERTY
@given(st.randoms(use_true_random=False))
def test_a_context_refusal_that_quotes_the_value_is_answered_without_it(rng):
    # The contexts' codecs and rules say what they refused ("got '…'"); the
    # gateway's answer carries their message and details, shown redacted.
    value = planted_value(rng)
    quoted = f"must be a UUID, got {value.written!r}"

    refusal = context_refusal(
        "decisions", grpc.StatusCode.INVALID_ARGUMENT, f"id: {quoted}", "INVALID_ARGUMENT", {"fields": {"id": quoted}}
    )

    assert_hidden(value, refusal.message, json.dumps(refusal.details, ensure_ascii=False))
    assert refusal.details["fields"]["id"] in refusal.message
