"""Telling "the database is away" from "this statement failed" by a client's error."""

from __future__ import annotations

import asyncpg
import pytest
from sqlalchemy import exc as sql_errors
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

from services.common.db import unreachable
from services.common.grpc_server import answerable


def _through_sqlalchemy(error: BaseException) -> sql_errors.DBAPIError:
    # How SQLAlchemy's asyncpg dialect hands a driver error up: a DBAPIError
    # whose `orig` is the adapter's error, caused by the driver's.
    adapted = RuntimeError(str(error))
    adapted.__cause__ = error
    return sql_errors.DBAPIError("select 1", {}, adapted)


def _refused_socket() -> asyncpg.InterfaceError:
    error = asyncpg.InterfaceError("could not connect")
    error.__cause__ = ConnectionRefusedError(111, "Connection refused")
    return error


AWAY = {
    "server shut down": asyncpg.exceptions.AdminShutdownError("terminating connection due to administrator command"),
    "server starting": asyncpg.exceptions.CannotConnectNowError("the database system is starting up"),
    "connection lost mid-statement": asyncpg.exceptions.ConnectionDoesNotExistError("connection was closed"),
    "too many connections": asyncpg.exceptions.TooManyConnectionsError("sorry, too many clients already"),
    "database closed to connections": _through_sqlalchemy(
        asyncpg.exceptions.ObjectNotInPrerequisiteStateError('database "ops" is not currently accepting connections')
    ),
    "refused socket, through SQLAlchemy": _through_sqlalchemy(ConnectionRefusedError(111, "Connection refused")),
    "refused socket, from the driver": _refused_socket(),
    "pool checkout timed out": sql_errors.TimeoutError("QueuePool limit reached"),
    "invalidated connection": sql_errors.DBAPIError("select 1", {}, RuntimeError("gone"), connection_invalidated=True),
    "statement on a closed connection": asyncpg.InterfaceError("cannot call Connection.fetch(): connection is closed"),
    "closed connection, through SQLAlchemy": _through_sqlalchemy(asyncpg.InterfaceError("connection is closed")),
}

NOT_AWAY = {
    "unique violation": asyncpg.exceptions.UniqueViolationError("duplicate key value"),
    "syntax error, through SQLAlchemy": _through_sqlalchemy(asyncpg.exceptions.PostgresSyntaxError("near select")),
    "other 55000": asyncpg.exceptions.ObjectNotInPrerequisiteStateError(
        "cannot refresh materialized view concurrently"
    ),
    "an OSError from elsewhere": ConnectionRefusedError(111, "Connection refused"),
    "a missing file from elsewhere": FileNotFoundError(2, "No such file or directory"),
    "another operation in progress": asyncpg.InterfaceError(
        "cannot perform operation: another operation is in progress"
    ),
    "a timeout from elsewhere": TimeoutError(),
    "a bug": KeyError("turns"),
}


@pytest.mark.parametrize("error", AWAY.values(), ids=AWAY.keys())
def test_an_absent_database_is_answered_unavailable(error):
    assert unreachable(error)
    answer = answerable(error)
    assert answer is not None
    assert (answer.code, answer.message) == ("DATABASE_UNAVAILABLE", "the database is not answering; try again shortly")


@pytest.mark.parametrize("error", NOT_AWAY.values(), ids=NOT_AWAY.keys())
def test_a_failed_statement_or_a_bug_stays_an_internal_failure(error):
    assert not unreachable(error)
    assert answerable(error) is None


def test_a_cycle_of_causes_ends():
    first, second = asyncpg.InterfaceError("a"), asyncpg.InterfaceError("b")
    first.__cause__, second.__cause__ = second, first
    assert not unreachable(first)


async def test_a_unix_socket_that_is_gone_is_answered_unavailable(tmp_path):
    """Issue 28, 2f: the driver raises the socket's FileNotFoundError bare,
    through SQLAlchemy too; it is the database being away, not a bug."""
    gone = tmp_path / "no-postgres-here"
    try:
        await asyncpg.connect(host=str(gone), user="ops", database="ops", timeout=5)
    except FileNotFoundError as error:
        direct = error
    engine = create_async_engine(f"postgresql+asyncpg://ops@/ops?host={gone}")
    try:
        async with engine.connect() as conn:
            await conn.execute(text("select 1"))
    except FileNotFoundError as error:
        pooled = error
    finally:
        await engine.dispose()
    for error in (direct, pooled):
        answer = answerable(error)
        assert answer is not None
        assert answer.code == "DATABASE_UNAVAILABLE"
