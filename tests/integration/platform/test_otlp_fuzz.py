"""A mutation fuzzer for POST /v1/traces: protobuf and JSON exports broken
field by field and byte by byte, gzip bombs within and past the body cap,
content types and encodings OTLP/HTTP does not define, huge attribute
counts, ids of every wrong length.

Every answer must be one OTLP documents (200, with partial_success when
spans were refused; 400; 413; 415), in the request's encoding, and never a
5xx; after each batch a good export must still land as a run, and no answer
or log line may show the personal value planted in what was sent.
"""

from __future__ import annotations

import base64
import gzip
import json
import logging
import random
import time
from typing import Any

import asyncpg
import httpx
from google.protobuf import json_format
from google.rpc import status_pb2
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from gateway.codec.otlp import JSON, PROTOBUF
from services.common.settings import CONTEXTS
from tests.harness import INTERNAL_KEY, bound_socket, eventually, running, serving_gateway, with_env
from tests.integration.platform.fuzzing import export, shown
from tests.integration.platform.mutations import (
    EXTREME_INSTANTS,
    HOSTILE_TEXT,
    ID_LENGTHS,
    SWAPPED_TYPES,
    flip_bytes,
    gzip_bomb,
    mutated_json,
    mutated_protobuf,
    truncated,
)
from tests.integration.platform.test_redacted_previews import logged
from tests.unit.platform.bad_messages import planted_value
from tests.unit.playground.planted import Personal

SEED = 20261203
ROUNDS = 10
PER_ROUND = 60
BUDGET_S = 120.0
# A cap small enough that a bomb past it is quick to build and send.
CAP = 256 * 1024
DOCUMENTED = frozenset({200, 400, 413, 415})
WRONG_TYPES = (
    "",
    "text/plain",
    "application/protobuf",
    "application/grpc",
    "application/json-seq",
    "multipart/form-data; boundary=x",
)


def _json_export(request: ExportTraceServiceRequest) -> dict[str, Any]:
    """The export in OTLP/JSON: ids as hex, as the specification writes them."""
    body: dict[str, Any] = json_format.MessageToDict(request)
    for resource in body["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in span:
                        span[key] = base64.b64decode(span[key]).hex()
    return body


def mutated_request(rng: random.Random, planted: str) -> tuple[bytes, dict[str, str]]:
    """A body and its headers, broken in one way."""
    request = export(rng.randbytes(16), planted)
    form = rng.randrange(10)
    headers = {"Content-Type": PROTOBUF}
    if form <= 2:
        return mutated_protobuf(rng, request), headers
    headers["Content-Type"] = JSON
    document = _json_export(request)
    span = document["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    if form <= 5:
        # One span broken field by field, inside an otherwise good document.
        marker = "\u2603span\u2603"
        document["resourceSpans"][0]["scopeSpans"][0]["spans"][0] = marker
        broken = mutated_json(rng, span, ("startTimeUnixNano", "endTimeUnixNano"))
        return json.dumps(document).encode().replace(json.dumps(marker).encode(), broken), headers
    if form == 6:
        key = rng.choice(("traceId", "spanId", "parentSpanId"))
        span[key] = rng.choice(
            (
                rng.randbytes(rng.choice(ID_LENGTHS)).hex(),
                "zz" * 8,
                planted,
                rng.choice(SWAPPED_TYPES),
                rng.choice(HOSTILE_TEXT) * 16,
            )
        )
    elif form == 7:
        span[rng.choice(("startTimeUnixNano", "endTimeUnixNano"))] = rng.choice(
            (*EXTREME_INSTANTS, "-1", "18446744073709551616", "1e30", 1.5)
        )
    elif form == 8:
        span["attributes"] = [
            {"key": f"k{n}", "value": {"intValue": str(n)}} for n in range(rng.choice((1_000, 30_000)))
        ]
    else:
        return flip_bytes(rng, json.dumps(document).encode()), headers
    return json.dumps(document).encode(), headers


def wrapped(rng: random.Random, body: bytes, headers: dict[str, str]) -> tuple[bytes, dict[str, str]]:
    """The body as sent: often gzipped, sometimes with the wrong type,
    encoding or a bomb in its place."""
    pick = rng.randrange(12)
    if pick <= 2:
        return gzip.compress(body, compresslevel=1), {**headers, "Content-Encoding": "gzip"}
    if pick == 3:
        return truncated(rng, gzip.compress(body)), {**headers, "Content-Encoding": "gzip"}
    if pick == 4:
        return body, {**headers, "Content-Encoding": "gzip"}
    if pick == 5:
        return gzip_bomb(rng.choice((CAP - 1, CAP, CAP + 1, 64 * CAP))), {**headers, "Content-Encoding": "gzip"}
    if pick == 6:
        return body, {**headers, "Content-Type": rng.choice(WRONG_TYPES)}
    if pick == 7:
        return body, {**headers, "Content-Encoding": rng.choice(("br", "deflate", "gzip, gzip", "x-gzip", ""))}
    if pick == 8:
        return body + b"\x00" * CAP, headers
    return body, headers


def answer_problem(answer: httpx.Response, request_type: str) -> str | None:
    """What is wrong with an answer by OTLP/HTTP's rules; None when nothing is."""
    if answer.status_code not in DOCUMENTED:
        return f"status {answer.status_code}"
    json_encoded = request_type.split(";", 1)[0].strip().lower() != PROTOBUF
    expected = JSON if json_encoded else PROTOBUF
    if answer.headers.get("content-type", "").split(";", 1)[0] != expected:
        return f"{answer.status_code} as {answer.headers.get('content-type')!r}, not {expected}"
    message = ExportTraceServiceResponse() if answer.status_code == 200 else status_pb2.Status()
    try:
        if json_encoded:
            json_format.Parse(answer.content, message)
        else:
            message.ParseFromString(answer.content)
    except (json_format.ParseError, ValueError) as error:
        return f"{answer.status_code} body is not a {type(message).__name__}: {error}"
    if answer.status_code == 200 and isinstance(message, ExportTraceServiceResponse):
        partial = message.partial_success
        if partial.rejected_spans < 0 or (partial.rejected_spans and not partial.error_message):
            return f"partial_success without a reason: {partial}"
    if answer.status_code != 200 and isinstance(message, status_pb2.Status) and not message.message:
        return f"{answer.status_code} Status without a message"
    return None


async def test_no_mutated_export_breaks_the_intake(settings, template, database, caplog):
    rng = random.Random(SEED)
    sock = bound_socket()
    served = with_env(settings, http_port=sock.getsockname()[1], otlp_max_body_bytes=CAP)
    planted: list[Personal] = []
    problems: list[str] = []
    answers: list[str] = []
    statuses: dict[int, int] = {}
    db = await asyncpg.connect(template.raw_dsn(database))

    async def landed(task_id: str) -> bool:
        return await db.fetchval("select count(*) from telemetry.runs where task_id = $1", task_id) == 1

    started = time.monotonic()
    rounds = 0
    with caplog.at_level(logging.INFO):
        async with (
            running(served, CONTEXTS),
            serving_gateway(served, sock) as gateway_url,
            httpx.AsyncClient(base_url=gateway_url, headers={"X-Internal-Key": INTERNAL_KEY}, timeout=60) as http,
        ):
            try:
                while rounds < ROUNDS and time.monotonic() - started < BUDGET_S:
                    for _ in range(PER_ROUND):
                        value = planted_value(rng)
                        planted.append(value)
                        body, headers = wrapped(rng, *mutated_request(rng, value.written))
                        answer = await http.post("/v1/traces", content=body, headers=headers)
                        statuses[answer.status_code] = statuses.get(answer.status_code, 0) + 1
                        answers.append(answer.text)
                        problem = answer_problem(answer, headers.get("Content-Type", ""))
                        if problem is not None:
                            problems.append(f"{headers}: {problem}: {answer.content[:300]!r}")
                    trace = f"{0xA0 + rounds:02x}" + "6b" * 15
                    good = export(bytes.fromhex(trace), "nobody").SerializeToString()
                    answer = await http.post("/v1/traces", content=good, headers={"Content-Type": PROTOBUF})
                    assert answer.status_code == 200, answer.content
                    await eventually(
                        lambda trace=trace: landed(f"{trace}-{trace[:16]}"),
                        timeout=60,
                        what=f"round {rounds}: the good export after the bad ones landed",
                    )
                    assert (await http.get("/healthz")).status_code == 200
                    rounds += 1
            finally:
                await db.close()
    seen = logged(caplog.records)
    errors = [record.getMessage() for record in caplog.records if record.levelno >= logging.ERROR]

    assert rounds >= 2, f"only {rounds} round(s) within {BUDGET_S:g}s"
    assert problems == []
    # Every documented refusal was met, so each answer's shape was checked.
    assert set(statuses) == DOCUMENTED, statuses
    assert errors == []
    assert shown(planted, seen) == []
    assert shown(planted, *answers) == []
    print(f"OTLP fuzz: {rounds} rounds, answers {dict(sorted(statuses.items()))}")
