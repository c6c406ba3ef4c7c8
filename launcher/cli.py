"""The `outrider` command: run the platform, one part of it, or its chores.

outrider up                  embedded Postgres and NATS, every context and the gateway, supervised
outrider serve <context>     one context alone (what compose runs)
outrider gateway             the REST gateway alone
outrider migrate             bring every context's schema to head
outrider seed                load the example registry inventory
outrider token --role 1      a console token signed with the configured secret
outrider token --console     a console sign-in link carrying such a token
outrider health <target>     exit 0 when a context or the gateway is healthy
outrider demo                a simulated fleet against a running platform
outrider backup FILE         the five schemas' data, in Postgres's own dump format
outrider restore FILE        load such a file (a non-empty database needs --force)
outrider nats-authorization  the authorization block an external NATS needs
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.metadata
import importlib.util
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from outrider.contexts import CONTEXTS

if TYPE_CHECKING:
    from services.common.settings import Settings


class CommandError(Exception):
    """A failure the user can act on; printed as one line, no traceback."""


def _settings() -> Settings:
    from services.common import logs, settings

    loaded = settings.load()
    logs.configure("cli", loaded.log_level, loaded.log_format)
    return loaded


def cmd_up(args: argparse.Namespace) -> int:
    from launcher.supervisor import run_platform

    return run_platform(_settings())


def cmd_serve(args: argparse.Namespace) -> int:
    if args.context not in CONTEXTS:
        raise CommandError(f"unknown context {args.context!r}; choose one of: {', '.join(CONTEXTS)}")
    from services.common import logs
    from services.common.runtime import serve_forever

    settings = _settings()
    logs.configure(args.context, settings.log_level, settings.log_format)
    with asyncio.Runner(loop_factory=_fast_loop_factory()) as runner:
        return runner.run(serve_forever(args.context, settings))


def _fast_loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop where it is installed (the server extra, outside Windows),
    else asyncio's own loop: a context spends a good part of every call in
    the loop, and uvloop's is cheaper."""
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop.new_event_loop


def cmd_gateway(args: argparse.Namespace) -> int:
    import uvicorn

    from gateway.app import create_app
    from gateway.serving import uvicorn_options
    from services.common import logs
    from services.common.embedded import port_free

    settings = _settings()
    logs.configure("gateway", settings.log_level, settings.log_format)
    if not port_free(settings.http_host, settings.http_port):
        raise CommandError(f"port {settings.http_port} is already in use; stop what holds it or set OUTRIDER_HTTP_PORT")
    uvicorn.run(create_app(settings), host=settings.http_host, port=settings.http_port, **uvicorn_options(settings))
    return 0


def cmd_migrate(args: argparse.Namespace) -> int:
    from launcher.supervisor import database_url, with_embedded
    from services.common.db import context_engine, migrate, wait_reachable

    async def run(settings: Settings) -> None:
        for context in CONTEXTS:
            engine = context_engine(database_url(settings), context)
            try:
                await wait_reachable(engine)
                applied = await migrate(engine, context)
                print(f"{context}: {'applied ' + ', '.join(applied) if applied else 'up to date'}")
            finally:
                await engine.dispose()

    return with_embedded(_settings(), lambda s: asyncio.run(run(s)), nats=False)


def cmd_seed(args: argparse.Namespace) -> int:
    from launcher.supervisor import database_url, with_embedded
    from services.registry.seeding import seed_registry

    def run(settings: Settings) -> None:
        counts = asyncio.run(seed_registry(database_url(settings)))
        print(", ".join(f"{n} {what}" for what, n in counts.items()))

    return with_embedded(_settings(), run, nats=False)


def cmd_backup(args: argparse.Namespace) -> int:
    from launcher.backup import BackupError, backup
    from launcher.supervisor import database_url, with_embedded

    def run(settings: Settings) -> None:
        try:
            backup(database_url(settings), Path(args.file), say=_progress)
        except BackupError as exc:
            raise CommandError(str(exc)) from None

    return with_embedded(_settings(), run, nats=False)


def cmd_restore(args: argparse.Namespace) -> int:
    from launcher.backup import BackupError, restore
    from launcher.supervisor import database_url, with_embedded

    def run(settings: Settings) -> None:
        try:
            restore(database_url(settings), Path(args.file), force=args.force, say=_progress)
        except BackupError as exc:
            raise CommandError(str(exc)) from None

    return with_embedded(_settings(), run, nats=False)


def _progress(line: str) -> None:
    # Progress goes to stderr, so stdout stays free for whatever a script pipes.
    print(line, file=sys.stderr, flush=True)


def cmd_demo(args: argparse.Namespace) -> int:
    """Drive a running platform (`outrider up` in another terminal) with a simulated fleet."""
    import threading

    import uvicorn

    from gateway.auth import issue_token
    from launcher.demo.backend import create_backend
    from launcher.demo.fleet import DemoTarget, run_fleet
    from services.common.embedded import port_free

    settings = _settings()
    if not port_free("127.0.0.1", args.backend_port):
        raise CommandError(f"port {args.backend_port} is already in use; choose another with --backend-port")
    backend = uvicorn.Server(
        uvicorn.Config(create_backend(), host="127.0.0.1", port=args.backend_port, log_config=None, access_log=False)
    )
    threading.Thread(target=backend.run, daemon=True).start()
    print(f"demo logistics backend on http://127.0.0.1:{args.backend_port}; to let the playground's read tools use it,")
    print(f"  start outrider with OUTRIDER_TOOL_BASE_URL_DOORMILE_API=http://127.0.0.1:{args.backend_port}")
    target = DemoTarget(
        gateway_url=f"http://127.0.0.1:{settings.http_port}",
        decisions_addr=settings.addr("decisions"),
        registry_addr=settings.addr("registry"),
        nats_url=settings.nats_url or f"nats://127.0.0.1:{settings.nats_port}",
        internal_key=settings.internal_key,
        console_token=issue_token(settings.jwt_secret, sub="demo", role=1, email="demo@outrider.local"),
        nats_user=settings.nats_engine_user,
        nats_password=settings.nats_engine_password,
        nats_tls_ca=settings.nats_tls_ca,
    )
    try:
        report = asyncio.run(run_fleet(target, scale=args.scale, seed=args.seed))
    except OSError as exc:
        raise CommandError(
            f"could not reach the platform at {target.gateway_url} ({exc}); is `outrider up` running?"
        ) from None
    if args.keep_backend:
        print("backend still serving; Ctrl-C to stop")
        threading.Event().wait()
    backend.should_exit = True
    return 0 if report.ok else 1


def cmd_health(args: argparse.Namespace) -> int:
    """Exit 0 when the target answers its health check: for container probes."""
    import urllib.request

    settings = _settings()
    if args.target == "gateway":
        url = f"http://127.0.0.1:{settings.http_port}/healthz"
        try:
            with urllib.request.urlopen(url, timeout=args.timeout) as reply:
                return 0 if reply.status == 200 else 1
        except OSError as exc:
            raise CommandError(f"gateway at {url} is not healthy: {exc}") from None
    if args.target not in CONTEXTS:
        raise CommandError(f"unknown target {args.target!r}; choose gateway or one of: {', '.join(CONTEXTS)}")

    async def check() -> int:
        import grpc
        from grpc_health.v1 import health_pb2, health_pb2_grpc

        address = f"127.0.0.1:{settings.port(args.target)}"
        async with grpc.aio.insecure_channel(address) as ch:
            try:
                reply = await health_pb2_grpc.HealthStub(ch).Check(
                    health_pb2.HealthCheckRequest(), timeout=args.timeout
                )
            except grpc.aio.AioRpcError as exc:
                raise CommandError(f"{args.target} at {address} is not healthy: {exc.code().name}") from None
        return 0 if reply.status == health_pb2.HealthCheckResponse.SERVING else 1

    return asyncio.run(check())


def _whole_hours(text: str) -> int:
    hours = int(text) if text.lstrip("-").isdigit() else 0
    if hours < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number of hours, at least 1, not {text!r}")
    return hours


def cmd_token(args: argparse.Namespace) -> int:
    from datetime import timedelta

    from gateway.auth import issue_token, verify_token
    from gateway.console import LINK_TTL_S, sign_in_link
    from gateway.errors import ApiError
    from services.common.callers import STAFF_ROLES, WRITER_ROLE

    # A sign-in link defaults to role 1, as the one `outrider up` prints; a
    # bare token says which role it is for, since it is usually scripted.
    role = args.role if args.role is not None else WRITER_ROLE if args.console else None
    # Only the roles the console admits: a token for any other would be
    # minted and then refused on every page.
    if role not in STAFF_ROLES:
        problem = "is required" if role is None else f"{role} is no console role"
        roles = ", ".join(map(str, sorted(STAFF_ROLES)))
        print(
            f"outrider token: --role {problem}: one of {roles} (1 = admin, 3 or 4 = read-only staff)", file=sys.stderr
        )
        return 2
    settings = _settings()
    ttl_s = args.ttl_hours * 3600 if args.ttl_hours is not None else (LINK_TTL_S if args.console else 12 * 3600)
    token = issue_token(
        settings.jwt_secret, sub=args.sub, role=role, tenant_id=args.tenant, email=args.email, ttl_s=ttl_s
    )
    # Checked as the gateway will check it, so a token printed here is one
    # the gateway takes: a lifetime past OUTRIDER_JWT_MAX_TTL_HOURS or an
    # unprintable --sub is said now, not as a 401 later.
    try:
        verify_token(settings.jwt_secret, token, max_ttl=timedelta(hours=settings.jwt_max_ttl_hours))
    except ApiError as refused:
        print(f"outrider token: {refused.message}", file=sys.stderr)
        return 2
    print(sign_in_link(settings.http_host, settings.http_port, token) if args.console else token)
    return 0


def cmd_nats_authorization(args: argparse.Namespace) -> int:
    """Print the nats-server `authorization` block for the configured engine
    keys, to paste into an external server's configuration after each change
    of OUTRIDER_ENGINE_KEYS (a rotation adds a key's nkey, a removal drops it)."""
    from services.common.nats import authorization_conf

    print(authorization_conf(_settings(), shared_user=not args.without_shared_user), end="")
    return 0


# Where each long-running command listens, and the settings that move it.
GATEWAY_PORTS = "listens on OUTRIDER_HTTP_HOST:OUTRIDER_HTTP_PORT (default 127.0.0.1:8080)."
SERVE_PORTS = (
    "listens on OUTRIDER_<CONTEXT>_ADDR when set, else OUTRIDER_GRPC_HOST (default 127.0.0.1) at"
    " OUTRIDER_GRPC_PORT (default 50051) plus the context's offset: registry +0, decisions +1, outcomes +2,"
    " playground +3, telemetry +4."
)
UP_PORTS = (
    "ports: the gateway on OUTRIDER_HTTP_PORT (default 8080); the contexts from OUTRIDER_GRPC_PORT (default 50051,"
    " one port each: registry +0, decisions +1, outcomes +2, playground +3, telemetry +4); the embedded NATS on"
    " OUTRIDER_NATS_PORT (default 4222)."
)


def _version() -> str:
    try:
        return importlib.metadata.version("outrider")
    except importlib.metadata.PackageNotFoundError:
        return "unknown (not installed)"


def parser() -> argparse.ArgumentParser:
    # Defaults show in every command's help, so nobody reads the source for them.
    formatter = argparse.ArgumentDefaultsHelpFormatter
    root = argparse.ArgumentParser(
        prog="outrider", description="Outrider: control plane for AI agent fleets", formatter_class=formatter
    )
    root.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = root.add_subparsers(dest="command", required=True, metavar="command")

    def add(
        name: str, handler: Callable[[argparse.Namespace], int], help_text: str, epilog: str | None = None
    ) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_text, description=help_text, epilog=epilog, formatter_class=formatter)
        p.set_defaults(handler=handler)
        return p

    add("up", cmd_up, "run the embedded Postgres and NATS, every context and the gateway, supervised", UP_PORTS)
    serve = add("serve", cmd_serve, "run one context's gRPC server", SERVE_PORTS)
    serve.add_argument("context", help=f"one of: {', '.join(CONTEXTS)}")
    add("gateway", cmd_gateway, "run the REST gateway", GATEWAY_PORTS)
    add("migrate", cmd_migrate, "bring every context's schema to head")
    add("seed", cmd_seed, "load the example registry inventory (idempotent)")
    demo = add("demo", cmd_demo, "run a simulated fleet against a running platform and report")
    demo.add_argument("--scale", type=int, default=120, help="booking rounds to simulate")
    demo.add_argument("--seed", type=int, default=11, help="the simulation's random seed: same seed, same fleet")
    demo.add_argument("--backend-port", type=int, default=8099, help="port of the demo logistics backend")
    demo.add_argument("--keep-backend", action="store_true", help="keep the demo backend serving after the report")
    backup = add("backup", cmd_backup, "write the five schemas to FILE in Postgres's own dump format (pg_dump -Fc)")
    backup.add_argument("file", help="the archive to write; an existing one is replaced once the new one is whole")
    restore = add("restore", cmd_restore, "replace the five schemas with those of an `outrider backup` FILE")
    restore.add_argument("file", help="an archive `outrider backup` wrote")
    restore.add_argument("--force", action="store_true", help="replace a database that holds rows")
    health = add("health", cmd_health, "exit 0 when a context or the gateway answers its health check")
    health.add_argument("target", help=f"gateway or one of: {', '.join(CONTEXTS)}")
    health.add_argument("--timeout", type=float, default=3.0, help="seconds to wait for the answer")
    token = add("token", cmd_token, "print a console token signed with the configured secret")
    token.add_argument(
        "--role", type=int, help="1 = admin (writes), 3 or 4 = read-only staff; a --console link without it is role 1"
    )
    token.add_argument("--tenant", type=int, default=0, help="0 = platform staff (default)")
    token.add_argument("--email", default="dev@outrider.local", help="the email claim the console shows")
    token.add_argument("--sub", default="dev", help="the subject claim: who the audit log names")
    token.add_argument(
        "--ttl-hours", type=_whole_hours, default=None, help="lifetime, at least 1; 12 h for a token, 8 h for a link"
    )
    token.add_argument("--console", action="store_true", help="print a console sign-in link instead of the token")
    authorization = add(
        "nats-authorization",
        cmd_nats_authorization,
        "print the authorization block an external NATS server needs: each engine key's nkey and the services' user",
    )
    authorization.add_argument(
        "--without-shared-user",
        action="store_true",
        help="leave out the shared engine user (OUTRIDER_NATS_ENGINE_USER) once every engine connects with its key",
    )
    return root


# Top-level modules only the `server` extra installs. The engine install
# (`pip install outrider`) has the client and this command, not these.
SERVER_MODULES = frozenset(
    {
        "alembic",
        "anthropic",
        "asyncpg",
        "fastapi",
        "grpc_health",
        "grpc_reflection",
        "httpx",
        "jwt",
        "pgserver",
        "pgvector",
        "psutil",
        "pydantic",
        "sqlalchemy",
        "starlette",
        "uvicorn",
    }
)


def server_extra_missing() -> bool:
    """True when a module of the `server` extra is not installed. Looked up
    without importing: every command imports the services, and in the base
    install the first server package they reach would fail with a traceback
    instead of the one line that says what to install."""
    return any(importlib.util.find_spec(name) is None for name in SERVER_MODULES)


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if server_extra_missing():
        print(
            f"outrider: error: `outrider {args.command}` runs server parts this install lacks;"
            " install them with: pip install 'outrider[server]'",
            file=sys.stderr,
        )
        return 2
    try:
        return _run(args)
    except KeyboardInterrupt:
        return 130


def _run(args: argparse.Namespace) -> int:
    from services.common.embedded import EmbeddedError
    from services.common.errors import DomainError
    from services.common.grpc_server import PortInUse
    from services.common.settings import SettingsError

    handler: Callable[[argparse.Namespace], int] = args.handler
    try:
        return handler(args)
    except (CommandError, SettingsError, EmbeddedError, PortInUse) as exc:
        print(f"outrider: error: {exc}", file=sys.stderr)
        return 2
    except DomainError as exc:
        print(f"outrider: error: {exc.message}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
