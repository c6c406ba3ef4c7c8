"""The live snapshot: built once per committed change, held in memory, pushed to watchers.

A snapshot read is answered from memory, never from the database: an engine
fleet polling every few seconds would otherwise turn into a steady load of
full-registry reads that almost always find nothing new.

Each replica keeps its copy current by listening on a dedicated Postgres
connection. A write on any replica notifies inside its transaction, so every
replica hears of exactly the changes that committed, and only after they
are visible to its rebuild.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any, Final

import asyncpg
from sqlalchemy.ext.asyncio import AsyncEngine

from services.registry import snapshot, store
from services.registry.rollouts import store as rollout_store
from services.registry.snapshot import EncodedSnapshot

_log = logging.getLogger(__name__)

RECONNECT_MIN_S: Final = 0.1
RECONNECT_MAX_S: Final = 5.0
# A half-open socket (the database host vanished) raises no error by itself;
# a cheap query now and then turns it into one, so the listener reconnects.
KEEPALIVE_S: Final = 15.0

Spawn = Callable[..., asyncio.Task[Any]]


def listen_dsn(engine: AsyncEngine) -> str:
    """The engine's database as a plain asyncpg DSN (Unix-socket URLs included)."""
    return engine.url.set(drivername="postgresql").render_as_string(hide_password=False)


async def read_snapshot(engine: AsyncEngine) -> EncodedSnapshot:
    """The registry as it is now, read in one repeatable-read transaction so the parts agree."""
    async with engine.connect() as pooled:
        conn = await pooled.execution_options(isolation_level="REPEATABLE READ")
        async with conn.begin():
            agents = [row.agent for row in await store.list_agents(conn)]
            skills = [row.skill for row in await store.list_skills(conn)]
            tools = await store.list_tools(conn)
            rollouts = await rollout_store.active_rollouts(conn)
    return snapshot.encode(snapshot.build_document(agents, skills, tools, rollouts))


class SnapshotHub:
    """The current snapshot of one replica, and the watchers waiting for the next one."""

    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine
        self._dsn = listen_dsn(engine)
        self._current: EncodedSnapshot | None = None
        # Replaced on every publish: a watcher waits on the event that was
        # current when it last looked, so it cannot miss a publish in between.
        self._published = asyncio.Event()
        self._wanted = asyncio.Event()
        self._closed = False

    @property
    def current(self) -> EncodedSnapshot:
        if self._current is None:
            raise RuntimeError("the snapshot hub has not been started")
        return self._current

    async def start(self, spawn: Spawn) -> None:
        """Build the first snapshot, then keep it current in the background."""
        self._publish(await read_snapshot(self._engine))
        spawn(self._rebuild_loop(), name="snapshot-rebuild")
        spawn(self._listen_loop(), name="snapshot-listen")

    async def close(self) -> None:
        self._closed = True
        self._published.set()

    def request_rebuild(self) -> None:
        """Ask for a rebuild; many requests while one runs collapse into one more."""
        self._wanted.set()

    async def updates(self, since: str) -> AsyncIterator[EncodedSnapshot]:
        """The current snapshot unless its etag is `since`, then every new one, until close."""
        while not self._closed:
            waiter = self._published
            current = self.current
            if current.etag != since:
                since = current.etag
                yield current
                continue
            await waiter.wait()

    def _publish(self, fresh: EncodedSnapshot) -> None:
        if self._current is not None and fresh.etag == self._current.etag:
            return
        self._current = fresh
        published, self._published = self._published, asyncio.Event()
        published.set()
        _log.info("registry snapshot rebuilt", extra={"etag": fresh.etag})

    async def _rebuild_loop(self) -> None:
        delay = RECONNECT_MIN_S
        while True:
            await self._wanted.wait()
            self._wanted.clear()
            try:
                self._publish(await read_snapshot(self._engine))
                delay = RECONNECT_MIN_S
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 - keep serving the last snapshot and try again
                _log.exception("registry snapshot rebuild failed; keeping the previous one")
                await asyncio.sleep(delay)
                delay = min(delay * 2, RECONNECT_MAX_S)
                self._wanted.set()

    async def _listen_loop(self) -> None:
        delay = RECONNECT_MIN_S
        while True:
            try:
                await self._listen_once()
                delay = RECONNECT_MIN_S
            except asyncio.CancelledError:
                raise
            except Exception as error:  # noqa: BLE001 - the database may be restarting; retry
                _log.warning("registry change listener lost: %s: %s", type(error).__name__, error)
            await asyncio.sleep(delay)
            delay = min(delay * 2, RECONNECT_MAX_S)

    async def _listen_once(self) -> None:
        conn = await asyncpg.connect(self._dsn, server_settings={"application_name": "outrider-registry-listen"})
        lost = asyncio.Event()
        conn.add_termination_listener(lambda _: lost.set())
        try:
            await store.listen_for_changes(conn, self.request_rebuild)
            # Changes committed while no listener was connected were never
            # heard; one rebuild after (re)connecting covers them.
            self.request_rebuild()
            while not lost.is_set():
                try:
                    await asyncio.wait_for(lost.wait(), KEEPALIVE_S)
                except TimeoutError:
                    await store.keep_alive(conn)
        finally:
            await _close_quietly(conn)


async def _close_quietly(conn: asyncpg.Connection) -> None:
    try:
        await asyncio.wait_for(conn.close(), 2.0)
    except Exception:  # noqa: BLE001 - the connection is already gone
        conn.terminate()
