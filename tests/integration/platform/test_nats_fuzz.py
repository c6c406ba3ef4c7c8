"""A mutation fuzzer for every NATS subject the platform consumes: task runs,
heartbeats and facts on the bare subjects (the shared engine user) and on an
engine's own (its key's credential), and OTLP spans on telemetry.otlp as the
gateway publishes them (only the services may publish there).

Each round publishes mutations of well-formed messages, each carrying a
planted personal value, then one well-formed sentinel per subject, and waits
until every sentinel has landed and every consumer has settled: a positive
barrier, so each round's verdict is about that round's inputs. After every
round each context must still be live; at the end nothing may have logged
an error, no planted value may show in a log line or a stored rejection, and
everything stored must be what the guards admit.
"""

from __future__ import annotations

import json
import logging
import math
import random
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg
import nats.errors
import nats.js.errors

from services.common import guards
from services.common.nats import HEARTBEAT_BUCKET
from services.common.settings import CONTEXTS
from services.outcomes.consumer import DURABLE as FACTS_DURABLE
from services.outcomes.consumer import STREAM as FACTS_STREAM
from services.telemetry import rules
from services.telemetry.ingest import DURABLE as TASK_DURABLE
from services.telemetry.ingest import STREAM as TELEMETRY_STREAM
from services.telemetry.otlp import codec as otlp_codec
from services.telemetry.otlp.ingest import DURABLE as OTLP_DURABLE
from tests.harness import (
    ENGINE_KEYS,
    SUPPORT_KEY,
    engine_key_nats,
    engine_nats,
    eventually,
    make_settings,
    reset_nats,
    running,
    service_nats,
)
from tests.integration.platform.fuzzing import export, intact, live, published, settled, shown
from tests.integration.platform.mutations import mutated_json, mutated_protobuf
from tests.integration.platform.test_redacted_previews import logged
from tests.unit.platform.bad_messages import planted_value
from tests.unit.playground.planted import Personal

SEED = 20261202
# Rounds of PER_ROUND mutations per subject, stopped early past BUDGET_S:
# the seed fixes what is sent, the budget bounds how long the gate takes.
ROUNDS = 12
PER_ROUND = 40
BUDGET_S = 120.0
CONSUMERS = ((FACTS_STREAM, FACTS_DURABLE), (TELEMETRY_STREAM, TASK_DURABLE), (TELEMETRY_STREAM, OTLP_DURABLE))
# Where a planted value rides in a well-formed message: a key the parser
# ignores, or a text field it keeps.
PLANTED_KEYS = ("customer_phone", "note", "contact")
# The task id of a run mapped from a span: its trace id and span id in hex.
SPAN_RUN = re.compile(r"[0-9a-f]{32}-[0-9a-f]{16}")


def _now() -> datetime:
    return datetime.now(UTC)


def _iso(at: datetime) -> str:
    return at.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def task_run(task_id: str, planted: str) -> dict[str, Any]:
    begun = _now() - timedelta(minutes=1)
    return {
        "agent_id": "EXCEPTION_AGENT",
        "task_id": task_id,
        "task_type": "triage",
        "status": "failed",
        "started_at": _iso(begun),
        "finished_at": _iso(begun + timedelta(seconds=2)),
        "error": "no rider",
        "note": planted,
    }


def heartbeat(agent_id: str, planted: str) -> dict[str, Any]:
    return {"agent_id": agent_id, "state": "idle", "at": _iso(_now()), "note": planted}


def booking_fact(subject_id: str, planted: str) -> dict[str, Any]:
    return {"subject_id": subject_id, "at": _iso(_now()), "status": "created", "customer_phone": planted}


@dataclass
class Subject:
    """One subject: what a mutation of it is, its sentinel, and how to see the sentinel landed."""

    name: str
    jetstream: bool
    mutation: Callable[[random.Random, str], bytes]
    sentinel: Callable[[str, str], bytes]
    landed: Callable[[str], Awaitable[bool]]


async def test_no_mutated_message_breaks_a_consumer(template, database, caplog):
    await reset_nats(template.nats_url)
    settings = make_settings(template, database, OUTRIDER_ENGINE_KEYS=ENGINE_KEYS)
    rng = random.Random(SEED)
    planted: list[Personal] = []
    db = await asyncpg.connect(template.raw_dsn(database))

    pending: list[Personal] = []

    def plant() -> str:
        value = planted_value(rng)
        pending.append(value)
        return value.written

    def sent(data: bytes) -> bytes:
        """`data`, the planted values it still holds whole now judged: a
        value a mutation cut or flipped is no longer that value."""
        planted.extend(value for value in pending if intact(value, data))
        pending.clear()
        return data

    def mutated_event(build: Callable[[str, str], dict[str, Any]], instants: tuple[str, ...]):
        def mutation(rng: random.Random, tag: str) -> bytes:
            event = build(tag, plant())
            event[rng.choice(PLANTED_KEYS)] = plant()
            return sent(mutated_json(rng, event, instants))

        return mutation

    def mutated_export(rng: random.Random, tag: str) -> bytes:
        return sent(mutated_protobuf(rng, published(export(rng.randbytes(16), plant()))))

    async def run_landed(task_id: str) -> bool:
        return await db.fetchval("select count(*) from telemetry.runs where task_id = $1", task_id) == 1

    async def fact_landed(subject_id: str) -> bool:
        return await db.fetchval("select count(*) from outcomes.subject_facts where subject_id = $1", subject_id) == 1

    shared = await engine_nats(template.nats_url)
    support = await engine_key_nats(template.nats_url, "support", SUPPORT_KEY)
    service = await service_nats(template.nats_url)
    refused_at_publish = 0
    with caplog.at_level(logging.INFO):
        async with running(settings, CONTEXTS):
            bucket = await service.jetstream().key_value(HEARTBEAT_BUCKET)

            async def beat_landed(agent_id: str) -> bool:
                try:
                    return (await bucket.get(agent_id)).value is not None
                except nats.js.errors.KeyNotFoundError:
                    return False

            # Each engine-published subject: JetStream or core, its event, its time fields, its landing.
            engine_subjects = (
                ("telemetry.task", True, task_run, ("started_at", "finished_at"), run_landed),
                ("telemetry.agent", False, heartbeat, ("at",), beat_landed),
                ("facts.booking", True, booking_fact, ("at",), fact_landed),
            )

            def subjects(client: nats.NATS, suffix: str) -> list[tuple[nats.NATS, Subject]]:
                return [
                    (
                        client,
                        Subject(
                            f"{base}{suffix}",
                            jetstream,
                            mutated_event(build, instants),
                            lambda tag, planted, build=build: json.dumps(build(tag, planted)).encode(),
                            landed,
                        ),
                    )
                    for base, jetstream, build, instants, landed in engine_subjects
                ]

            every = [
                *subjects(shared, ""),
                *subjects(support, ".support"),
                (
                    service,
                    Subject(
                        otlp_codec.SUBJECT,
                        True,
                        mutated_export,
                        lambda tag, planted: published(export(bytes.fromhex(tag), planted)).SerializeToString(),
                        lambda tag: run_landed(f"{tag}-{tag[:16]}"),
                    ),
                ),
            ]
            started = time.monotonic()
            rounds = 0
            try:
                while rounds < ROUNDS and time.monotonic() - started < BUDGET_S:
                    sentinels: list[tuple[Subject, str]] = []
                    for client, subject in every:
                        js = client.jetstream(timeout=10)
                        for _ in range(PER_ROUND):
                            data = subject.mutation(rng, f"m-{rng.getrandbits(32):08x}")
                            try:
                                if subject.jetstream:
                                    await js.publish(subject.name, data)
                                else:
                                    await client.publish(subject.name, data)
                            except (nats.errors.MaxPayloadError, nats.js.errors.APIError):
                                # Past a size NATS or the stream refuses: no consumer sees it.
                                refused_at_publish += 1
                        tag = _sentinel_tag(rounds, len(sentinels), subject)
                        sentinel = sent(subject.sentinel(tag, plant()))
                        if subject.jetstream:
                            await js.publish(subject.name, sentinel)
                        else:
                            await client.publish(subject.name, sentinel)
                        sentinels.append((subject, tag))
                    for client, _ in every:
                        await client.flush()
                    for subject, tag in sentinels:
                        await eventually(
                            lambda subject=subject, tag=tag: subject.landed(tag),
                            timeout=60,
                            what=f"round {rounds}: the sentinel on {subject.name} landed",
                        )
                    for stream, durable in CONSUMERS:
                        await eventually(
                            lambda stream=stream, durable=durable: settled(service.jetstream(), stream, durable),
                            lambda state: state == (0, 0),
                            timeout=60,
                            what=f"round {rounds}: every message of {durable} settled",
                        )
                    for context in ("telemetry", "outcomes"):
                        assert await live(settings.addr(context)), f"round {rounds}: {context} is not live"
                    rounds += 1

                async def listed_beats() -> dict[str, bytes | None] | None:
                    # The sentinels' beats are stored, so the bucket has keys;
                    # nats-py's listing still answers NoKeysError now and then
                    # when its watcher reads the bucket's end first.
                    try:
                        keys = await bucket.keys()
                    except nats.js.errors.NoKeysError:
                        return None
                    return {key: (await bucket.get(key)).value for key in keys}

                stored_beats = await eventually(listed_beats, timeout=30, what="the stored heartbeats listed")
            finally:
                for client in (shared, support, service):
                    await client.close()
    try:
        stored = await _stored(db)
    finally:
        await db.close()
    seen = logged(caplog.records)
    errors = [record.getMessage() for record in caplog.records if record.levelno >= logging.ERROR]

    assert rounds >= 2, f"only {rounds} round(s) within {BUDGET_S:g}s"
    # The mutations were refused and said so: the searches below searched something.
    assert "malformed task run terminated" in seen and "malformed heartbeat dropped" in seen
    assert stored["rejections"], "no facts event was rejected"
    assert errors == []
    assert shown(planted, seen) == []
    assert shown(planted, stored["rejections"]) == []
    assert _malformed_rows(stored, stored_beats) == [], "\n".join(_malformed_rows(stored, stored_beats))
    print(
        f"NATS fuzz: {rounds} rounds × {len(every)} subjects × {PER_ROUND} mutations in"
        f" {time.monotonic() - started:.0f}s; {refused_at_publish} refused at publish"
    )


def _sentinel_tag(round_number: int, index: int, subject: Subject) -> str:
    if subject.name == otlp_codec.SUBJECT:
        return f"{round_number:04x}{index:04x}" + "5e" * 12
    if subject.name.startswith("telemetry.agent"):
        return f"SENTINEL_{round_number}_{index}"
    return f"sentinel-{round_number}-{index}"


async def _stored(db: asyncpg.Connection) -> dict[str, Any]:
    rejections = await db.fetch("select field, last_problem, last_payload from outcomes.fact_rejections")
    return {
        "runs": await db.fetch("select * from telemetry.runs"),
        "model_calls": await db.fetch("select * from telemetry.model_calls"),
        "facts": await db.fetch("select subject_id, facts from outcomes.subject_facts"),
        "rejections": "\n".join(f"{r['field']}\n{r['last_problem']}\n{r['last_payload']}" for r in rejections),
    }


def _normalised(agent_id: str) -> None:
    if guards.identifier("agent_id", agent_id, max_length=128) != agent_id:
        raise ValueError(f"agent_id {agent_id!r} is not in its normal form")


def _malformed_rows(stored: dict[str, Any], beats: dict[str, bytes | None]) -> list[str]:
    """Every stored row the guards would not admit, as it would be sent again."""
    now = _now()
    problems: list[str] = []

    def check(what: str, admit: Callable[[], object]) -> None:
        try:
            admit()
        except (guards.Refused, rules.MalformedTelemetry, ValueError, TypeError, KeyError) as error:
            problems.append(f"{what}: {error}")

    for run in stored["runs"]:
        fields = {
            key: run[key].isoformat() if isinstance(run[key], datetime) else run[key]
            for key in ("agent_id", "task_id", "task_type", "status", "started_at", "finished_at")
        }
        if SPAN_RUN.fullmatch(run["task_id"]):
            # A span's run: its agent is named as OTLP names agents (any
            # script, one normal form) and its times are bounded alike.
            check(f"span run {run['task_id']}", lambda run=run: _normalised(run["agent_id"]))
            for name in ("started_at", "finished_at"):
                check(f"span run {run['task_id']}", lambda name=name, run=run: guards.instant(name, run[name], now=now))
        else:
            check(f"run {run['task_id']!r}", lambda fields=fields: rules.parse_task(json.dumps(fields), now=now))
        if not (math.isfinite(run["duration_ms"]) and run["duration_ms"] >= 0):
            problems.append(f"run {run['task_id']!r}: duration_ms {run['duration_ms']}")
    for call in stored["model_calls"]:
        check(
            f"model call {call['span_id']}",
            lambda call=call: guards.instant("started_at", call["started_at"], now=now),
        )
        check(f"model call {call['span_id']}", lambda call=call: _normalised(call["agent_id"]))
    for row in stored["facts"]:
        document = json.loads(row["facts"]) if isinstance(row["facts"], str) else row["facts"]
        check(
            f"facts of {row['subject_id']!r}",
            lambda row=row: guards.text("subject_id", row["subject_id"], max_length=256),
        )
        for name, observation in document.items():
            values = [observation["at"]] + ([observation["value"]] if name.endswith("_at") else [])
            for value in values:
                check(
                    f"facts of {row['subject_id']!r}: {name}",
                    lambda name=name, value=value: guards.instant(name, datetime.fromisoformat(value), now=now),
                )
    for agent_id, value in beats.items():
        beat = json.loads(value or b"{}")
        check(
            f"heartbeat of {agent_id!r}",
            lambda agent_id=agent_id, beat=beat: rules.parse_heartbeat(
                json.dumps({"agent_id": agent_id, **beat}), now=now
            ),
        )
    return problems
