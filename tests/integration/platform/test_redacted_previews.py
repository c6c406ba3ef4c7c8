"""The live system shows no personal value it was sent in a bad message or a
bad request: every consumer runs against real NATS and Postgres, every
context and the gateway answer for real, and what they log, what
fact_rejections keeps and what every refusal answers is searched for the
planted phones, e-mails, Aadhaar and PAN numbers and names."""

from __future__ import annotations

import json
import logging
import random

import asyncpg
import httpx

from gateway.app import create_app
from services.common.logs import JsonFormatter
from services.common.settings import CONTEXTS
from services.outcomes.consumer import DURABLE as FACTS_DURABLE
from services.outcomes.consumer import STREAM as FACTS_STREAM
from services.telemetry.ingest import DURABLE as TASK_DURABLE
from services.telemetry.ingest import STREAM as TELEMETRY_STREAM
from services.telemetry.otlp.ingest import DURABLE as OTLP_DURABLE
from tests.harness import INTERNAL_KEY, bearer, bound_socket, eventually, running, service_nats, serving, with_env
from tests.unit.platform.bad_messages import SUBJECTS, bad_message, planted_value
from tests.unit.playground.planted import Personal, strings_in

PER_SUBJECT = 25
REQUESTS_PER_OPERATION = 2


async def settled(js, stream: str, durable: str) -> tuple[int, int]:
    info = await js.consumer_info(stream, durable)
    return info.num_pending, info.num_ack_pending


def logged(records: list[logging.LogRecord]) -> str:
    formatter = JsonFormatter("test")
    mine = [record for record in records if not record.name.startswith(("httpx", "httpcore"))]
    return "\n".join("\n".join(strings_in(json.loads(formatter.format(record)))) for record in mine)


def leaks(values: list[Personal], *texts: str) -> list[tuple[str, str]]:
    return [(value.kind, probe) for value in values for text in texts for probe in value.leaked(text)]


def planted_request(operation: dict, path: str, text: str, schemas: dict, rng: random.Random) -> dict:
    url, query = path, {}
    for parameter in operation.get("parameters", []):
        if parameter["in"] == "path":
            url = url.replace("{" + parameter["name"] + "}", httpx.URL("/" + text).raw_path.decode()[1:])
        elif parameter["in"] == "query":
            query[parameter["name"]] = text
    body = None
    if "requestBody" in operation:
        schema = operation["requestBody"]["content"].get("application/json", {}).get("schema", {})
        properties = schemas.get(schema.get("$ref", "").rsplit("/", 1)[-1], {}).get("properties", {})
        body = dict.fromkeys(sorted(properties), text) or {"x": text}
        body[rng.choice(sorted(body))] = rng.choice(([text], {"v": text}, 7))
    return {"url": url, "params": query, "json": body}


async def test_no_bad_message_or_request_shows_a_planted_value(settings, template, database, caplog):
    rng = random.Random(20261202)
    sock = bound_socket()
    served = with_env(settings, http_port=sock.getsockname()[1])
    planted: list[Personal] = []
    answers: list[str] = []
    with caplog.at_level(logging.DEBUG):
        async with (
            running(served, CONTEXTS),
            serving(create_app(served), sock, log_config=None, access_log=False) as gateway_url,
        ):
            client = await service_nats(settings.nats_url)
            try:
                js = client.jetstream()
                for subject in SUBJECTS:
                    for _ in range(PER_SUBJECT):
                        value = planted_value(rng)
                        planted.append(value)
                        data = bad_message(rng, subject, value)
                        if subject == "telemetry.agent":
                            # Heartbeats are plain publishes; the sink refuses a JetStream one.
                            await client.publish(subject, data)
                        else:
                            await js.publish(subject, data)
                await client.flush()
                for stream, durable in (
                    (FACTS_STREAM, FACTS_DURABLE),
                    (TELEMETRY_STREAM, TASK_DURABLE),
                    (TELEMETRY_STREAM, OTLP_DURABLE),
                ):
                    await eventually(
                        lambda stream=stream, durable=durable: settled(js, stream, durable),
                        lambda state: state == (0, 0),
                        what=f"every message of {durable} settled",
                    )
            finally:
                await client.close()

            headers = {**bearer(role=1), "X-Internal-Key": INTERNAL_KEY}
            async with httpx.AsyncClient(base_url=gateway_url, headers=headers, timeout=30) as http:
                document = (await http.get("/openapi.json")).json()
                schemas = document["components"]["schemas"]
                for path, methods in sorted(document["paths"].items()):
                    for method, operation in sorted(methods.items()):
                        for _ in range(REQUESTS_PER_OPERATION):
                            value = planted_value(rng)
                            planted.append(value)
                            request = planted_request(operation, path, value.written, schemas, rng)
                            answer = await http.request(method.upper(), **request)
                            if answer.status_code >= 400:
                                answers.append(answer.text)
                for _ in range(PER_SUBJECT):
                    value = planted_value(rng)
                    planted.append(value)
                    span = {"traceId": value.written, "spanId": "01" * 8, "name": value.written}
                    export = {"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}
                    answers.append((await http.post("/v1/traces", json=export)).text)
    conn = await asyncpg.connect(template.raw_dsn(database), server_settings={"search_path": "outcomes"})
    try:
        rows = await conn.fetch("select field, last_problem, last_payload from fact_rejections")
    finally:
        await conn.close()
    stored = "\n".join(f"{row['field']}\n{row['last_problem']}\n{row['last_payload']}" for row in rows)
    shown = logged(caplog.records)

    # The bad messages were refused and seen: the search below searched something.
    assert rows and "malformed heartbeat dropped" in shown and "malformed task run terminated" in shown
    assert len(answers) > 60
    assert leaks(planted, shown) == []
    assert leaks(planted, stored) == []
    assert leaks(planted, *answers) == []
