"""Driver connections for the two statements every engine decision runs:
precedent search and decision recording.

They bypass SQLAlchemy. Its pool wraps every checkout and return in Python
bookkeeping (0.2 ms of CPU a call on this project's bench machine, against
0.01 ms here), and the context's shared engine also pings each connection
it hands out and opens a transaction around each record: three statements
more than the one that does the work. Here a checkout is a list pop, and
nothing crosses to Postgres but the statement itself.

A connection remembers the `hnsw.ef_search` it was last given. A search
asking for a width takes an idle connection already set to it, or, while the
connections are under their cap, opens one of its own rather than re-set an
idle one of another width: a precedent search then costs one round trip, not
two, whenever the types in flight want different widths. Re-setting whatever
was idle sent a SET before 26% of the searches of a bench mixing two widths
over eight searches in flight, since the one idle connection was usually last
set for another type; opening instead brought that to 5%.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass

import asyncpg

from services.common.db import unreachable
from services.common.errors import Unavailable
from services.decisions import store

# Closing a connection politely waits for the server; a dead server must not
# hold up shutdown.
_CLOSE_TIMEOUT_S = 2.0


@dataclass(slots=True)
class _Held:
    conn: asyncpg.Connection
    ef_search: int | None = None


class DirectConnections:
    """At most `size` asyncpg connections, opened on demand, reused last-in first-out.

    `prepare` runs once on every new connection (codecs). A connection is
    never reset between uses: every statement sent on one runs in autocommit
    or inside its own `conn.transaction()`, so nothing but the remembered
    ef_search outlives a checkout.
    """

    def __init__(
        self,
        dsn: str,
        *,
        size: int,
        server_settings: Mapping[str, str],
        prepare: Callable[[asyncpg.Connection], Awaitable[None]],
    ) -> None:
        self._dsn = dsn
        self._server_settings = dict(server_settings)
        self._prepare = prepare
        self._size = size
        self._slots = asyncio.Semaphore(size)
        self._idle: list[_Held] = []
        self._open_count = 0
        self._closed = False

    @asynccontextmanager
    async def connection(self, *, ef_search: int | None = None) -> AsyncIterator[asyncpg.Connection]:
        """A connection for one unit of work; with `ef_search`, set to that graph-walk width.

        Raise domain errors after the block, not inside it: any exception
        other than the server refusing a statement closes the connection.
        """
        if self._closed:
            raise Unavailable("the decisions context is shutting down", code="SHUTTING_DOWN")
        await self._slots.acquire()
        held: _Held | None = None
        try:
            held = self._take_idle(ef_search) or await self._open()
            if ef_search is not None and held.ef_search != ef_search:
                await store.set_search_width(held.conn, ef_search=ef_search)
                held.ef_search = ef_search
            yield held.conn
        except asyncpg.PostgresError as error:
            # The server refused a statement: the connection is as good as
            # before, unless the refusal was the server going away. Its
            # shutdown error arrives before its socket closes, so such a
            # connection does not look closed yet; reused, it would still be
            # waiting for the end of that error and fail the next call.
            away = unreachable(error)
            if held is not None and (held.conn.is_closed() or held.conn.is_in_transaction() or away):
                self._drop(held, server_away=away)
                held = None
            raise
        except BaseException:
            # A call cancelled mid-statement leaves the protocol in a state
            # not worth reasoning about; a fresh connection costs milliseconds.
            if held is not None:
                self._drop(held)
                held = None
            raise
        finally:
            if held is not None and not self._closed:
                self._idle.append(held)
            elif held is not None:
                self._terminate(held)
            self._slots.release()

    def _take_idle(self, ef_search: int | None) -> _Held | None:
        if ef_search is not None:
            for index in range(len(self._idle) - 1, -1, -1):
                if self._idle[index].ef_search == ef_search:
                    return self._idle.pop(index)
            if self._open_count < self._size:
                return None  # opened for this width, and kept at it
        return self._idle.pop() if self._idle else None

    async def _open(self) -> _Held:
        # Counted from before the connect: a search arriving meanwhile must
        # see the cap as it will be, or two could both open the last one.
        self._open_count += 1
        try:
            try:
                conn = await asyncpg.connect(self._dsn, server_settings=self._server_settings)
            except (TimeoutError, OSError, asyncpg.PostgresError) as error:
                raise Unavailable(
                    f"the decisions database did not accept a connection: {type(error).__name__}",
                    code="DATABASE_UNAVAILABLE",
                ) from error
            try:
                await self._prepare(conn)
            except BaseException:
                conn.terminate()
                raise
        except BaseException:
            self._open_count -= 1
            raise
        return _Held(conn)

    def _terminate(self, held: _Held) -> None:
        held.conn.terminate()
        self._open_count -= 1

    def _drop(self, held: _Held, *, server_away: bool = False) -> None:
        was_dead = held.conn.is_closed() or server_away
        self._terminate(held)
        if was_dead:
            # A connection found dead most likely means the server restarted
            # or failed over, and then every idle one is dead too: they go
            # with it, so a retry opens a fresh connection instead of drawing
            # the next dead one.
            stale, self._idle = self._idle, []
            for other in stale:
                self._terminate(other)

    async def close(self) -> None:
        self._closed = True
        idle, self._idle = self._idle, []
        for held in idle:
            try:
                await asyncio.wait_for(held.conn.close(), _CLOSE_TIMEOUT_S)
            except (TimeoutError, OSError, asyncpg.PostgresError):
                held.conn.terminate()
