"""The registry snapshot engines poll, as the gateway holds it between their polls."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Final

import grpc
from fastapi import FastAPI

from outrider.v1 import registry_pb2, registry_pb2_grpc
from services.common.clients import ContextCallError

_log = logging.getLogger(__name__)

WATCH_RETRY_MIN_S: Final = 0.2
WATCH_RETRY_MAX_S: Final = 5.0


class SnapshotFeed:
    """The gateway's own copy of the registry snapshot, kept current by WatchSnapshot.

    An engine polls the snapshot far more often than the registry changes, so
    an unchanged poll is answered from this copy without any call upstream.
    While the watch is down the copy may be stale, so each poll asks the
    registry directly (GetSnapshot) until the watch is back.
    """

    def __init__(self) -> None:
        self.snapshot: registry_pb2.Snapshot | None = None
        self.live = False
        # How the last answer was known current: "live" (the watch is open),
        # "confirmed" (the registry answered just now) or "stale" (it did not,
        # and this is the last copy it confirmed).
        self.freshness = "stale"
        self._task: asyncio.Task[None] | None = None

    def ensure_watching(self, registry: registry_pb2_grpc.RegistryStub) -> None:
        # Started by the first poll, not at start-up: a gateway whose engines
        # never poll opens no stream and logs no reconnects.
        if self._task is None:
            self._task = asyncio.create_task(self._watch(registry), name="gateway.registry-watch")

    async def current(self, registry: registry_pb2_grpc.RegistryStub) -> registry_pb2.Snapshot:
        self.ensure_watching(registry)
        if self.live and self.snapshot is not None:
            self.freshness = "live"
            return self.snapshot
        held = self.snapshot
        try:
            reply: registry_pb2.GetSnapshotResponse = await registry.GetSnapshot(
                registry_pb2.GetSnapshotRequest(if_none_match=held.etag if held else "")
            )
        except ContextCallError:
            if held is None:
                raise
            # The last snapshot the registry confirmed is still the best
            # answer: an engine told "unavailable" can only keep its own copy,
            # which is no newer than this one.
            self.freshness = "stale"
            return held
        self.freshness = "confirmed"
        if reply.not_modified and held is not None:
            return held
        self.snapshot = reply.snapshot
        return reply.snapshot

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None
        self.live = False

    async def _watch(self, registry: registry_pb2_grpc.RegistryStub) -> None:
        delay = WATCH_RETRY_MIN_S
        while True:
            try:
                # Asked without an etag, the registry answers at once with its
                # current snapshot; only then is the copy known to be current,
                # so only then may polls be answered from it.
                call = registry.WatchSnapshot(registry_pb2.WatchSnapshotRequest())
            except grpc.aio.UsageError:
                return  # the channel is closed: the gateway is shutting down
            try:
                async for snapshot in call:
                    self.snapshot = snapshot
                    self.live = True
                    delay = WATCH_RETRY_MIN_S
            except grpc.aio.AioRpcError as error:
                _log.info("registry watch interrupted: %s", error.code().name)
            finally:
                self.live = False
                call.cancel()
            await asyncio.sleep(delay)
            delay = min(delay * 2, WATCH_RETRY_MAX_S)


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    app.state.registry_feed = SnapshotFeed()
    try:
        yield
    finally:
        await app.state.registry_feed.close()
