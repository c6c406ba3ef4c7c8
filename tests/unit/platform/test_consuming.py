"""The consumer guard: any bytes give a value or "malformed", never an
exception into the loop; logs get a safe preview; a failing write is narrowed
to the message at fault."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from services.common.consuming import (
    Malformed,
    blames_the_data,
    guarded,
    preview,
    printable,
    write_apart,
)
from services.outcomes.consumer import read_event
from services.telemetry.rules import parse_heartbeat, parse_task

PARSERS = {"telemetry.task": parse_task, "telemetry.agent": parse_heartbeat, "facts.booking": read_event}

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=6,
)
# Objects shaped like the events, with any values: the likely way a producer goes wrong.
near_events = st.fixed_dictionaries(
    {},
    optional=dict.fromkeys(
        (
            "agent_id",
            "task_id",
            "task_type",
            "status",
            "started_at",
            "finished_at",
            "error",
            "state",
            "at",
            "subject_id",
            "assigned_at",
            "delivered_at",
            "sla_due_at",
            "cancelled",
        ),
        json_values,
    ),
)


def exactly_one(result) -> bool:
    return (result.value is None) != (result.malformed is None)


@pytest.mark.parametrize("subject", sorted(PARSERS))
@given(data=st.binary(max_size=512))
@settings(max_examples=300, deadline=None)
def test_any_bytes_give_a_value_or_malformed(subject: str, data: bytes) -> None:
    assert exactly_one(guarded(PARSERS[subject], data))


@pytest.mark.parametrize("subject", sorted(PARSERS))
@given(event=near_events)
# Fourteen optional keys of any JSON make slow examples on a busy machine;
# the examples are what is being tested, not their speed.
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_any_event_shaped_json_gives_a_value_or_malformed(subject: str, event: dict) -> None:
    assert exactly_one(guarded(PARSERS[subject], json.dumps(event, allow_nan=True).encode()))


HOSTILE = {
    "nested thousands deep": b'{"agent_id": ' + b"[" * 5000 + b"]" * 5000 + b"}",
    "an integer thousands of digits long": b'{"agent_id": "A", "task_id": ' + b"9" * 5000 + b"}",
    "a timestamp that overflows in UTC": json.dumps(
        {
            "agent_id": "A",
            "task_id": "t",
            "task_type": "x",
            "status": "succeeded",
            "subject_id": "b-1",
            "started_at": "9999-12-31T23:59:59-23:59",
            "finished_at": "9999-12-31T23:59:59-23:59",
            "at": "9999-12-31T23:59:59-23:59",
            "status_x": 1,
            "delivered_at": "0001-01-01T00:00:00+23:59",
            "state": "idle",
        }
    ).encode(),
    "NUL in text": json.dumps(
        {"agent_id": "A\u0000", "subject_id": "b\u0000", "at": "2026-09-29T10:00:00Z", "status": "x\u0000"}
    ).encode(),
    "a lone surrogate": b'{"agent_id": "\\ud800", "subject_id": "\\udfff", "status": "\\ud800"}',
    "NaN": b'{"agent_id": "A", "task_id": NaN, "subject_id": NaN}',
    "not UTF-8": b"\xff\xfe\x00{",
    "huge": b'{"agent_id": "' + b"a" * (2 * 1024 * 1024) + b'"}',
}


@pytest.mark.parametrize("subject", sorted(PARSERS))
@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_the_reported_hostile_messages_never_escape_the_guard(subject: str, name: str) -> None:
    result = guarded(PARSERS[subject], HOSTILE[name])
    assert exactly_one(result)
    if name != "a timestamp that overflows in UTC" or subject == "facts.booking":
        # Telemetry keeps the engine's own time text, so a far-future stamp is
        # a run like any other there; facts compare instants and cannot.
        assert isinstance(result.malformed, Malformed) and result.malformed.field and result.malformed.problem


def test_a_preview_is_one_printable_line_of_the_first_bytes() -> None:
    shown = preview(b'{"a": "\x00\x1b[31m\nline"}' + b"x" * 500)
    assert "\x00" not in shown and "\n" not in shown and "\x1b" not in shown
    assert shown.startswith('{"a": "\\x00\\x1b[31m\\x0aline"}') and shown.endswith("…")
    assert len(shown) < 200
    assert preview(b"\xff\xfe") == "\\xff\\xfe"
    assert printable("bad \ud800 text\x00") == "bad \\xed\\xa0\\x80 text\\x00"


class SqlError(Exception):
    def __init__(self, sqlstate: str) -> None:
        super().__init__(sqlstate)
        self.sqlstate = sqlstate


class Wrapped(Exception):
    def __init__(self, orig: BaseException) -> None:
        super().__init__("wrapped")
        self.orig = orig


@pytest.mark.parametrize(
    ("error", "data"),
    [
        (SqlError("22021"), True),  # NUL in text
        (Wrapped(SqlError("23505")), True),  # a constraint
        (Wrapped(SqlError("54000")), True),  # a key too large for its index
        (Wrapped(SqlError("57P01")), False),  # the server shutting down
        (ConnectionResetError(), False),
        (TimeoutError(), False),
    ],
)
def test_only_the_rows_fault_is_blamed_on_the_data(error: BaseException, data: bool) -> None:
    assert blames_the_data(error) is data


async def test_a_failing_write_is_narrowed_to_the_items_at_fault() -> None:
    attempts: list[list[int]] = []

    async def write(items):
        attempts.append(list(items))
        if 13 in items or 42 in items:
            raise Wrapped(SqlError("22021"))
        return len(items)

    written, failed = await write_apart(list(range(64)), write)
    assert sum(written) == 62
    assert sorted(item for item, _ in failed) == [13, 42]
    # Halving finds two bad items among 64 in well under 64 writes.
    assert len(attempts) < 30


async def test_an_outage_is_raised_not_split() -> None:
    attempts = 0

    async def write(items):
        nonlocal attempts
        attempts += 1
        raise ConnectionResetError("the database went away")

    with pytest.raises(ConnectionResetError):
        await write_apart(list(range(10)), write)
    assert attempts == 1
