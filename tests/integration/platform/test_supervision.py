"""What `outrider up` started ends with it, SIGKILL included, and what it
watches comes back: NATS or Postgres killed under it turns /readyz red,
naming the one that is gone, and green again once the supervisor has
started it anew, with no context restarted and the next task run landing.

While a dependency is down the supervisor is held stopped (SIGSTOP), so the
outage lasts until the test has seen it; once it runs again (SIGCONT) it
finds its child dead, as it would have at once.

A start after a run whose children outlived it ends what that run left in
the data dir, and only that, before it starts."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import psutil
import pytest

from gateway.auth import issue_token
from outrider.client.telemetry import TelemetryPublisher
from services.common.embedded import EmbeddedPostgres, nats_server_binary, postgres_binaries
from services.common.settings import CONTEXTS
from tests.harness import eventually, reserved_port
from tests.integration.platform.supervised import Platform, leftovers
from tests.integration.telemetry.otlp_support import export, span

AGENT = "WATCH_AGENT"


@pytest.fixture
def data_dir() -> Iterator[Path]:
    # Outside pytest's basetemp, whose permissions the Postgres user cannot traverse.
    path = Path(tempfile.mkdtemp(prefix="outrider-up-"))
    yield path / "data"
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="module")
def platform() -> Iterator[Platform]:
    path = Path(tempfile.mkdtemp(prefix="outrider-watch-"))
    up = Platform(path / "data")
    up.start()
    try:
        up.wait_ready()
        yield up
    finally:
        os.kill(up.process.pid, signal.SIGCONT)
        up.interrupt()
        shutil.rmtree(path, ignore_errors=True)


@contextmanager
def paused(platform: Platform) -> Iterator[None]:
    os.kill(platform.process.pid, signal.SIGSTOP)
    try:
        yield
    finally:
        os.kill(platform.process.pid, signal.SIGCONT)


def running(proc: psutil.Process) -> bool:
    """Alive and not a zombie: an ended child whose parent has not reaped it
    yet holds nothing."""
    try:
        return proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def pids(processes: list[psutil.Process]) -> set[int]:
    return {proc.pid for proc in processes}


def services(platform: Platform) -> set[int]:
    """The contexts and the gateway: the supervisor's Python children."""
    return pids([proc for proc in psutil.Process(platform.process.pid).children() if "launcher.cli" in proc.cmdline()])


def named(platform: Platform, name: str) -> psutil.Process:
    [found] = [proc for proc in psutil.Process(platform.process.pid).children() if proc.name() == name]
    return found


# Starts a process and exits at once, so the process runs on with init for
# (or the nearest subreaper) for its parent: what a run that ended without ending its children leaves.
_ORPHAN = """\
import subprocess, sys
user, argv = sys.argv[1] or None, sys.argv[2:]
null = subprocess.DEVNULL
print(subprocess.Popen(argv, user=user, stdin=null, stdout=null, stderr=null, start_new_session=True).pid)
"""


def orphan(argv: list[str], user: str | None = None) -> psutil.Process:
    started = subprocess.run(
        [sys.executable, "-c", _ORPHAN, user or "", *argv], capture_output=True, text=True, check=True, timeout=30
    )
    return psutil.Process(int(started.stdout))


async def readiness(client: httpx.AsyncClient) -> tuple[int, dict[str, Any]]:
    reply = await client.get("/readyz")
    return reply.status_code, reply.json()


async def export_spans(client: httpx.AsyncClient, platform: Platform) -> int:
    body = export(span(1, "watch_check"), service="WATCH_EXPORTER").SerializeToString()
    reply = await client.post(
        "/v1/traces",
        content=body,
        headers={
            "Content-Type": "application/x-protobuf",
            "Authorization": f"Bearer {platform.settings().internal_key}",
        },
    )
    return reply.status_code


async def runs(client: httpx.AsyncClient, platform: Platform) -> int:
    token = issue_token(platform.settings().jwt_secret, sub="watch", role=3, email="watch@outrider.local")
    reply = await client.get("/admin/ai/insights", headers={"Authorization": f"Bearer {token}"})
    reply.raise_for_status()
    return sum(agent["runs"] for agent in reply.json()["agents"] if agent["agent_id"] == AGENT)


async def publish_run(platform: Platform, task_id: str) -> None:
    """One task run, as an engine on this machine publishes it."""
    settings = platform.settings()
    publisher = await TelemetryPublisher.connect(
        f"nats://127.0.0.1:{platform.nats_port}",
        user=settings.nats_engine_user,
        password=settings.nats_engine_password,
        timeout_s=15,
    )
    try:
        now = datetime.now(UTC)
        await publisher.task_run(
            agent_id=AGENT,
            task_id=task_id,
            task_type="watch_check",
            status="succeeded",
            started_at=now - timedelta(seconds=1),
            finished_at=now,
        )
    finally:
        await publisher.close()


async def test_a_killed_supervisor_leaves_nothing_running_and_the_data_dir_starts_again(data_dir):
    first = Platform(data_dir)
    first.start()
    try:
        await asyncio.to_thread(first.wait_ready)
        # Another start on the same data dir, on ports of its own.
        rival = await asyncio.to_thread(Platform(data_dir).attempt)
        started = first.descendants()
        names = [proc.name() for proc in started]
        commands = [" ".join(proc.cmdline()) for proc in started]
        first.process.kill()
        first.process.communicate(timeout=10)

        def survivors() -> list[str]:
            alive = [f"{proc.pid} {name}" for proc, name in zip(started, names, strict=True) if running(proc)]
            return alive + leftovers(data_dir, first.ports)

        left = await eventually(lambda: asyncio.to_thread(survivors), lambda found: found == [], timeout=20, step=0.2)
    finally:
        if first.process.poll() is None:
            first.process.kill()
            first.process.communicate(timeout=10)
    assert left == []
    # Everything it started was there to end: the postmaster with its
    # backends, nats-server, every context and the gateway.
    assert names.count("postgres") > 1 and names.count("nats-server") == 1
    assert len([command for command in commands if "launcher.cli" in command]) == len(CONTEXTS) + 1
    assert rival.returncode == 2, rival.stderr
    assert f"in use by pid {first.process.pid}" in rival.stderr

    second = Platform(data_dir)
    second.start()
    try:
        await asyncio.to_thread(second.wait_ready)
        token = issue_token(second.settings().jwt_secret, sub="watch", role=3, email="watch@outrider.local")
        async with httpx.AsyncClient(base_url=second.base) as client:
            agents = await client.get("/admin/ai/agents", headers={"Authorization": f"Bearer {token}"})
    finally:
        await asyncio.to_thread(second.interrupt)
    assert agents.status_code == 200
    assert "EXCEPTION_AGENT" in {agent["id"] for agent in agents.json()["items"]}, "the first run's data is kept"
    assert second.process.returncode == 0
    assert leftovers(data_dir, second.ports) == []


async def test_nats_killed_under_up_is_named_by_readiness_until_the_supervisor_starts_it_again(platform):
    before = services(platform)
    async with httpx.AsyncClient(base_url=platform.base, timeout=10) as client:
        # The gateway's OTLP intake connects on its first export.
        assert await export_spans(client, platform) == 200
        runs_before = await runs(client, platform)
        killed = named(platform, "nats-server")
        with paused(platform):
            killed.kill()
            _, red = await eventually(
                lambda: readiness(client),
                lambda answer: (
                    answer[0] == 503
                    and all("lost nats" in answer[1]["contexts"][c] for c in ("outcomes", "telemetry"))
                    and answer[1]["gateway"].get("nats") == "lost"
                ),
                timeout=20,
                what="/readyz red, naming NATS",
            )
            refused = await export_spans(client, platform)
        await eventually(lambda: readiness(client), lambda answer: answer[0] == 200, timeout=60, what="/readyz green")
        accepted = await export_spans(client, platform)
        await publish_run(platform, "after-nats")
        landed = await eventually(
            lambda: runs(client, platform), lambda n: n == runs_before + 1, timeout=30, what="the run in insights"
        )
    assert {c: red["contexts"][c] for c in ("registry", "decisions", "playground")} == dict.fromkeys(
        ("registry", "decisions", "playground"), "serving"
    )
    assert (refused, accepted) == (503, 200)
    assert landed == runs_before + 1
    assert named(platform, "nats-server").pid != killed.pid
    assert services(platform) == before, "NATS came back without a context or the gateway restarted"


async def test_postgres_killed_under_up_is_named_by_readiness_until_the_supervisor_starts_it_again(platform):
    before = services(platform)
    async with httpx.AsyncClient(base_url=platform.base, timeout=10) as client:
        runs_before = await runs(client, platform)
        killed = named(platform, "postgres")
        with paused(platform):
            # Its zombie stays until the supervisor runs again and reaps it.
            killed.kill()
            await eventually(
                lambda: readiness(client),
                lambda answer: (
                    answer[0] == 503 and all(answer[1]["contexts"][c] == "not_serving: lost postgres" for c in CONTEXTS)
                ),
                timeout=20,
                what="/readyz red, naming Postgres",
            )
        await eventually(lambda: readiness(client), lambda answer: answer[0] == 200, timeout=90, what="/readyz green")
        await publish_run(platform, "after-postgres")
        landed = await eventually(
            lambda: runs(client, platform), lambda n: n == runs_before + 1, timeout=30, what="the run in insights"
        )
    assert landed == runs_before + 1
    assert named(platform, "postgres").pid != killed.pid
    assert services(platform) == before, "Postgres came back without a context or the gateway restarted"


def listening(*ports: int) -> bool:
    """Whether something accepts connections on every one of `ports`."""
    for port in ports:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
        except OSError:
            return False
    return True


@dataclass
class LeftBehind:
    """What a run whose children outlived it leaves: a postmaster in the
    data dir and a nats-server on its store, holding the port the next run
    wants; beside them a stranger's nats-server, on a store of its own."""

    postmaster: psutil.Process
    nats: psutil.Process
    stranger: psutil.Process
    stranger_port: int
    sockets: Path

    @classmethod
    def plant(cls, data_dir: Path, nats_port: int, stranger_store: Path) -> LeftBehind:
        sockets = Path(tempfile.mkdtemp(prefix="outrider-left-"))
        sockets.chmod(0o777)
        user = "pgserver" if os.geteuid() == 0 else None
        postgres = [
            str(postgres_binaries() / "postgres"),
            "-D",
            str(data_dir / "postgres"),
            "-h",
            "",
            "-k",
            str(sockets),
        ]
        nats = [nats_server_binary(), "-js", "-a", "127.0.0.1"]
        config = data_dir / "nats" / "outrider-nats.conf"
        stranger_port = reserved_port()
        return cls(
            postmaster=orphan(postgres, user),
            nats=orphan([*nats, "-c", str(config), "-sd", str(data_dir / "nats"), "-p", str(nats_port)]),
            stranger=orphan([*nats, "-sd", str(stranger_store), "-p", str(stranger_port)]),
            stranger_port=stranger_port,
            sockets=sockets,
        )

    def remove(self) -> None:
        for proc in (self.postmaster, self.nats, self.stranger):
            if running(proc):
                proc.kill()
        shutil.rmtree(self.sockets, ignore_errors=True)


async def test_a_start_ends_what_a_gone_run_left_in_the_data_dir_and_nothing_else(data_dir, tmp_path_factory):
    first = Platform(data_dir)
    first.start()
    try:
        await asyncio.to_thread(first.wait_ready)
    finally:
        await asyncio.to_thread(first.interrupt)
    second = Platform(data_dir)
    left = await asyncio.to_thread(LeftBehind.plant, data_dir, second.nats_port, tmp_path_factory.mktemp("stranger"))
    try:
        await eventually(
            lambda: asyncio.to_thread(EmbeddedPostgres.running_url, data_dir),
            lambda url: url is not None,
            what="the postmaster left ready",
        )
        await eventually(
            lambda: asyncio.to_thread(listening, second.nats_port, left.stranger_port),
            what="both nats-servers listening",
        )
        in_data_dir = [left.postmaster, *left.postmaster.children(), left.nats]
        second.start()
        try:
            await asyncio.to_thread(second.wait_ready)
            token = issue_token(second.settings().jwt_secret, sub="watch", role=3, email="watch@outrider.local")
            async with httpx.AsyncClient(base_url=second.base) as client:
                agents = await client.get("/admin/ai/agents", headers={"Authorization": f"Bearer {token}"})
            still = [proc.pid for proc in in_data_dir if running(proc)]
            stranger_runs = running(left.stranger)
        finally:
            await asyncio.to_thread(second.interrupt)
    finally:
        await asyncio.to_thread(left.remove)
    assert len(in_data_dir) > 2, "the postmaster had its background processes"
    assert still == [], "what the gone run left in the data dir was ended"
    assert stranger_runs, "a nats-server on another store is not the data dir's"
    assert agents.status_code == 200
    assert "EXCEPTION_AGENT" in {agent["id"] for agent in agents.json()["items"]}
    assert second.process.returncode == 0
