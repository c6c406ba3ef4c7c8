"""The async database engine and the per-context migration runner.

Each context owns one Postgres schema and its own Alembic history
(services/<context>/migrations/versions), with the version table inside that
schema, so contexts migrate independently and never touch each other's tables.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from urllib.parse import urlsplit

import asyncpg
from alembic.config import Config
from alembic.operations import Operations
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import exc as sql_errors
from sqlalchemy import text
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from services.common.errors import Unavailable

_log = logging.getLogger(__name__)

SERVICES_DIR = Path(__file__).resolve().parent.parent

# One key for every migration run in the cluster: two replicas starting at once
# queue here instead of racing CREATE EXTENSION or the same revision.
_MIGRATION_LOCK = 0x6F757472  # "outr"


# SQLSTATEs that say Postgres is not there for this process now, whatever
# the statement: connection exceptions (class 08), operator intervention
# (57: shut down, restarting, in recovery) and too many connections. 55000
# is wider than "closed to connections"; its text tells that one apart.
_UNREACHABLE_CLASSES = ("08", "57")
_TOO_MANY_CONNECTIONS = "53300"
_NOT_IN_PREREQUISITE_STATE = "55000"
# asyncpg's words for a statement on a connection it has seen close.
_CLOSED = "connection is closed"
# Modules of the database driver: an OSError raised inside them is the
# database's socket, whatever code called them.
_DRIVER = "asyncpg."


def unreachable(error: BaseException) -> bool:
    """Whether a database client's error means the database is away (a
    try-again answer), rather than a statement that failed (a bug).

    The error must come from a database client; its causes are then read
    for a lost socket, a refused or timed-out connection, a connection the
    driver already closed, or a SQLSTATE above. An OSError raised by
    anything else proves nothing about Postgres; one the driver raised while
    connecting (a Unix socket that is gone: FileNotFoundError) reaches the
    caller bare, not wrapped, and is known by where it was raised.
    """
    if not isinstance(error, sql_errors.SQLAlchemyError | asyncpg.PostgresError | asyncpg.InterfaceError) and not (
        isinstance(error, OSError) and _raised_in_driver(error)
    ):
        return False
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, OSError | sql_errors.TimeoutError | asyncpg.ConnectionDoesNotExistError):
            return True
        if isinstance(current, asyncpg.InterfaceError) and _CLOSED in str(current):
            # A pooled or direct connection whose socket the driver saw
            # close: the next statement on it fails with this, not with a
            # connection error, while the server is away.
            return True
        if isinstance(current, sql_errors.DBAPIError) and current.connection_invalidated:
            return True
        state = getattr(current, "sqlstate", None)
        if isinstance(state, str) and (
            state[:2] in _UNREACHABLE_CLASSES
            or state == _TOO_MANY_CONNECTIONS
            or (state == _NOT_IN_PREREQUISITE_STATE and "accepting connections" in str(current))
        ):
            return True
        current = getattr(current, "orig", None) or current.__cause__
    return False


def _raised_in_driver(error: BaseException) -> bool:
    trace = error.__traceback__
    while trace is not None:
        if str(trace.tb_frame.f_globals.get("__name__", "")).startswith(_DRIVER):
            return True
        trace = trace.tb_next
    return False


def describe(url: str) -> str:
    """The address part of a database URL, without credentials, for errors."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if not host:
        for pair in parts.query.split("&"):
            if pair.startswith("host="):
                host = pair[5:]
    port = f":{parts.port}" if parts.port else ""
    return f"{host}{port}{parts.path}"


async def answers(engine: AsyncEngine, *, timeout: float) -> bool:
    """Whether Postgres answers a trivial query within `timeout` seconds."""
    try:
        async with asyncio.timeout(timeout):
            async with engine.connect() as conn:
                await conn.execute(text("select 1"))
    except Exception:  # noqa: BLE001 - any failure means "does not answer"
        return False
    return True


async def wait_reachable(engine: AsyncEngine, *, timeout: float = 10.0) -> None:
    """Fail with a named setting and address when Postgres does not answer."""
    deadline = asyncio.get_running_loop().time() + timeout
    last: Exception | None = None
    while asyncio.get_running_loop().time() < deadline:
        try:
            async with asyncio.timeout(max(0.5, deadline - asyncio.get_running_loop().time())):
                async with engine.connect() as conn:
                    await conn.execute(text("select 1"))
            return
        except Exception as exc:  # noqa: BLE001 - any failure means "not reachable yet"
            last = exc
            await asyncio.sleep(0.5)
    raise Unavailable(
        f"DATABASE_URL is unreachable at {describe(engine.url.render_as_string(hide_password=True))}: "
        f"{type(last).__name__}: {last}".rstrip(": "),
        code="DATABASE_UNREACHABLE",
    )


def _upgrade(conn: Connection, schema: str, versions: Path, target: str) -> list[str]:
    config = Config()
    config.set_main_option("script_location", str(versions.parent))
    config.set_main_option("version_locations", str(versions))
    config.set_main_option("path_separator", "os")
    script = ScriptDirectory.from_config(config)
    applied: list[str] = []

    def upgrade(revision, context):  # alembic's callback signature
        steps = script._upgrade_revs(target, revision)
        applied.extend(step.revision.revision for step in steps)
        return steps

    context = MigrationContext.configure(
        conn,
        opts={"version_table_schema": schema, "fn": upgrade, "transactional_ddl": True},
    )
    with Operations.context(context):
        context.run_migrations()
    return applied


async def migrate(
    engine: AsyncEngine, context: str, *, extra: dict[str, str] | None = None, target: str = "heads"
) -> list[str]:
    """Bring one context's schema to head (or to `target`, a revision a test
    stops at to write rows the next one converts); safe to run twice or
    concurrently.

    Returns the revisions applied (empty when already current).
    """
    versions = SERVICES_DIR / context / "migrations" / "versions"
    async with engine.begin() as conn:
        await conn.execute(text("select pg_advisory_xact_lock(:key)"), {"key": _MIGRATION_LOCK})
        await conn.execute(text("create extension if not exists vector"))
        await conn.execute(text(f'create schema if not exists "{context}"'))
        await conn.execute(text(f'set local search_path to "{context}", public'))
        for name, value in (extra or {}).items():
            await conn.execute(text("select set_config(:name, :value, true)"), {"name": name, "value": value})
        applied = await conn.run_sync(_upgrade, context, versions, target)
    if applied:
        _log.info("migrated", extra={"context": context, "revisions": applied})
    return applied


def context_engine(url: str, context: str, *, pool_size: int = 5, max_overflow: int = 10) -> AsyncEngine:
    """An engine whose sessions see the context's schema first, then public (pgvector)."""
    return create_async_engine(
        url,
        pool_size=pool_size,
        max_overflow=max_overflow,
        pool_pre_ping=True,
        connect_args={
            "server_settings": {"search_path": f"{context},public", "application_name": f"outrider-{context}"}
        },
    )
