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
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import grpc
from grpc_health.v1 import health_pb2
from nats.aio.client import Client as NatsClient
from nats.js import JetStreamContext
from sqlalchemy.ext.asyncio import AsyncEngine

from outrider import balancing
from services.common import nats as nats_helper
from services.common.callers import Access
from services.common.clients import ContextClients
from services.common.db import answers, context_engine, migrate, wait_reachable
from services.common.grpc_server import EngineStreamCaps, Keys, bind, build_server, enable_reflection
from services.common.health import NATS, POSTGRES, dependency_service
from services.common.settings import CONTEXTS, Settings, SettingsError

_log = logging.getLogger(__name__)

SHUTDOWN_GRACE_S = 5.0
# How often a context asks Postgres whether it answers, and how long it
# waits; while it does not, more often, so readiness comes back promptly.
DATABASE_CHECK_INTERVAL_S = 2.0
DATABASE_RECHECK_INTERVAL_S = 0.25
DATABASE_CHECK_TIMEOUT_S = 2.0
# The same for NATS, in a context that consumes or publishes through it.
NATS_CHECK_INTERVAL_S = 1.0
NATS_RECHECK_INTERVAL_S = 0.25
NATS_CHECK_TIMEOUT_S = 2.0
# Two questions, two health service names. The overall health ("" and each
# API) is readiness: NOT_SERVING while Postgres or NATS is away or once a
# background job died. LIVENESS_SERVICE is "is this process still doing its
# work": NOT_SERVING only once a job died (and the process exits). Liveness probes
# and balancing callers ask the second: a Postgres outage must neither
# restart every replica at once (a restart cannot bring the database back)
# nor turn away the calls that need no database (counters, metrics), and
# the calls that do need it are better answered DATABASE_UNAVAILABLE than
# refused unsent. Each dependency also has a service of its own
# (services.common.health), which says which one is missing.
LIVENESS_SERVICE = balancing.HEALTH_SERVICE
# What a context accepts in one request unless its server module says more.
DEFAULT_MAX_REQUEST_BYTES = 1024 * 1024


def access_table(module: ModuleType) -> dict[str, Access]:
    """Full method path → who may call it, from the context's ACCESS table."""
    return {
        f"/{service}/{method}": access for service in module.SERVICE_NAMES for method, access in module.ACCESS.items()
    }


def server_credentials(settings: Settings) -> grpc.ServerCredentials | None:
    if settings.grpc_tls_cert is None or settings.grpc_tls_key is None:
        return None
    return grpc.ssl_server_credentials(
        [(settings.grpc_tls_key.read_bytes(), settings.grpc_tls_cert.read_bytes())],
        root_certificates=settings.grpc_tls_ca.read_bytes() if settings.grpc_tls_ca is not None else None,
        require_client_auth=settings.grpc_tls_client_auth,
    )


def _loopback(address: str) -> bool:
    host = address.rsplit(":", 1)[0].strip("[]")
    return host in ("127.0.0.1", "localhost", "::1") or host.startswith("127.")


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
    # Set when a background job ends while the context is not stopping: the
    # context can no longer do its work, so it must stop saying it can.
    failed: asyncio.Event = field(default_factory=asyncio.Event)
    stopping: bool = False

    def spawn(self, coro: Coroutine[Any, Any, Any], *, name: str) -> asyncio.Task[Any]:
        task = asyncio.create_task(coro, name=f"{self.context}.{name}")
        task.add_done_callback(self._report)
        self.tasks.append(task)
        return task

    def on_close(self, closer: Any) -> None:
        """Register an async callable run at shutdown, before the engine closes."""
        self.closers.append(closer)

    def _report(self, task: asyncio.Task[Any]) -> None:
        if self.stopping:
            return
        # Background jobs run for the life of the context; one that returns,
        # raises or is cancelled from outside has stopped doing its work.
        error = None if task.cancelled() else task.exception()
        _log.error(
            "background job ended; the context is no longer serving",
            exc_info=error,
            extra={"job": task.get_name(), "cancelled": task.cancelled()},
        )
        self.failed.set()


@dataclass(frozen=True)
class Dependency:
    """Something a context cannot work without: how to ask whether it
    answers, how often while it does, and how often while it does not."""

    name: str
    answers: Callable[[], Awaitable[bool]]
    interval_s: float
    recheck_s: float

    @property
    def service(self) -> str:
        return dependency_service(self.name)


class ContextServer:
    def __init__(self, name: str, settings: Settings) -> None:
        self.name = name
        self.settings = settings
        self.module = context_module(name)
        self.runtime: Runtime | None = None
        self.server: grpc.aio.Server | None = None
        self._health = None
        self._watch: asyncio.Task[None] | None = None
        self._dependency_watches: list[asyncio.Task[None]] = []
        # The dependencies that do not answer now, by name.
        self._lost: set[str] = set()
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
        extra: dict[str, str] = getattr(self.module, "migration_settings", lambda s: {})(settings)
        await migrate(engine, self.name, extra=extra)
        if getattr(self.module, "USES_NATS", False):
            runtime.nats = await nats_helper.connect_service(settings, name=f"outrider-{self.name}")
            if settings.production:
                await nats_helper.warn_if_open(settings)
            runtime.js = runtime.nats.jetstream()
            await nats_helper.ensure_topology(runtime.js, nats_helper.StreamLimits.of(settings))

        server, health_servicer = build_server(
            access_table(self.module),
            Keys(
                engine=settings.engine_keys,
                service=tuple(key for key in (settings.service_key, settings.service_key_previous) if key),
            ),
            max_request_bytes=getattr(self.module, "MAX_REQUEST_BYTES", DEFAULT_MAX_REQUEST_BYTES),
            max_concurrent_rpcs=settings.grpc_max_concurrent_rpcs,
            engine_streams=EngineStreamCaps(settings.streams_per_engine, settings.streams_all_engines),
        )
        self.server, self._health = server, health_servicer
        await self.module.attach(server, runtime)
        if not settings.production:
            # Schema discovery helps a developer with grpcurl; in production it
            # would hand an attacker the map.
            enable_reflection(server, self.module.SERVICE_NAMES)
        # Bind on the configured interface at the port of this context's address:
        # in compose the address is a service name others dial, not one to bind.
        listen = address or f"{settings.grpc_host}:{settings.port(self.name)}"
        credentials = server_credentials(settings)
        if credentials is None and settings.production and not _loopback(listen):
            _log.warning(
                "gRPC listens beyond loopback WITHOUT TLS: keys and console identities travel in clear;"
                " set OUTRIDER_GRPC_TLS_CERT and OUTRIDER_GRPC_TLS_KEY",
                extra={"listen": listen},
            )
        self.port = bind(server, listen, credentials)
        await server.start()
        watched = self._dependencies(runtime)
        for service in ("", *self.module.SERVICE_NAMES, LIVENESS_SERVICE, *(w.service for w in watched)):
            await health_servicer.set(service, health_pb2.HealthCheckResponse.SERVING)
        self._watch = asyncio.create_task(self._not_serving_when_failed(runtime), name=f"{self.name}.watch")
        self._dependency_watches = [
            asyncio.create_task(self._not_serving_without(runtime, watch), name=f"{self.name}.{watch.name}")
            for watch in watched
        ]
        _log.info("serving", extra={"context": self.name, "port": self.port})
        return self.port

    async def _set_health(self, status: int, *, liveness: bool = False) -> None:
        if self._health is not None:
            for service in ("", *self.module.SERVICE_NAMES, *([LIVENESS_SERVICE] if liveness else [])):
                await self._health.set(service, status)

    async def _not_serving_when_failed(self, runtime: Runtime) -> None:
        await runtime.failed.wait()
        await self._set_health(health_pb2.HealthCheckResponse.NOT_SERVING, liveness=True)

    @staticmethod
    def _dependencies(runtime: Runtime) -> list[Dependency]:
        engine = runtime.engine
        watched = [
            Dependency(
                POSTGRES,
                lambda: answers(engine, timeout=DATABASE_CHECK_TIMEOUT_S),
                DATABASE_CHECK_INTERVAL_S,
                DATABASE_RECHECK_INTERVAL_S,
            )
        ]
        if runtime.nats is not None and runtime.js is not None:
            nc, js = runtime.nats, runtime.js
            watched.append(
                Dependency(NATS, lambda: jetstream_answers(nc, js), NATS_CHECK_INTERVAL_S, NATS_RECHECK_INTERVAL_S)
            )
        return watched

    async def _not_serving_without(self, runtime: Runtime, dependency: Dependency) -> None:
        """NOT_SERVING while a dependency does not answer, SERVING again once
        every one does: callers balance away from a replica that can only
        fail, and the replica itself needs no restart, since its pool and its
        NATS connection reconnect by themselves."""
        serving, not_serving = health_pb2.HealthCheckResponse.SERVING, health_pb2.HealthCheckResponse.NOT_SERVING
        reachable = True
        while not runtime.failed.is_set():
            await asyncio.sleep(dependency.interval_s if reachable else dependency.recheck_s)
            now = await dependency.answers()
            if now == reachable or runtime.failed.is_set():
                continue
            reachable = now
            where = {"context": self.name, "dependency": dependency.name}
            if now:
                self._lost.discard(dependency.name)
                _log.info("dependency answers again", extra=where)
            else:
                self._lost.add(dependency.name)
                _log.warning("dependency does not answer; not serving", extra=where)
            if self._health is not None:
                await self._health.set(dependency.service, serving if now else not_serving)
            await self._set_health(not_serving if self._lost else serving)

    async def failure(self) -> None:
        """Return when a background job of this context has ended on its own."""
        if self.runtime is not None:
            await self.runtime.failed.wait()

    async def stop(self, grace: float = SHUTDOWN_GRACE_S) -> None:
        if self.runtime is not None:
            self.runtime.stopping = True
        for watch in (self._watch, *self._dependency_watches):
            if watch is not None:
                watch.cancel()
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
            # A drain needs the server; without it there is nothing to flush.
            await (runtime.nats.drain() if runtime.nats.is_connected else runtime.nats.close())
        await runtime.engine.dispose()
        self.runtime = None


async def jetstream_answers(nc: NatsClient, js: JetStreamContext) -> bool:
    """Whether NATS is connected and JetStream answers on it: a connection
    alone says nothing of a JetStream that lost its store or its quorum,
    which is what the consumers need."""
    if not nc.is_connected:
        return False
    try:
        async with asyncio.timeout(NATS_CHECK_TIMEOUT_S):
            await js.account_info()
    except Exception:  # noqa: BLE001 - any failure means "does not answer"
        return False
    return True


async def serve_forever(name: str, settings: Settings) -> int:
    """Serve one context until SIGINT or SIGTERM (exit status 0) or until a
    background job dies (1), then drain.

    A context whose consumer has died answers health checks NOT_SERVING at
    once, then exits so that whatever runs it (outrider up, compose,
    Kubernetes) starts a fresh process: a restart is the one repair that
    needs nobody to notice.
    """
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
        stopped, failed = asyncio.create_task(stop.wait()), asyncio.create_task(server.failure())
        await asyncio.wait((stopped, failed), return_when=asyncio.FIRST_COMPLETED)
        stopped.cancel()
        failed.cancel()
        return 1 if server.runtime is not None and server.runtime.failed.is_set() else 0
    finally:
        await server.stop()
