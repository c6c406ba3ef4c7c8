"""`outrider up`: the embedded Postgres and NATS, one process per context
and one for the gateway, all watched, so both cores work and a part that
dies is started again.

Every child is started, and started again, by the main thread, which lives
as long as the supervisor: the kernel signals a child tied to its parent
when the thread that forked it ends, so a child started by a thread that
returns would be signalled while the supervisor still runs.
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

import psutil

from services.common import nats as nats_helper
from services.common.embedded import (
    DataDirClaim,
    EmbeddedError,
    EmbeddedNats,
    EmbeddedPostgres,
    ServedTls,
    end_children,
    end_strays,
    port_free,
    tied_to_parent,
)
from services.common.grpc_server import PortInUse
from services.common.settings import CONTEXTS, Settings

_log = logging.getLogger("outrider.supervisor")

READY_TIMEOUT_S = 90.0
STOP_TIMEOUT_S = 10.0
MAX_BACKOFF_S = 30.0
# A child that ran this long before it ended earns a fresh backoff.
STEADY_AFTER_S = 60.0
# How often the supervisor looks at its children: a death is noticed within this.
WATCH_INTERVAL_S = 0.25
# In the environment of every context and gateway `outrider up` starts: the
# data dir, absolute. Not a setting: a start that holds the data dir's claim
# ends any process still carrying it, since the run that started that
# process is gone; a process started by hand never carries it.
SUPERVISED_MARK = "OUTRIDER_SUPERVISED_DATA_DIR"


def with_embedded(settings: Settings, body: Callable[[Settings], None], *, nats: bool = True) -> int:
    """Run body with DATABASE_URL (and NATS_URL) filled by embedded servers
    when unset. While another process (a running `outrider up`) holds the
    data dir, body uses the Postgres it runs."""
    wanted_pg, wanted_nats = not settings.database_url, nats and not settings.nats_url
    claim = DataDirClaim.take(settings.data_dir) if wanted_pg or wanted_nats else None
    if claim is None and (wanted_pg or wanted_nats):
        running = EmbeddedPostgres.running_url(settings.data_dir) if not wanted_nats else None
        if running is None:
            raise EmbeddedError(
                f"the data dir {settings.data_dir} is in use by {DataDirClaim.holder(settings.data_dir)}"
            )
        body(dataclasses.replace(settings, database_url=running))
        return 0
    pg = EmbeddedPostgres(settings.data_dir) if wanted_pg else None
    broker = embedded_nats(settings) if wanted_nats else None
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
        if claim:
            claim.release()


def database_url(settings: Settings) -> str:
    """The database URL of settings with_embedded has resolved: set by then,
    from the environment or by the embedded server."""
    assert settings.database_url, "with_embedded resolves the database URL before its body runs"
    return settings.database_url


def embedded_nats(settings: Settings, *, exit_with_parent: bool = False) -> EmbeddedNats:
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
        exit_with_parent=exit_with_parent,
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
    """One supervised process: how to start it, how to stop it when it is
    not a plain SIGTERM, and its restart history."""

    name: str
    launch: Callable[[], subprocess.Popen[bytes]]
    stop: Callable[[], None] | None = None
    process: subprocess.Popen[bytes] | None = None
    restarts: int = 0
    started_at: float = 0.0
    backoff_until: float = 0.0

    def start(self) -> None:
        self.started_at = time.monotonic()
        self.process = self.launch()

    def adopt(self, process: subprocess.Popen[bytes] | None) -> Child:
        """Watch a process started before the supervisor took over (an
        embedded server that had to be ready first)."""
        self.process, self.started_at = process, time.monotonic()
        return self


def ending(code: int) -> str:
    """How a child ended, in words: its exit status, or the signal that ended it."""
    if code < 0:
        with contextlib.suppress(ValueError):
            return f"exited on {signal.Signals(-code).name}"
        return f"exited on signal {-code}"
    return f"exited with {code}"


@dataclass
class Supervisor:
    """The children in tiers, in the order they start: each tier needs the
    ones before it, so they stop in reverse (the gateway first, Postgres
    last)."""

    tiers: list[list[Child]] = field(default_factory=list)

    @property
    def children(self) -> list[Child]:
        return [child for tier in self.tiers for child in tier]

    def watch(self, stop: threading.Event) -> None:
        """Restart ended children with backoff until `stop` is set."""
        while not stop.wait(WATCH_INTERVAL_S):
            self.check()

    def check(self) -> None:
        now = time.monotonic()
        for child in self.children:
            if child.backoff_until:
                if now >= child.backoff_until:
                    self._restart(child)
                continue
            code = child.process.poll() if child.process else None
            if code is not None:
                self._schedule(child, ending(code), code, now)

    def _schedule(self, child: Child, what: str, code: int | None, now: float) -> None:
        ran = now - child.started_at
        delay = 1.0 if ran > STEADY_AFTER_S else min(MAX_BACKOFF_S, 2.0 ** min(child.restarts, 5))
        child.backoff_until = now + delay
        _log.error("child ended; restarting", extra={"child": child.name, "exit_code": code, "restart_in_s": delay})
        print(f"outrider: {child.name} {what}; restarting in {delay:.0f}s", flush=True)

    def _restart(self, child: Child) -> None:
        child.restarts += 1
        child.backoff_until = 0.0
        try:
            child.start()
        except (OSError, EmbeddedError, psutil.Error) as exc:
            self._schedule(child, f"did not start ({exc})", None, time.monotonic())
            return
        assert child.process is not None, "a started child has its process"
        print(f"outrider: {child.name} started again (pid {child.process.pid})", flush=True)

    def stop_all(self) -> None:
        for tier in reversed(self.tiers):
            plain = [child.process for child in tier if child.stop is None and child.process is not None]
            end_children(plain, signal.SIGTERM, timeout=STOP_TIMEOUT_S)
            for child in tier:
                if child.stop is not None:
                    child.stop()


def wait_ready(url: str, timeout: float = READY_TIMEOUT_S) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        # Any failure means not ready yet: refused, reset, or half an answer.
        with contextlib.suppress(Exception), urllib.request.urlopen(url, timeout=2) as reply:
            if reply.status == 200:
                return True
        time.sleep(0.3)
    return False


def end_supervised_leftovers(data_dir: Path) -> None:
    """End the contexts and gateways a previous `outrider up` on this data
    dir left running; the caller holds the data dir's claim, so that run is
    gone."""
    mark = str(data_dir.resolve())
    leftovers = []
    for proc in psutil.process_iter(["environ"]):
        if proc.pid != os.getpid() and (proc.info["environ"] or {}).get(SUPERVISED_MARK) == mark:
            leftovers.append(proc)
    if leftovers:
        _log.warning(
            "ending the processes a previous outrider up left running",
            extra={"data_dir": mark, "pids": [proc.pid for proc in leftovers]},
        )
        end_strays(leftovers, signal.SIGTERM, timeout=STOP_TIMEOUT_S)


def run_platform(settings: Settings) -> int:
    started = time.monotonic()
    claim = DataDirClaim.take(settings.data_dir)
    if claim is None:
        raise EmbeddedError(
            f"the data dir {settings.data_dir} is in use by {DataDirClaim.holder(settings.data_dir)};"
            " stop it or set OUTRIDER_DATA_DIR"
        )
    try:
        return _run_claimed(settings, started)
    finally:
        claim.release()


def _run_claimed(settings: Settings, started: float) -> int:
    end_supervised_leftovers(settings.data_dir)
    pg = EmbeddedPostgres(settings.data_dir, exit_with_parent=True) if not settings.database_url else None
    broker = embedded_nats(settings, exit_with_parent=True) if not settings.nats_url else None
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

    supervisor = Supervisor()
    resolved = settings
    try:
        if pg:
            resolved = dataclasses.replace(resolved, database_url=pg.start())
            supervisor.tiers.append([Child("postgres", pg.restart, pg.stop).adopt(pg.process)])
        if broker:
            resolved = dataclasses.replace(resolved, nats_url=broker.start())
            supervisor.tiers.append([Child("nats", broker.restart, broker.stop).adopt(broker.process)])
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
                SUPERVISED_MARK: str(resolved.data_dir.resolve()),
            }
        )
        exe = [sys.executable, "-m", "launcher.cli"]
        contexts = [Child(c, service_launcher([*exe, "serve", c], env)) for c in CONTEXTS]
        gateway = Child("gateway", service_launcher([*exe, "gateway"], env))
        supervisor.tiers += [contexts, [gateway]]
        for child in [*contexts, gateway]:
            child.start()
        base = f"http://{resolved.http_host}:{resolved.http_port}"
        announcer = threading.Thread(
            target=announce_when_ready,
            args=(resolved, base, started, engine_secret, stop_requested),
            name="outrider-up-banner",
            daemon=True,
        )
        announcer.start()
        supervisor.watch(stop_requested)
        print("outrider: stopping…", flush=True)
    finally:
        supervisor.stop_all()
    print("outrider: stopped", flush=True)
    return 0


def service_launcher(argv: list[str], env: dict[str, str]) -> Callable[[], subprocess.Popen[bytes]]:
    """How a context or the gateway is started: in a session of its own, so
    that a terminal's Ctrl-C reaches only the supervisor, which then stops
    the children in order instead of all at once; and killed when the
    supervisor ends. Killed, not asked to stop: nobody is left to escalate a
    stop that hangs, and since every event is acknowledged after its commit,
    an abrupt end loses nothing."""

    def launch() -> subprocess.Popen[bytes]:
        return subprocess.Popen(tied_to_parent(argv, signal.SIGKILL), env=env, start_new_session=True)

    return launch


def announce_when_ready(
    settings: Settings, base: str, started: float, engine_secret: Path | None, stop: threading.Event
) -> None:
    while not stop.is_set():
        if wait_ready(f"{base}/readyz", timeout=1.0):
            print_banner(settings, base, time.monotonic() - started, engine_secret)
            return


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
