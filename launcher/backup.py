"""`outrider backup FILE` and `outrider restore FILE`: the five contexts'
schemas in Postgres's own dump format (pg_dump's custom format, read back by
pg_restore), from and into the embedded store or DATABASE_URL.

A backup is one pg_dump of the five schemas, so it is one consistent
snapshot taken while the platform runs. A restore replaces those schemas
whole: it refuses a target that holds any rows unless forced, refuses an
archive made by a newer Outrider, restores in one transaction and then
migrates what the archive holds to this version's schema.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import asyncpg
from alembic.config import Config
from alembic.script import ScriptDirectory
from sqlalchemy.engine import make_url

from services.common.db import SERVICES_DIR, context_engine, migrate
from services.common.settings import CONTEXTS

Say = Callable[[str], None]

# Each context's Alembic history sits in its own schema; it is not data.
VERSION_TABLE = "alembic_version"
# Every part of the platform names its database connections
# "outrider-<part>" (pg_stat_activity's application_name); a restore waits
# for none of them, it refuses while one is there.
PLATFORM_CONNECTIONS = "outrider-%"
# asyncpg's spellings of an SSL mode that libpq spells otherwise.
_SSL_MODES = {"true": "require", "false": "disable"}
# What pg_dump and pg_restore say, with --verbose, as each table's data goes.
_TABLE_DONE = re.compile(r'(?:dumping contents of|processing data for) table "(?P<table>[^"]+)"')
# A TABLE DATA line of `pg_restore --list`: "<id>; <oid> <oid> TABLE DATA <schema> <table> <owner>".
_TOC_DATA = re.compile(r"^\d+; \d+ \d+ TABLE DATA (?P<schema>\S+) (?P<table>\S+) ")
_COPY_VERSION = re.compile(rf"^COPY (?P<schema>\w+)\.{VERSION_TABLE} ")


class BackupError(Exception):
    """A backup or restore that cannot go on; the message says why and what to do."""


# ─── Where the database is, for libpq's tools ─────────────────────────────


def libpq_environment(url: str) -> dict[str, str]:
    """The PG* variables that point pg_dump, pg_restore and psql at DATABASE_URL.

    Variables rather than a connection string on the command line: a
    password there is visible to everyone on the host (ps). Both URL forms
    work: `user:pass@host:5432/db` and the Unix socket's `user@/db?host=/dir`.
    """
    parsed = make_url(url)
    query = {key: value if isinstance(value, str) else value[0] for key, value in parsed.query.items()}
    values = {
        "PGHOST": parsed.host or query.get("host"),
        "PGPORT": str(parsed.port) if parsed.port else query.get("port"),
        "PGUSER": parsed.username,
        "PGPASSWORD": parsed.password,
        "PGDATABASE": parsed.database,
        "PGSSLMODE": _SSL_MODES.get(query.get("ssl", ""), query.get("ssl") or query.get("sslmode")),
    }
    return {name: str(value) for name, value in values.items() if value}


def _database(url: str) -> str:
    name = make_url(url).database
    if not name:
        raise BackupError("DATABASE_URL names no database; add it after the host (…@host:5432/outrider)")
    return name


def driver_dsn(url: str) -> str:
    """DATABASE_URL as asyncpg itself reads it."""
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


def major_version(path: str) -> int:
    """The PostgreSQL major version of a client tool, from its --version ("pg_dump (PostgreSQL) 16.2")."""
    said = subprocess.run([path, "--version"], capture_output=True, text=True, check=False).stdout
    found = re.search(r"(\d+)(?:\.\d+)*\s*$", said.strip())
    return int(found.group(1)) if found else 0


def tool(name: str, *, server_major: int | None = None) -> str:
    """pg_dump, pg_restore or psql: the pgserver wheel's (the embedded
    store's version), else the one on PATH; with `server_major`, the first
    of them as new as the server, since neither pg_dump nor pg_restore
    works with a server newer than itself."""
    candidates: list[str] = []
    try:
        # The one place pgserver names the folder of its PostgreSQL binaries.
        from pgserver import _commands
    except ImportError:
        pass
    else:
        wheel = Path(_commands.POSTGRES_BIN_PATH) / name
        if wheel.exists():
            candidates.append(str(wheel))
    on_path = shutil.which(name)
    if on_path is not None and on_path not in candidates:
        candidates.append(on_path)
    if not candidates:
        raise BackupError(f"{name} not found: install the pgserver package, or put PostgreSQL's {name} on PATH")
    if server_major is None:
        return candidates[0]
    versions = {candidate: major_version(candidate) for candidate in candidates}
    for candidate, version in versions.items():
        if version >= server_major:
            return candidate
    found = ", ".join(f"{path} ({version})" for path, version in versions.items())
    raise BackupError(
        f"the server runs PostgreSQL {server_major}, newer than every {name} found ({found});"
        f" put {name} {server_major} or later on PATH"
    )


def _tool_environment(url: str | None, application: str) -> dict[str, str]:
    # Only the URL says where to go: a PGSERVICE or PGHOST left in the
    # caller's environment must not send the dump somewhere else.
    inherited = {name: value for name, value in os.environ.items() if not name.startswith("PG")}
    return {**inherited, **(libpq_environment(url) if url else {}), "PGAPPNAME": application}


def _failed(arguments: list[str], returncode: int, complaints: list[str]) -> BackupError:
    name = Path(arguments[0]).name
    return BackupError(f"{name} failed: " + ("; ".join(complaints[-3:]) or f"exit status {returncode}"))


@dataclass(frozen=True, slots=True)
class Downstream:
    """A command that runs what the first one writes, between two texts of its own."""

    command: list[str]
    # Sent before the first command's output.
    before: str
    # Sent after it, only when the first command succeeded and all it wrote
    # went through: what makes the work stick.
    after: str


def _said_progress(stderr: IO[bytes], *, tables: int, say: Say) -> list[str]:
    """Say each table as pg_dump or pg_restore (--verbose) reports its data; what else they complained of."""
    done = 0
    complaints: list[str] = []
    for raw in stderr:
        line = raw.decode("utf-8", "replace")
        table = _TABLE_DONE.search(line)
        if table is not None:
            done += 1
            say(f"  {done}/{tables} {table['table']}")
        elif "error" in line.lower() or "warning" in line.lower():
            complaints.append(line.rstrip())
    return complaints


def run_with_progress(arguments: list[str], *, url: str, application: str, tables: int, say: Say) -> None:
    """Run pg_dump or pg_restore with --verbose, saying each table as its data goes."""
    with subprocess.Popen(
        arguments, env=_tool_environment(url, application), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    ) as process:
        assert process.stderr is not None, "stderr is a pipe"
        complaints = _said_progress(process.stderr, tables=tables, say=say)
    if process.returncode != 0:
        raise _failed(arguments, process.returncode, complaints)


def run_into(arguments: list[str], into: Downstream, *, url: str, application: str, tables: int, say: Say) -> None:
    """Run pg_restore with --verbose, its statements going into `into` (psql); both must succeed."""
    env = _tool_environment(url, application)
    delivered = threading.Event()
    # psql's complaints go to a file: a pipe nobody reads while pg_restore's
    # progress is read would stall both once full.
    with tempfile.TemporaryFile("w+b") as sink_errors:
        with subprocess.Popen(
            into.command, env=env, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=sink_errors
        ) as sink:
            with subprocess.Popen(arguments, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as source:
                copying = threading.Thread(target=_copy, args=(source, sink, into.before, delivered), daemon=True)
                copying.start()
                assert source.stderr is not None, "stderr is a pipe"
                complaints = _said_progress(source.stderr, tables=tables, say=say)
                # Before pg_restore's pipes close: all it wrote must reach psql.
                copying.join()
            _finish(sink, into.after if source.returncode == 0 and delivered.is_set() else "")
        sink_errors.seek(0)
        sink_said = [line.decode("utf-8", "replace").rstrip() for line in sink_errors if line.strip()]
    # Whichever stopped first is the cause: psql when it refused the input
    # midway, else pg_restore (and psql's complaint of input cut short is
    # only its consequence).
    if source.returncode != 0 and (sink.returncode == 0 or delivered.is_set()):
        raise _failed(arguments, source.returncode, complaints)
    if sink.returncode != 0:
        raise _failed(into.command, sink.returncode, sink_said)


def _copy(
    source: subprocess.Popen[bytes], sink: subprocess.Popen[bytes], before: str, delivered: threading.Event
) -> None:
    """Hand `before`, then all the first command writes, to the second; `delivered` once all of it went."""
    out, into = source.stdout, sink.stdin
    assert out is not None and into is not None, "both are pipes"
    try:
        into.write(before.encode())
        while chunk := out.read(1 << 16):
            into.write(chunk)
    except BrokenPipeError:
        # The second command stopped (it names why); the first has no one to write for.
        source.kill()
        return
    delivered.set()


def _finish(sink: subprocess.Popen[bytes], after: str) -> None:
    """End psql's input, with `after` when there is one; wait for it.

    A psql that has stopped already said why; writing to it then only
    raises a broken pipe, which says nothing more.
    """
    stdin = sink.stdin
    assert stdin is not None, "stdin is a pipe"
    try:
        if after:
            stdin.write(after.encode())
    except BrokenPipeError:
        pass
    finally:
        with contextlib.suppress(BrokenPipeError):
            stdin.close()
    sink.wait()


def output_of(arguments: list[str]) -> str:
    """What pg_restore writes of an archive without a database (its listing, a table's rows)."""
    ran = subprocess.run(
        arguments, env=_tool_environment(None, "outrider-restore"), capture_output=True, text=True, check=False
    )
    if ran.returncode != 0:
        raise _failed(arguments, ran.returncode, [line for line in ran.stderr.splitlines() if line.strip()])
    return ran.stdout


# ─── What a database and an archive hold ──────────────────────────────────


@dataclass(frozen=True, slots=True)
class Holdings:
    """Rows per table of each of the five schemas that exists, and the server's PostgreSQL major version."""

    rows: Mapping[str, Mapping[str, int]]
    server_major: int = 0

    @property
    def schemas(self) -> list[str]:
        return [schema for schema in CONTEXTS if schema in self.rows]

    @property
    def tables(self) -> int:
        """Every table, Alembic's version tables included: what a dump goes through."""
        return sum(len(tables) for tables in self.rows.values())

    def data(self, schema: str) -> dict[str, int]:
        """Rows per table of the schema's own data; Alembic's version table is not data."""
        return {table: n for table, n in self.rows.get(schema, {}).items() if table != VERSION_TABLE}

    def total(self, schema: str) -> int:
        return sum(self.data(schema).values())

    @property
    def empty(self) -> bool:
        return not any(self.total(schema) for schema in self.schemas)

    def described(self) -> str:
        """The schemas holding rows and their fullest tables, e.g. for a refusal to name."""
        parts = []
        for schema in self.schemas:
            full = sorted(((n, table) for table, n in self.data(schema).items() if n), reverse=True)
            if full:
                shown = ", ".join(f"{table} {n:,}" for n, table in full[:3])
                parts.append(f"{schema} {self.total(schema):,} rows ({shown}{', …' if len(full) > 3 else ''})")
        return "; ".join(parts)


async def holdings(conn: asyncpg.Connection) -> Holdings:
    schemas = await conn.fetch("select nspname from pg_namespace where nspname = any($1::text[])", list(CONTEXTS))
    rows: dict[str, dict[str, int]] = {row["nspname"]: {} for row in schemas}
    tables = await conn.fetch(
        "select table_schema, table_name from information_schema.tables"
        " where table_schema = any($1::text[]) and table_type = 'BASE TABLE' order by table_schema, table_name",
        list(CONTEXTS),
    )
    for table in tables:
        schema, name = table["table_schema"], table["table_name"]
        rows[schema][name] = await conn.fetchval(f'select count(*) from "{schema}"."{name}"')
    return Holdings(rows, server_major=int(await conn.fetchval("show server_version_num")) // 10000)


async def _connect(url: str, application: str) -> asyncpg.Connection:
    return await asyncpg.connect(driver_dsn(url), server_settings={"application_name": application})


def archive_tables(listing: str) -> list[str]:
    """The tables whose rows an archive holds, from `pg_restore --list`."""
    found = (_TOC_DATA.match(line) for line in listing.splitlines())
    return [f"{match['schema']}.{match['table']}" for match in found if match is not None]


def archive_revisions(script: str) -> dict[str, str]:
    """Each schema's Alembic revision, from the SQL `pg_restore` writes for the version tables."""
    revisions: dict[str, str] = {}
    schema = None
    for line in script.splitlines():
        copying = _COPY_VERSION.match(line)
        if copying is not None:
            schema = copying["schema"]
        elif schema is not None and line == "\\.":
            schema = None
        elif schema is not None and line.strip():
            revisions[schema] = line.strip()
    return revisions


def known_revisions(context: str) -> set[str]:
    """Every revision of the context's migration history this version ships."""
    versions = SERVICES_DIR / context / "migrations" / "versions"
    config = Config()
    config.set_main_option("script_location", str(versions.parent))
    config.set_main_option("version_locations", str(versions))
    config.set_main_option("path_separator", "os")
    return {script.revision for script in ScriptDirectory.from_config(config).walk_revisions()}


def newer_than_this_version(revisions: Mapping[str, str]) -> list[str]:
    """The schemas an archive holds at a revision this version does not know."""
    return [
        f"{schema} at {revision}"
        for schema, revision in sorted(revisions.items())
        if revision not in known_revisions(schema)
    ]


# ─── Backup ───────────────────────────────────────────────────────────────


def _size(path: Path) -> str:
    size = float(path.stat().st_size)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:,.0f} {unit}" if unit == "B" else f"{size:,.1f} {unit}"
        size /= 1024
    raise AssertionError("unreachable")


def backup(url: str, file: Path, *, say: Say = print) -> Holdings:
    """Dump the five schemas into `file`; what they held.

    The archive is written beside the file and moved over it once
    complete, so a failed backup never leaves a half archive under its
    name, nor costs the previous one.
    """
    started = time.monotonic()

    async def read() -> Holdings:
        conn = await _connect(url, "outrider-backup")
        try:
            return await holdings(conn)
        finally:
            await conn.close()

    held = asyncio.run(read())
    if not held.schemas:
        raise BackupError("nothing to back up: none of the five schemas exists (run `outrider migrate` first)")
    partial = file.with_name(file.name + ".partial")
    say(f"backing up {', '.join(held.schemas)}: {held.tables} tables")
    try:
        run_with_progress(
            [
                tool("pg_dump", server_major=held.server_major),
                "--format=custom",
                "--verbose",
                "--no-owner",
                "--no-privileges",
                *(f"--schema={schema}" for schema in held.schemas),
                f"--file={partial}",
            ],
            url=url,
            application="outrider-backup",
            tables=held.tables,
            say=say,
        )
        os.replace(partial, file)
    finally:
        partial.unlink(missing_ok=True)
    counted = ", ".join(f"{schema} {held.total(schema):,}" for schema in held.schemas)
    say(f"backed up {counted} rows to {file} ({_size(file)}) in {time.monotonic() - started:.1f} s")
    return held


# ─── Restore ──────────────────────────────────────────────────────────────


def _read_archive(file: Path) -> tuple[list[str], dict[str, str]]:
    """The tables an archive holds rows of, and each schema's revision; refuses what is not one."""
    if not file.is_file():
        raise BackupError(f"{file} is not a file")
    listing = output_of([tool("pg_restore"), "--list", str(file)])
    tables = archive_tables(listing)
    schemas = sorted({table.split(".", 1)[0] for table in tables} & set(CONTEXTS))
    if not schemas:
        raise BackupError(f"{file} holds none of the five schemas; is it an `outrider backup` archive?")
    script = output_of(
        [
            tool("pg_restore"),
            "--data-only",
            *(f"--schema={schema}" for schema in schemas),
            f"--table={VERSION_TABLE}",
            "--file=-",
            str(file),
        ]
    )
    return tables, archive_revisions(script)


async def _others_connected(conn: asyncpg.Connection) -> list[str]:
    rows = await conn.fetch(
        "select distinct application_name from pg_stat_activity"
        " where datname = current_database() and pid <> pg_backend_pid() and application_name like $1"
        " order by application_name",
        PLATFORM_CONNECTIONS,
    )
    return [row["application_name"] for row in rows]


async def _check_target(url: str, *, force: bool) -> Holdings:
    """What the target holds, once it is known it may be replaced."""
    conn = await _connect(url, "outrider-restore")
    try:
        connected = await _others_connected(conn)
        if connected:
            raise BackupError(f"the platform is using this database ({', '.join(connected)}); stop it first")
        held = await holdings(conn)
    finally:
        await conn.close()
    if not held.empty and not force:
        raise BackupError(
            f"the target database is not empty: {held.described()}; restoring replaces all of it,"
            " so pass --force to do so"
        )
    return held


def _replacing(command: list[str]) -> Downstream:
    """psql running the archive's statements in one transaction, after dropping what they replace.

    The transaction commits only once pg_restore has written the whole
    archive: a psql told nothing more simply disconnects, and Postgres
    rolls the transaction back, so a broken archive leaves the target as it
    was.
    """
    drops = " ".join(f'drop schema if exists "{schema}" cascade;' for schema in CONTEXTS)
    return Downstream(
        command=command,
        # A cascading drop lists every object it takes; only trouble is worth
        # saying. The archive holds the five schemas only; their vector
        # columns need the extension.
        before=f"begin; set client_min_messages = warning; {drops} create extension if not exists vector;\n",
        after="\ncommit;\n",
    )


async def _migrate(url: str, schemas: Iterable[str], say: Say) -> None:
    for context in schemas:
        engine = context_engine(url, context)
        try:
            applied = await migrate(engine, context)
        finally:
            await engine.dispose()
        if applied:
            say(f"  {context}: migrated through {', '.join(applied)}")


def restore(url: str, file: Path, *, force: bool = False, say: Say = print) -> Holdings:
    """Replace the five schemas of the database with the archive's; what they hold now.

    The old schemas are dropped and the archive restored in one
    transaction (see _replacing): a restore that fails leaves the target as
    it was.
    """
    started = time.monotonic()
    database = _database(url)
    tables, revisions = _read_archive(file)
    newer = newer_than_this_version(revisions)
    if newer:
        raise BackupError(f"{file} was made by a newer Outrider ({', '.join(newer)}); restore it with that version")
    replaced = asyncio.run(_check_target(url, force=force))
    if not replaced.empty:
        say(f"replacing {replaced.described()}")
    say(f"restoring {len(tables)} tables from {file} into {database}")
    run_into(
        [
            tool("pg_restore", server_major=replaced.server_major),
            "--verbose",
            "--no-owner",
            "--no-privileges",
            "--file=-",
            str(file),
        ],
        _replacing(
            [tool("psql", server_major=replaced.server_major), "--no-psqlrc", "--quiet", "--set=ON_ERROR_STOP=1"]
        ),
        url=url,
        application="outrider-restore",
        tables=len(tables),
        say=say,
    )

    async def settle() -> Holdings:
        # An archive older than this version is brought to its schema now,
        # not at the next start, so what was restored is checked at once.
        await _migrate(url, CONTEXTS, say)
        conn = await _connect(url, "outrider-restore")
        try:
            return await holdings(conn)
        finally:
            await conn.close()

    held = asyncio.run(settle())
    counted = ", ".join(f"{schema} {held.total(schema):,}" for schema in held.schemas)
    say(f"restored {counted} rows in {time.monotonic() - started:.1f} s")
    return held
