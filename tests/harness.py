"""Test stack: one embedded Postgres and one NATS per test run, a fresh
database per test cloned from a migrated template, and in-process contexts
and gateway wired exactly as `outrider up` wires them."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import socket
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import asyncpg
import grpc
import httpx
import nats
import uvicorn

from gateway.app import create_app
from gateway.auth import issue_token
from gateway.serving import uvicorn_options
from outrider.engine_identity import nkey_seed, public_nkey, subjects_of
from outrider.nats_access import ENGINE_INBOX_PREFIX
from outrider.rpc import channel_with, keyed_channel
from services.common.callers import SERVICE_KEY_HEADER, Caller, Principal, seal
from services.common.db import context_engine, migrate
from services.common.embedded import EmbeddedNats, EmbeddedPostgres, PortReservation
from services.common.nats import EngineNkey, NatsUser
from services.common.runtime import ContextServer
from services.common.settings import CONTEXTS, Settings, load

JWT_SECRET = "test-jwt-secret-0123456789abcdef"
# The engine key of the engine named "default".
INTERNAL_KEY = "test-internal-key-0123456789abcdef"
SERVICE_KEY = "test-service-key-0123456789abcdefgh"
TEMPLATE_DB = "outrider_template"
# The suite's NATS runs with authentication on, as every deployment does.
NATS_SERVICE = NatsUser("outrider", "test-nats-service-password-0123456789")
NATS_ENGINE = NatsUser("engine", "test-nats-engine-password-0123456789ab")
# Engines with keys of their own. The suite's NATS admits each key's derived
# credential from the start, so a test that configures them (with
# OUTRIDER_ENGINE_KEYS=ENGINE_KEYS) can publish as each: `dispatch` during a
# rollover (its key and the previous one) and held to DISPATCH_AGENT,
# `support` with one key and no list.
DISPATCH_KEY = "test-dispatch-key-0123456789abcdefghij"
DISPATCH_PREVIOUS_KEY = "test-dispatch-previous-key-0123456789"
SUPPORT_KEY = "test-support-key-0123456789abcdefghijk"
ENGINE_KEYS = json.dumps(
    {
        "dispatch": {"keys": [DISPATCH_KEY, DISPATCH_PREVIOUS_KEY], "agents": ["DISPATCH_AGENT"]},
        "support": SUPPORT_KEY,
    }
)
ENGINE_NKEYS = [
    EngineNkey(engine, public_nkey(key))
    for engine, key in (
        ("default", INTERNAL_KEY),
        ("dispatch", DISPATCH_KEY),
        ("dispatch", DISPATCH_PREVIOUS_KEY),
        ("support", SUPPORT_KEY),
    )
]


# The ports the suite hands out for servers it starts later, each held until
# the test that asked for it ends (a fixture in tests/conftest.py releases
# them); one asked for outside a test, by a wider fixture or a bench, is held
# until the process exits.
_reserved: list[PortReservation] = []


def reserved_port() -> int:
    """A port on 127.0.0.1 no other server can take while it is held; the
    server it is meant for binds it all the same (see PortReservation)."""
    reservation = PortReservation()
    _reserved.append(reservation)
    return reservation.port


def reserved_ports(count: int) -> int:
    """The first of `count` consecutive ports, all held, for a server that
    numbers its ports from one base (OUTRIDER_GRPC_PORT)."""
    while True:
        held = [PortReservation()]
        try:
            for step in range(1, count):
                held.append(PortReservation(port=held[0].port + step))
        except (OSError, OverflowError):  # one of the next ports is taken, or past the last
            for reservation in held:
                reservation.release()
            continue
        _reserved.extend(held)
        return held[0].port


@contextmanager
def ports_released() -> Iterator[None]:
    """Release the ports reserved inside the block when it ends."""
    before = len(_reserved)
    try:
        yield
    finally:
        while len(_reserved) > before:
            _reserved.pop().release()


def bound_socket() -> socket.socket:
    """A TCP socket bound to a free port on 127.0.0.1, for `serving` to listen on."""
    # IPPROTO_TCP named, not left 0: asyncio turns Nagle off only on accepted
    # sockets whose protocol says TCP, and with it on every small answer
    # waits out a delayed ACK.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    return sock


@asynccontextmanager
async def serving(app: Any, sock: socket.socket | None = None, **options: Any) -> AsyncIterator[str]:
    """Serve an ASGI app in this event loop on `sock` (a fresh `bound_socket`
    when not given), with uvicorn's `options`; yields its base URL. uvicorn
    listens on the socket it is handed, so the port is held from the moment
    it is chosen, and a caller that must know it first (a gateway's
    http_port) binds the socket first."""
    sock = sock or bound_socket()
    with sock:
        server = uvicorn.Server(uvicorn.Config(app, **options))
        task = asyncio.create_task(server.serve(sockets=[sock]))
        try:
            while not server.started:
                if task.done():
                    task.result()
                    raise AssertionError("the server stopped before it started")
                await asyncio.sleep(0.01)
            yield f"http://127.0.0.1:{sock.getsockname()[1]}"
        finally:
            server.should_exit = True
            await task


@asynccontextmanager
async def serving_gateway(settings: Settings, sock: socket.socket | None = None) -> AsyncIterator[str]:
    """The gateway over HTTP, served as `outrider gateway` serves it (gateway.serving); yields its base URL."""
    async with serving(create_app(settings), sock, **uvicorn_options(settings)) as url:
        yield url


@dataclass(frozen=True)
class Stack:
    data_dir: Path
    server_url: str  # asyncpg URL of the server's maintenance database
    nats_url: str

    def database_url(self, name: str) -> str:
        head, _, query = self.server_url.partition("?")
        return f"{head.rsplit('/', 1)[0]}/{name}?{query}"

    def raw_dsn(self, name: str) -> str:
        """The same database for plain asyncpg (no SQLAlchemy dialect prefix)."""
        return self.database_url(name).replace("postgresql+asyncpg://", "postgresql://")


def start_stack(data_dir: Path) -> tuple[Stack, EmbeddedPostgres, EmbeddedNats]:
    pg = EmbeddedPostgres(data_dir)
    url = pg.start()
    broker = EmbeddedNats(data_dir, None, service=NATS_SERVICE, engine=NATS_ENGINE, engines=ENGINE_NKEYS)
    nats_url = broker.start()
    return Stack(data_dir, url, nats_url), pg, broker


@contextmanager
def embedded_stack(data_dir: Path) -> Iterator[Stack]:
    """A real Postgres and NATS for the block: the suite's and every bench's."""
    stack, pg, broker = start_stack(data_dir)
    try:
        yield stack
    finally:
        broker.stop()
        pg.stop()


async def create_database(stack: Stack, name: str, *, migrated: Iterable[str] = ()) -> str:
    """A new, empty database (dropped first if it exists), with the named
    contexts' schemas migrated; returns its SQLAlchemy URL."""
    admin = await asyncpg.connect(stack.raw_dsn("postgres"))
    try:
        await admin.execute(f"drop database if exists {name} with (force)")
        await admin.execute(f"create database {name}")
    finally:
        await admin.close()
    url = stack.database_url(name)
    for context in migrated:
        engine = context_engine(url, context)
        try:
            await migrate(engine, context)
        finally:
            await engine.dispose()
    return url


async def build_template(stack: Stack) -> None:
    admin = await asyncpg.connect(stack.raw_dsn("postgres"))
    try:
        await admin.execute(f"drop database if exists {TEMPLATE_DB} with (force)")
        await admin.execute(f"create database {TEMPLATE_DB}")
    finally:
        await admin.close()
    for context in CONTEXTS:
        engine = context_engine(stack.database_url(TEMPLATE_DB), context)
        try:
            await migrate(engine, context, extra={"outrider.embedding_dim": "384"})
        finally:
            await engine.dispose()


@asynccontextmanager
async def fresh_database(stack: Stack) -> AsyncIterator[str]:
    name = f"t_{uuid.uuid4().hex[:12]}"
    admin = await asyncpg.connect(stack.raw_dsn("postgres"))
    try:
        await admin.execute(f"create database {name} template {TEMPLATE_DB}")
        yield name
    finally:
        await admin.execute(f"drop database if exists {name} with (force)")
        await admin.close()


@asynccontextmanager
async def database_away(stack: Stack, database: str) -> AsyncIterator[None]:
    """The database goes away as a crashed or fenced Postgres does for its
    clients: every session is cut and no new one is let in, until the block ends."""
    admin = await asyncpg.connect(stack.raw_dsn("postgres"))
    try:
        await admin.execute(f'alter database "{database}" allow_connections false')
        await admin.execute(
            "select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()",
            database,
        )
        try:
            yield
        finally:
            await admin.execute(f'alter database "{database}" allow_connections true')
    finally:
        await admin.close()


async def service_nats(url: str, **options: object) -> nats.NATS:
    """A connection with the services' credential."""
    return await nats.connect(url, user=NATS_SERVICE.name, password=NATS_SERVICE.password, **options)


async def engine_nats(url: str, **options: object) -> nats.NATS:
    """A connection with the engines' credential, on the inbox it may use."""
    return await nats.connect(
        url, user=NATS_ENGINE.name, password=NATS_ENGINE.password, inbox_prefix=ENGINE_INBOX_PREFIX, **options
    )


async def engine_key_nats(url: str, engine: str, key: str, **options: object) -> nats.NATS:
    """A connection with the credential derived from `engine`'s `key`, on its own inbox."""
    return await nats.connect(
        url, nkeys_seed_str=nkey_seed(key), inbox_prefix=subjects_of(engine).inbox_prefix, **options
    )


async def reset_nats(url: str) -> None:
    """Delete every stream and bucket so a test starts from an empty broker."""
    client = await service_nats(url)
    try:
        js = client.jetstream()
        for info in await js.streams_info():
            await js.delete_stream(info.config.name)
    finally:
        await client.close()


def make_settings(stack: Stack, database: str, **env: str) -> Settings:
    ports = {c: reserved_port() for c in CONTEXTS}
    base = {
        "OUTRIDER_DATA_DIR": str(stack.data_dir / "settings"),
        "DATABASE_URL": stack.database_url(database),
        "NATS_URL": stack.nats_url,
        "OUTRIDER_JWT_SECRET": JWT_SECRET,
        "OUTRIDER_INTERNAL_KEY": INTERNAL_KEY,
        "OUTRIDER_NATS_PASSWORD": NATS_SERVICE.password,
        "OUTRIDER_NATS_ENGINE_PASSWORD": NATS_ENGINE.password,
        "OUTRIDER_SERVICE_KEY": SERVICE_KEY,
        **{f"OUTRIDER_{c.upper()}_ADDR": f"127.0.0.1:{p}" for c, p in ports.items()},
    }
    base.update(env)
    return load(base)


@asynccontextmanager
async def running(settings: Settings, contexts: Iterable[str]) -> AsyncIterator[dict[str, ContextServer]]:
    servers: dict[str, ContextServer] = {}
    try:
        for name in contexts:
            server = ContextServer(name, settings)
            servers[name] = server
            await server.start()
        yield servers
    finally:
        await asyncio.gather(*(s.stop(grace=0.5) for s in servers.values()), return_exceptions=True)


@asynccontextmanager
async def gateway_client(settings: Settings) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://gateway") as client:
            yield client


def engine_channel(settings: Settings, context: str, key: str = INTERNAL_KEY) -> grpc.aio.Channel:
    """A channel to a context as an engine holding `key`."""
    return keyed_channel(settings.addr(context), key)


def service_channel(
    settings: Settings, context: str, person: Principal | None = None, *, address: str | None = None
) -> grpc.aio.Channel:
    """A channel to a context (at `address`, else where the settings say) as
    the platform itself, acting for `person` when given."""

    def pairs() -> tuple[tuple[str, str], ...]:
        key = ((SERVICE_KEY_HEADER, settings.service_key),)
        return key if person is None else (*key, *seal(Caller(kind="service", principal=person), settings.service_key))

    return channel_with(address or settings.addr(context), pairs)


def person(role: int = 1, tenant: int = 0, *, sub: str = "u-1", email: str = "ops@example.com") -> Principal:
    return Principal(sub=sub, email=email, role=role, tenant_id=tenant)


def bearer(
    role: int = 1,
    tenant: int = 0,
    *,
    sub: str = "u-1",
    email: str = "ops@example.com",
    ttl_s: int = 3600,
    secret: str = JWT_SECRET,
) -> dict[str, str]:
    token = issue_token(secret, sub=sub, role=role, tenant_id=tenant, email=email, ttl_s=ttl_s)
    return {"Authorization": f"Bearer {token}"}


def internal_headers(key: str = INTERNAL_KEY) -> dict[str, str]:
    return {"X-Internal-Key": key}


def with_env(settings: Settings, **changes: object) -> Settings:
    return dataclasses.replace(settings, **changes)


T = TypeVar("T")


async def eventually(
    probe: Callable[[], Awaitable[T]],
    accept: Callable[[T], bool] = bool,
    *,
    timeout: float = 15.0,
    step: float = 0.05,
    what: str = "",
) -> T:
    """Poll `probe` until `accept` holds for its value, and return that value.

    Fails the test when it never holds within `timeout`, showing the last
    value seen: the one polling helper of the suite, so every wait reports
    a timeout the same way.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    value = await probe()
    while not accept(value):
        if loop.time() >= deadline:
            raise AssertionError(f"not within {timeout:g}s: {what or 'condition'}; last seen {value!r}")
        await asyncio.sleep(step)
        value = await probe()
    return value
