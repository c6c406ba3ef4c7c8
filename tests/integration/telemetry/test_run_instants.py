"""Migration telemetry_0003: runs stored with the engine's text become instants.

Rows are written as the ingest wrote them before the migration (text, with
or without an offset), the migration runs, and each row reads back as the
instant its text named, naive text as UTC; a row whose text does not parse
keeps its received time for both and is counted in the migration's log.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime

import asyncpg
import pytest

from services.common.db import context_engine, migrate
from tests.harness import create_database

RECEIVED = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)

# task_id -> (started_at text, finished_at text, what both read back as, or None: the received time)
ROWS: dict[str, tuple[str, str, tuple[datetime, datetime] | None]] = {
    "naive": (
        "2026-09-29T20:57:00.000",
        "2026-09-29T20:57:01.250",
        (datetime(2026, 9, 29, 20, 57, tzinfo=UTC), datetime(2026, 9, 29, 20, 57, 1, 250_000, tzinfo=UTC)),
    ),
    "offset": (
        "2026-09-29T20:57:00+05:30",
        "2026-09-29 15:27:03z",
        (datetime(2026, 9, 29, 15, 27, tzinfo=UTC), datetime(2026, 9, 29, 15, 27, 3, tzinfo=UTC)),
    ),
    "compact offset, nanoseconds": (
        "2026-09-29T10:00:00.123456789-0400",
        "2026-09-29T10:00:01Z",
        (datetime(2026, 9, 29, 14, 0, 0, 123457, tzinfo=UTC), datetime(2026, 9, 29, 10, 0, 1, tzinfo=UTC)),
    ),
    # Postgres reads these, the ingest never accepted them.
    "a word": ("yesterday", "today", None),
    "no such day": ("2026-02-30T10:00:00", "2026-02-30T10:00:01", None),
    "before year one": ("0001-01-01T00:00:00+14:00", "0001-01-01T00:00:01+14:00", None),
    # One bad end is enough: a run with one instant and a guess for the other
    # would invent a duration.
    "good start, bad end": ("2026-09-29T10:00:00Z", "2026-09-29T25:00:00Z", None),
}


async def test_run_text_becomes_instants_and_unparsed_rows_keep_their_received_time(template, caplog):
    url = await create_database(template, "telemetry_instants")
    engine = context_engine(url, "telemetry")
    try:
        assert await migrate(engine, "telemetry", target="telemetry_0002") == ["telemetry_0001", "telemetry_0002"]
        conn = await asyncpg.connect(
            template.raw_dsn("telemetry_instants"), server_settings={"search_path": "telemetry"}
        )
        try:
            await conn.executemany(
                "insert into runs (agent_id, task_id, task_type, status, started_at, finished_at, duration_ms,"
                " received_at) values ('A', $1, 'sweep', 'succeeded', $2, $3, 1000, $4)",
                [(task_id, started, finished, RECEIVED) for task_id, (started, finished, _) in ROWS.items()],
            )
            with caplog.at_level(logging.INFO, logger="services"):
                assert await migrate(engine, "telemetry", target="telemetry_0003") == ["telemetry_0003"]
            stored = {
                row["task_id"]: (row["started_at"], row["finished_at"], row["duration_ms"])
                for row in await conn.fetch("select task_id, started_at, finished_at, duration_ms from runs")
            }
            types = {
                row["column_name"]: row["data_type"]
                for row in await conn.fetch(
                    "select column_name, data_type from information_schema.columns"
                    " where table_schema = 'telemetry' and table_name = 'runs'"
                    " and column_name in ('started_at', 'finished_at')"
                )
            }
            indexes = {row["indexname"] for row in await conn.fetch("select indexname from pg_indexes")}
        finally:
            await conn.close()
    finally:
        await engine.dispose()

    assert types == {"started_at": "timestamp with time zone", "finished_at": "timestamp with time zone"}
    for task_id, (_, _, expected) in ROWS.items():
        started, finished, duration = stored[task_id]
        assert (started, finished) == (expected or (RECEIVED, RECEIVED)), task_id
        assert duration == 1000, "durations are kept as the ingest computed them"
    assert {"runs_started", "runs_received", "model_calls_started"} <= indexes
    assert "model_calls_received" not in indexes
    [record] = [r for r in caplog.records if r.getMessage() == "runs placed by their own time"]
    assert (record.runs, record.kept_received_time) == (len(ROWS), 4)
    assert record.levelno == logging.WARNING


@pytest.mark.parametrize("rows", [0, 2])
async def test_a_table_whose_text_all_parses_logs_no_warning(template, caplog, rows):
    url = await create_database(template, f"telemetry_instants_{rows}")
    engine = context_engine(url, "telemetry")
    try:
        await migrate(engine, "telemetry", target="telemetry_0002")
        conn = await asyncpg.connect(
            template.raw_dsn(f"telemetry_instants_{rows}"), server_settings={"search_path": "telemetry"}
        )
        try:
            await conn.executemany(
                "insert into runs (agent_id, task_id, task_type, status, started_at, finished_at, duration_ms)"
                " values ('A', $1, 'sweep', 'succeeded', '2026-09-29T10:00:00Z', '2026-09-29T10:00:01Z', 1000)",
                [(f"t-{n}",) for n in range(rows)],
            )
        finally:
            await conn.close()
        with caplog.at_level(logging.INFO, logger="services"):
            await migrate(engine, "telemetry")
    finally:
        await engine.dispose()
    [record] = [r for r in caplog.records if r.getMessage() == "runs placed by their own time"]
    assert (record.runs, record.kept_received_time, record.levelno) == (rows, 0, logging.INFO)
