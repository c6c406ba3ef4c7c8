"""Run one context: connect, migrate, serve gRPC, drain on shutdown.

`outrider serve <context>` and the tests both use ContextServer, so what the
tests start is what production runs.
"""

from __future__ import annotations

import asyncio
import gc
import importlib
import logging
import signal
from collections.abc import Coroutine
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import grpc
from grpc_health.v1 import health_pb2
from nats.aio.client import Client as NatsClient
from nats.js import JetStreamContext
from sqlalchemy.ext.asyncio import AsyncEngine

from services.common import nats as nats_helper
from services.common.clients import ContextClients
from services.common.db import context_engine, migrate, wait_reachable
from services.common.grpc_server import bind, build_server, enable_reflection
from services.common.settings import CONTEXTS, Settings, SettingsError

_log = logging.getLogger(__name__)

SHUTDOWN_GRACE_S = 5.0


def context_module(name: str) -> ModuleType:
    """The server module of a context: services/<name>/server.py."""
    if name not in CONTEXTS:
        raise SettingsError(f"unknown context {name!r}; contexts are {', '.join(CONTEXTS)}")
    return importlib.import_module(f"services.{name}.server")


@dataclass
class Runtime:
    """What a context's servicers and background jobs share."""

    context: str
    settings: Settings
    engine: AsyncEngine
    clients: ContextClients
    nats: NatsClient | None = None
    js: JetStreamContext | None = None
    tasks: list[asyncio.Task[Any]] = field(default_factory=list)
    closers: list[Any] = field(default_factory=list)

    def spawn(self, coro: Coroutine[Any, Any, Any], *, name: str) -> asyncio.Task[Any]:
        task = asyncio.create_task(coro, name=f"{self.context}.{name}")
        task.add_done_callback(self._report)
        self.tasks.append(task)
        return task

    def on_close(self, closer: Any) -> None:
        """Register an async callable run at shutdown, before the engine closes."""
        self.closers.append(closer)

    @staticmethod
    def _report(task: asyncio.Task[Any]) -> None:
        if not task.cancelled() and task.exception() is not None:
            _log.error("background job crashed", exc_info=task.exception(), extra={"job": task.get_name()})


class ContextServer:
    def __init__(self, name: str, settings: Settings) -> None:
        self.name = name
        self.settings = settings
        self.module = context_module(name)
        self.runtime: Runtime | None = None
        self.server: grpc.aio.Server | None = None
        self._health = None
        self.port = 0

    async def start(self, address: str | None = None) -> int:
        settings = self.settings
        if not settings.database_url:
            raise SettingsError("DATABASE_URL is not set (outrider up provides the embedded one)")
        engine = context_engine(settings.database_url, self.name)
        clients = ContextClients(settings)
        runtime = Runtime(self.name, settings, engine, clients)
        self.runtime = runtime
        await wait_reachable(engine)
        extra = getattr(self.module, "migration_settings", lambda s: {})(settings)
        await migrate(engine, self.name, extra=extra)
        if getattr(self.module, "USES_NATS", False):
            if not settings.nats_url:
                raise SettingsError("NATS_URL is not set (outrider up provides the embedded one)")
            runtime.nats = await nats_helper.connect(settings.nats_url, name=f"outrider-{self.name}")
            runtime.js = runtime.nats.jetstream()
            await nats_helper.ensure_topology(runtime.js)

        server, health_servicer = build_server(settings.internal_key)
        self.server, self._health = server, health_servicer
        await self.module.attach(server, runtime)
        enable_reflection(server, self.module.SERVICE_NAMES)
        # Bind on the configured interface at the port of this context's address:
        # in compose the address is a service name others dial, not one to bind.
        self.port = bind(server, address or f"{settings.grpc_host}:{settings.port(self.name)}")
        await server.start()
        for service in ("", *self.module.SERVICE_NAMES):
            await health_servicer.set(service, health_pb2.HealthCheckResponse.SERVING)
        _log.info("serving", extra={"context": self.name, "port": self.port})
        return self.port

    async def stop(self, grace: float = SHUTDOWN_GRACE_S) -> None:
        if self._health is not None:
            await self._health.enter_graceful_shutdown()
        if self.server is not None:
            # In-flight calls get the grace period to finish; new ones are refused.
            await self.server.stop(grace)
        runtime = self.runtime
        if runtime is None:
            return
        for task in runtime.tasks:
            task.cancel()
        await asyncio.gather(*runtime.tasks, return_exceptions=True)
        for closer in reversed(runtime.closers):
            await closer()
        await runtime.clients.close()
        if runtime.nats is not None:
            await runtime.nats.drain()
        await runtime.engine.dispose()
        self.runtime = None


async def serve_forever(name: str, settings: Settings) -> None:
    """Serve one context until SIGINT or SIGTERM, then drain."""
    server = ContextServer(name, settings)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        await server.start()
        # What start-up loaded (modules, engines, stubs) lives as long as the
        # process. Left to the collector, every full collection rescans it and
        # stalls whichever calls are in flight; frozen, it is never scanned.
        gc.collect()
        gc.freeze()
        await stop.wait()
    finally:
        await server.stop()
