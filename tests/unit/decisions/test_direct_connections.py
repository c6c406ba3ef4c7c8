"""The decisions context's direct connections after the server went away:
a connection that carried the server's shutdown error is not handed out
again, and neither are the idle ones beside it."""

from __future__ import annotations

import asyncpg
import pytest

from services.decisions import connections
from services.decisions.connections import DirectConnections


class StandIn:
    """A connection that is open, outside a transaction, and counts whether it was ended."""

    def __init__(self) -> None:
        self.terminated = False

    def is_closed(self) -> bool:
        return self.terminated

    def is_in_transaction(self) -> bool:
        return False

    def terminate(self) -> None:
        self.terminated = True


@pytest.fixture
def opened(monkeypatch) -> list[StandIn]:
    made: list[StandIn] = []

    async def connect(dsn: str, **options: object) -> StandIn:
        made.append(StandIn())
        return made[-1]

    monkeypatch.setattr(connections.asyncpg, "connect", connect)
    return made


async def fail_on(direct: DirectConnections, error: Exception) -> object:
    """Take a connection, see the statement on it fail with `error`; the connection taken."""
    taken: object = None
    try:
        async with direct.connection() as conn:
            taken = conn
            raise error
    except type(error):
        return taken
    raise AssertionError("the error did not come through")


def pool() -> DirectConnections:
    async def prepare(conn: object) -> None:
        return None

    return DirectConnections("postgresql://stand-in/db", size=4, server_settings={}, prepare=prepare)


async def test_a_connection_the_server_shut_down_under_is_not_reused(opened) -> None:
    direct = pool()
    async with direct.connection() as first, direct.connection() as second:
        pass
    assert len(opened) == 2
    # The server's "terminating connection" while the socket still looks open.
    shutdown = asyncpg.exceptions.AdminShutdownError("terminating connection due to unexpected postmaster exit")
    # Last in, first out: `first` went back to the idle list last.
    assert await fail_on(direct, shutdown) is first
    assert first.terminated and second.terminated
    async with direct.connection() as fresh:
        assert fresh is opened[2]
        assert not fresh.terminated


async def test_a_statement_refused_by_a_running_server_keeps_its_connection(opened) -> None:
    direct = pool()
    assert await fail_on(direct, asyncpg.exceptions.UniqueViolationError("duplicate key value")) is opened[0]
    async with direct.connection() as again:
        assert again is opened[0]
    assert len(opened) == 1 and not opened[0].terminated
