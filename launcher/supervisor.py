"""`outrider up`: the embedded stack plus one supervised process per context
and one for the gateway, so both cores work and a crash restarts one part.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from services.common import nats as nats_helper
from services.common.embedded import EmbeddedNats, EmbeddedPostgres, ServedTls, port_free
from services.common.grpc_server import PortInUse
from services.common.settings import CONTEXTS, Settings

_log = logging.getLogger("outrider.supervisor")

READY_TIMEOUT_S = 90.0
STOP_TIMEOUT_S = 10.0
MAX_BACKOFF_S = 30.0


def with_embedded(settings: Settings, body: Callable[[Settings], None], *, nats: bool = True) -> int:
    """Run body with DATABASE_URL (and NATS_URL) filled by embedded servers when unset."""
    pg = EmbeddedPostgres(settings.data_dir) if not settings.database_url else None
    broker = embedded_nats(settings) if nats and not settings.nats_url else None
    try:
        if pg:
            settings = dataclasses.replace(settings, database_url=pg.start())
        if broker:
            settings = dataclasses.replace(settings, nats_url=broker.start())
        body(settings)
        return 0
    finally:
        if broker:
            broker.stop()
        if pg:
            pg.stop()


def database_url(settings: Settings) -> str:
    """The database URL of settings with_embedded has resolved: set by then,
    from the environment or by the embedded server."""
    assert settings.database_url, "with_embedded resolves the database URL before its body runs"
    return settings.database_url


def embedded_nats(settings: Settings) -> EmbeddedNats:
    # Settings refuse a certificate without its key and a key without its certificate.
    cert, key = settings.nats_tls_cert, settings.nats_tls_key
    tls = ServedTls(cert, key) if cert is not None and key is not None else None
    return EmbeddedNats(
        settings.data_dir,
        settings.nats_port,
        service=nats_helper.service_user(settings),
        engine=nats_helper.engine_user(settings),
        engines=nats_helper.engine_nkeys(settings),
        tls=tls,
    )


def check_external(settings: Settings) -> None:
    """Fail fast, naming the setting, when an external dependency does not answer."""
    from services.common.db import context_engine, wait_reachable

    async def probe() -> None:
        if settings.database_url:
            engine = context_engine(settings.database_url, "registry")
            try:
                await wait_reachable(engine, timeout=10)
            finally:
                await engine.dispose()
        if settings.nats_url:
            client = await nats_helper.connect_service(settings, name="outrider-up", timeout=10)
            await client.close()

    asyncio.run(probe())


@dataclass
class Child:
    name: str
    argv: list[str]
    process: subprocess.Popen[bytes] | None = None
    restarts: int = 0
    started_at: float = 0.0
    backoff_until: float = 0.0

    def start(self, env: dict[str, str]) -> None:
        # Own session: a terminal's Ctrl-C reaches only the supervisor, which
        # then stops the children in order instead of all at once.
        self.process = subprocess.Popen(self.argv, env=env, start_new_session=True)
        self.started_at = time.monotonic()


@dataclass
class Supervisor:
    settings: Settings
    env: dict[str, str]
    children: list[Child] = field(default_factory=list)
    stopping: threading.Event = field(default_factory=threading.Event)

    def start_all(self) -> None:
        for child in self.children:
            child.start(self.env)

    def watch(self) -> None:
        """Restart crashed children with backoff until asked to stop."""
        while not self.stopping.wait(0.5):
            now = time.monotonic()
            for child in self.children:
                code = child.process.poll() if child.process else None
                if code is None or self.stopping.is_set():
                    continue
                if child.backoff_until == 0.0:
                    # A child that ran a while earns a fresh backoff.
                    ran = now - child.started_at
                    delay = 1.0 if ran > 60 else min(MAX_BACKOFF_S, 2.0 ** min(child.restarts, 5))
                    child.backoff_until = now + delay
                    _log.error(
                        "child exited; restarting",
                        extra={"child": child.name, "exit_code": code, "restart_in_s": delay},
                    )
                    print(f"outrider: {child.name} exited with {code}; restarting in {delay:.0f}s", flush=True)
                elif now >= child.backoff_until:
                    child.restarts += 1
                    child.backoff_until = 0.0
                    child.start(self.env)

    def stop_all(self) -> None:
        self.stopping.set()
        # Gateway first so no new requests arrive, then the contexts.
        for child in sorted(self.children, key=lambda c: c.name != "gateway"):
            if child.process and child.process.poll() is None:
                child.process.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + STOP_TIMEOUT_S
        for child in self.children:
            if not child.process:
                continue
            try:
                child.process.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                child.process.kill()
                child.process.wait()


def wait_ready(url: str, timeout: float = READY_TIMEOUT_S) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        # Any failure means not ready yet: refused, reset, or half an answer.
        with contextlib.suppress(Exception), urllib.request.urlopen(url, timeout=2) as reply:
            if reply.status == 200:
                return True
        time.sleep(0.3)
    return False


def run_platform(settings: Settings) -> int:
    started = time.monotonic()
    ports = [(settings.http_host, settings.http_port, "OUTRIDER_HTTP_PORT")]
    ports += [
        (settings.grpc_host, settings.port(c), "OUTRIDER_GRPC_PORT")
        for c in CONTEXTS
        if c not in settings.context_addrs
    ]
    for host, port, setting in ports:
        if not port_free(host, port):
            raise PortInUse(f"port {port} is already in use; stop what holds it or set {setting}")
    if settings.database_url or settings.nats_url:
        check_external(settings)

    # Where an engine finds the embedded server's NATS password: named only
    # when it is the one generated in the data dir, not one an operator set.
    kept = settings.data_dir / "secrets" / "nats_engine_password"
    engine_secret = (
        kept
        if (not settings.nats_url and kept.is_file() and kept.read_text().strip() == settings.nats_engine_password)
        else None
    )
    stop_requested = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop_requested.set())

    def body(resolved: Settings) -> None:
        env = dict(os.environ)
        env.update(
            {
                "DATABASE_URL": resolved.database_url or "",
                "NATS_URL": resolved.nats_url or "",
                "OUTRIDER_DATA_DIR": str(resolved.data_dir),
                "OUTRIDER_JWT_SECRET": resolved.jwt_secret,
                "OUTRIDER_INTERNAL_KEY": resolved.internal_key,
                "OUTRIDER_NATS_PASSWORD": resolved.nats_password,
                "OUTRIDER_SERVICE_KEY": resolved.service_key,
            }
        )
        exe = [sys.executable, "-m", "launcher.cli"]
        supervisor = Supervisor(
            resolved, env, [Child(c, [*exe, "serve", c]) for c in CONTEXTS] + [Child("gateway", [*exe, "gateway"])]
        )
        supervisor.start_all()
        watcher = threading.Thread(target=supervisor.watch, daemon=True)
        watcher.start()
        try:
            base = f"http://{resolved.http_host}:{resolved.http_port}"
            ready = False
            while not stop_requested.is_set() and not ready:
                ready = wait_ready(f"{base}/readyz", timeout=1.0)
            if ready:
                print_banner(resolved, base, time.monotonic() - started, engine_secret)
            stop_requested.wait()
            print("outrider: stopping…", flush=True)
        finally:
            supervisor.stop_all()

    code = with_embedded(settings, body)
    print("outrider: stopped", flush=True)
    return code


def print_banner(settings: Settings, base: str, elapsed: float, engine_secret: Path | None = None) -> None:
    from gateway.auth import issue_token
    from gateway.console import LINK_TTL_S, sign_in_link

    token = issue_token(settings.jwt_secret, sub="dev", role=1, email="dev@outrider.local", ttl_s=LINK_TTL_S)
    lines = [
        f"outrider is up in {elapsed:.1f}s",
        f"  console     {sign_in_link(settings.http_host, settings.http_port, token)}",
        "              (signs you in as role 1 for 8 hours; `outrider token --console` prints a fresh link)",
        f"  gateway     {base}   (OpenAPI at {base}/docs)",
        *(f"  {c:<11} {settings.addr(c)}   (gRPC)" for c in CONTEXTS),
        f"  postgres    {settings.database_url}",
        f"  nats        {settings.nats_url}",
        *(
            [f"  engines     NATS user {settings.nats_engine_user}, password in {engine_secret}"]
            if engine_secret
            else []
        ),
        f"  data        {settings.data_dir}",
        "",
        "  a console token:   outrider token --role 1",
        f'  try:               curl -H "Authorization: Bearer $(outrider token --role 1)" {base}/admin/ai/agents',
        "  Ctrl-C stops everything.",
    ]
    print("\n".join(lines), flush=True)
