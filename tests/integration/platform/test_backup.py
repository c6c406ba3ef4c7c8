"""`outrider backup` and `outrider restore`, run as the command: the demo's
data round-trips into a fresh database, row for row."""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import asyncpg
import httpx
import pytest

from gateway.app import create_app
from gateway.auth import issue_token
from launcher.backup import BackupError, major_version, tool
from launcher.demo.fleet import DemoTarget, run_fleet
from services.common.settings import CONTEXTS
from tests.harness import (
    INTERNAL_KEY,
    JWT_SECRET,
    NATS_ENGINE,
    bearer,
    bound_socket,
    create_database,
    running,
    serving,
    with_env,
)

ROOT = Path(__file__).resolve().parents[3]


@dataclass(frozen=True)
class Ran:
    status: int
    err: str


@pytest.fixture
def data_dir() -> Iterator[Path]:
    # Not under pytest's basetemp, whose permissions the embedded Postgres's own user cannot traverse.
    path = Path(tempfile.mkdtemp(prefix="outrider-backup-"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


async def outrider(*args: str, data_dir: Path, database_url: str | None = None) -> Ran:
    """The `outrider` command in a process of its own, as an operator runs it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OUTRIDER_", "DATABASE_URL", "NATS_URL", "PG"))}
    env["OUTRIDER_DATA_DIR"] = str(data_dir)
    if database_url is not None:
        env["DATABASE_URL"] = database_url
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "launcher.cli",
        *args,
        cwd=ROOT,
        env=env,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    _, err = await process.communicate()
    return Ran(process.returncode or 0, err.decode())


async def table_digests(dsn: str) -> dict[str, tuple[int, str]]:
    """Rows and a digest of them, for every table of the five schemas."""
    conn = await asyncpg.connect(dsn)
    try:
        tables = await conn.fetch(
            "select table_schema || '.' || table_name as name from information_schema.tables"
            " where table_schema = any($1::text[]) and table_type = 'BASE TABLE'",
            list(CONTEXTS),
        )
        digests = {}
        for table in tables:
            schema, name = table["name"].split(".")
            row = await conn.fetchrow(
                f"select count(*) as n, coalesce(md5(string_agg(t::text, E'\\n' order by t::text)), '') as digest"
                f' from "{schema}"."{name}" t'
            )
            digests[table["name"]] = (row["n"], row["digest"])
        return digests
    finally:
        await conn.close()


async def load_the_demo(settings, dsn: str) -> int:
    """The demo's fleet at a small scale, then registry edits and a person's verdict; the audit rows the demo wrote."""
    sock = bound_socket()
    # The demo sweeps by itself and counts what its sweeps judged; the
    # timer's sweep, landing between two of them on a slow machine, would
    # judge decisions the report never counts.
    settings = with_env(settings, http_port=sock.getsockname()[1], sweep_interval_s=86_400)
    async with (
        running(settings, CONTEXTS),
        serving(create_app(settings), sock, log_config=None, access_log=False) as gateway_url,
    ):
        target = DemoTarget(
            gateway_url=gateway_url,
            decisions_addr=settings.addr("decisions"),
            registry_addr=settings.addr("registry"),
            nats_url=settings.nats_url,
            internal_key=INTERNAL_KEY,
            console_token=issue_token(JWT_SECRET, sub="demo", role=1),
            nats_user=NATS_ENGINE.name,
            nats_password=NATS_ENGINE.password,
        )
        report = await run_fleet(target, scale=10, seed=5, out=lambda line: None)
        assert report.failures == [] and report.judged == report.decisions_recorded > 0
        # Its pins and rollouts are audited like any change.
        demo_audit = (await table_digests(dsn))["registry.audit"][0]
        async with httpx.AsyncClient(base_url=gateway_url, headers=bearer(role=1)) as api:
            for minutes in (12, 14):
                edited = await api.patch(
                    "/admin/ai/skills/stall_response", json={"thresholds": {"stallMinutes": minutes}}
                )
                assert edited.status_code == 200, edited.text
            listed = (await api.get("/admin/ai/decisions", params={"limit": 1})).json()["items"]
            rejudged = await api.patch(
                f"/admin/ai/decisions/{listed[0]['id']}/outcome", json={"outcome": "unknown", "reason": "checked"}
            )
            assert rejudged.status_code == 200, rejudged.text
    return demo_audit


async def test_the_demos_data_round_trips_and_a_full_target_needs_force(settings, template, database, data_dir):
    demo_audit = await load_the_demo(settings, template.raw_dsn(database))
    source = await table_digests(template.raw_dsn(database))
    assert source["decisions.decisions"][0] > 0 and source["outcomes.subject_facts"][0] > 0
    assert source["decisions.outcome_history"][0] > source["decisions.decisions"][0]
    # What the demo audited, two threshold edits and the person's re-judge.
    assert source["registry.audit"][0] == demo_audit + 3 and source["telemetry.runs"][0] > 0

    archive = data_dir / "outrider.dump"
    backed_up = await outrider("backup", str(archive), data_dir=data_dir, database_url=settings.database_url)
    assert backed_up.status == 0, backed_up.err
    assert "decisions.decisions" in backed_up.err and "backed up" in backed_up.err

    target = f"restored_{uuid.uuid4().hex[:8]}"
    target_url = await create_database(template, target)
    restored = await outrider("restore", str(archive), data_dir=data_dir, database_url=target_url)
    assert restored.status == 0, restored.err
    assert f"/{len(source)} decisions.decisions" in restored.err
    assert await table_digests(template.raw_dsn(target)) == source

    refused = await outrider("restore", str(archive), data_dir=data_dir, database_url=target_url)
    assert refused.status == 2
    assert "not empty" in refused.err and "decisions" in refused.err and "--force" in refused.err
    assert await table_digests(template.raw_dsn(target)) == source

    forced = await outrider("restore", "--force", str(archive), data_dir=data_dir, database_url=target_url)
    assert forced.status == 0, forced.err
    assert await table_digests(template.raw_dsn(target)) == source


async def test_an_archive_from_an_older_schema_is_migrated_after_it_is_restored(template, data_dir):
    name = f"older_{uuid.uuid4().hex[:8]}"
    url = await create_database(template, name, migrated=CONTEXTS)
    conn = await asyncpg.connect(template.raw_dsn(name))
    try:
        # The registry as its first migration left it.
        await conn.execute(
            """
            alter table registry.agents drop column autonomy_guard;
            drop table registry.rollout_events;
            drop table registry.rollouts;
            alter table registry.audit drop column request_id;
            alter table registry.audit drop constraint audit_entity_check;
            alter table registry.audit add constraint audit_entity_check check (entity in ('agent', 'skill'));
            update registry.alembic_version set version_num = 'registry_0001';
            """
        )
    finally:
        await conn.close()
    archive = data_dir / "older.dump"
    assert (await outrider("backup", str(archive), data_dir=data_dir, database_url=url)).status == 0
    target = f"newer_{uuid.uuid4().hex[:8]}"
    restored = await outrider(
        "restore", str(archive), data_dir=data_dir, database_url=await create_database(template, target)
    )
    assert restored.status == 0, restored.err
    assert "registry: migrated through registry_0002" in restored.err
    conn = await asyncpg.connect(template.raw_dsn(target))
    try:
        assert await conn.fetchval("select version_num from registry.alembic_version") == "registry_0005"
        assert await conn.fetchval(
            "select count(*) from information_schema.columns"
            " where table_schema = 'registry' and table_name = 'audit' and column_name = 'request_id'"
        )
    finally:
        await conn.close()


async def test_an_archive_from_a_newer_outrider_is_refused_before_anything_changes(template, data_dir):
    name = f"future_{uuid.uuid4().hex[:8]}"
    url = await create_database(template, name, migrated=CONTEXTS)
    conn = await asyncpg.connect(template.raw_dsn(name))
    try:
        await conn.execute("update telemetry.alembic_version set version_num = 'telemetry_9999'")
    finally:
        await conn.close()
    archive = data_dir / "future.dump"
    assert (await outrider("backup", str(archive), data_dir=data_dir, database_url=url)).status == 0
    target = f"present_{uuid.uuid4().hex[:8]}"
    target_url = await create_database(template, target, migrated=CONTEXTS)
    conn = await asyncpg.connect(template.raw_dsn(target))
    try:
        await conn.execute("insert into decisions.subjects (id) values ('BK-KEPT')")
        refused = await outrider("restore", "--force", str(archive), data_dir=data_dir, database_url=target_url)
        assert refused.status == 2
        assert "newer Outrider (telemetry at telemetry_9999)" in refused.err
        assert await conn.fetchval("select array_agg(id) from decisions.subjects") == ["BK-KEPT"]
    finally:
        await conn.close()


async def test_the_embedded_store_is_started_for_a_backup_and_a_restore(data_dir):
    # No DATABASE_URL: each command starts the data dir's own Postgres, as `outrider migrate` does.
    for step in (("migrate",), ("seed",)):
        ran = await outrider(*step, data_dir=data_dir)
        assert ran.status == 0, ran.err
    archive = data_dir / "embedded.dump"
    backed_up = await outrider("backup", str(archive), data_dir=data_dir)
    assert backed_up.status == 0, backed_up.err
    assert archive.stat().st_size > 0
    # The seeded registry is there, so only --force replaces it.
    refused = await outrider("restore", str(archive), data_dir=data_dir)
    assert refused.status == 2 and "registry" in refused.err and "--force" in refused.err
    forced = await outrider("restore", "--force", str(archive), data_dir=data_dir)
    assert forced.status == 0, forced.err
    assert "restored registry" in forced.err


def test_a_server_newer_than_every_pg_dump_found_is_named_with_what_to_install():
    assert major_version(tool("pg_dump", server_major=16)) >= 16
    with pytest.raises(BackupError) as refused:
        tool("pg_dump", server_major=99)
    assert "the server runs PostgreSQL 99" in str(refused.value)
    assert "put pg_dump 99 or later on PATH" in str(refused.value)


async def test_a_restore_that_fails_part_way_leaves_the_target_as_it_was(template, data_dir):
    name = f"large_{uuid.uuid4().hex[:8]}"
    url = await create_database(template, name, migrated=CONTEXTS)
    conn = await asyncpg.connect(template.raw_dsn(name))
    try:
        # Rows of the schema the archive holds last, enough that a cut archive ends inside them.
        await conn.execute(
            "insert into telemetry.runs (agent_id, task_id, task_type, status, started_at, finished_at, duration_ms)"
            " select 'A', 't-' || n || '-' || md5(n::text), 'check', 'succeeded', '2026-01-05T10:00:00Z',"
            " '2026-01-05T10:00:01Z', n from generate_series(1, 20000) as n"
        )
    finally:
        await conn.close()
    archive = data_dir / "cut.dump"
    assert (await outrider("backup", str(archive), data_dir=data_dir, database_url=url)).status == 0
    whole = archive.read_bytes()
    archive.write_bytes(whole[: len(whole) * 3 // 4])

    target = f"kept_{uuid.uuid4().hex[:8]}"
    target_url = await create_database(template, target, migrated=CONTEXTS)
    conn = await asyncpg.connect(template.raw_dsn(target))
    try:
        await conn.execute("insert into decisions.subjects (id) values ('BK-KEPT')")
        failed = await outrider("restore", "--force", str(archive), data_dir=data_dir, database_url=target_url)
        assert failed.status == 2
        assert "pg_restore failed" in failed.err
        assert await conn.fetchval("select array_agg(id) from decisions.subjects") == ["BK-KEPT"]
        assert await conn.fetchval("select count(*) from telemetry.runs") == 0
    finally:
        await conn.close()
