"""Telling "the database is away" from "this statement failed" by a client's error."""

from __future__ import annotations

import asyncpg
import pytest
from sqlalchemy import exc as sql_errors

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
}

NOT_AWAY = {
    "unique violation": asyncpg.exceptions.UniqueViolationError("duplicate key value"),
    "syntax error, through SQLAlchemy": _through_sqlalchemy(asyncpg.exceptions.PostgresSyntaxError("near select")),
    "other 55000": asyncpg.exceptions.ObjectNotInPrerequisiteStateError(
        "cannot refresh materialized view concurrently"
    ),
    "an OSError from elsewhere": ConnectionRefusedError(111, "Connection refused"),
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
