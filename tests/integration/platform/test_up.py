"""`outrider up` from an empty data dir: ready, serving, data kept across a
restart, and nothing left running after Ctrl-C."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import psutil
import pytest

from services.common.settings import CONTEXTS
from tests.harness import reserved_port, reserved_ports


def get(url: str, token: str | None = None) -> tuple[int, dict]:
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"} if token else {})
    try:
        with urllib.request.urlopen(request, timeout=5) as reply:
            return reply.status, json.loads(reply.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())
    except OSError:
        return 0, {}


def leftovers(data_dir: Path) -> list[str]:
    found = []
    for proc in psutil.process_iter(["name", "cmdline"]):
        cmdline = " ".join(proc.info["cmdline"] or [])
        if str(data_dir) in cmdline:
            found.append(f"{proc.info['name']}: {cmdline[:120]}")
    return found


def child(parent_pid: int, context: str) -> psutil.Process:
    for proc in psutil.Process(parent_pid).children():
        if proc.cmdline()[-2:] == ["serve", context]:
            return proc
    raise AssertionError(f"no child serving {context}")


class Platform:
    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.http_port = reserved_port()
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(("OUTRIDER_", "DATABASE_URL", "NATS_URL"))}
        self.env.update(
            {
                "OUTRIDER_DATA_DIR": str(data_dir),
                "OUTRIDER_HTTP_PORT": str(self.http_port),
                "OUTRIDER_GRPC_PORT": str(reserved_ports(len(CONTEXTS))),
                "OUTRIDER_NATS_PORT": str(reserved_port()),
            }
        )
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "launcher.cli", "up"],
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )

    def wait_ready(self, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.process.poll() is None, "outrider up exited early"
            status, _ = get(f"http://127.0.0.1:{self.http_port}/readyz")
            if status == 200:
                return
            time.sleep(0.5)
        raise AssertionError("outrider up never became ready")

    def wait_restarted(self, context: str, crashed: int, timeout: float = 60) -> None:
        """Until a child other than the crashed one serves `context`."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with contextlib.suppress(AssertionError, psutil.Error):  # none yet, or one that just exited
                if child(self.process.pid, context).pid != crashed:
                    return
            time.sleep(0.2)
        raise AssertionError(f"{context} was not restarted")

    def token(self, role: int) -> str:
        out = subprocess.run(
            [sys.executable, "-m", "launcher.cli", "token", "--role", str(role)],
            env=self.env,
            capture_output=True,
            text=True,
            check=True,
        )
        return out.stdout.strip()

    def interrupt(self) -> str:
        self.process.send_signal(signal.SIGINT)
        stdout, _ = self.process.communicate(timeout=60)
        return stdout


@pytest.fixture
def data_dir():
    # Outside pytest's basetemp, whose permissions the Postgres user cannot traverse.
    path = Path(tempfile.mkdtemp(prefix="outrider-up-"))
    yield path / "data"
    shutil.rmtree(path, ignore_errors=True)


def test_up_serves_keeps_data_and_leaves_nothing_behind(data_dir):
    first = Platform(data_dir)
    first.start()
    try:
        first.wait_ready()
        status, body = get(f"http://127.0.0.1:{first.http_port}/admin/ai/agents", first.token(1))
        assert status == 200
        agents_first = {a["id"] for a in body["items"]}
        assert "EXCEPTION_AGENT" in agents_first, "the registry seeds its example inventory at first start"
        crashed = child(first.process.pid, "registry")
        crashed.kill()
        crashed.wait(10)
        first.wait_restarted("registry", crashed.pid)
        first.wait_ready(timeout=60)
        assert child(first.process.pid, "registry").pid != crashed.pid
    finally:
        banner = first.interrupt()
    assert first.process.returncode == 0
    assert "outrider is up" in banner and "outrider token --role 1" in banner
    link = next(word for word in banner.split() if "/console/#token=" in word)
    assert link.startswith(f"http://127.0.0.1:{first.http_port}/console/#token=")
    assert "registry exited" in banner
    # An engine is told where its NATS password is; the server's users file is the owner's alone.
    assert str(data_dir / "secrets" / "nats_engine_password") in banner
    assert stat.S_IMODE((data_dir / "nats" / "outrider-nats.conf").stat().st_mode) == 0o600
    assert leftovers(data_dir) == []

    second = Platform(data_dir)
    second.start()
    try:
        second.wait_ready()
        status, body = get(f"http://127.0.0.1:{second.http_port}/admin/ai/agents", second.token(3))
        assert status == 200
        assert {a["id"] for a in body["items"]} == agents_first
    finally:
        second.interrupt()
    assert second.process.returncode == 0
    assert leftovers(data_dir) == []
    assert (data_dir / "postgres" / "PG_VERSION").exists()
    assert (data_dir / "nats" / "jetstream").exists()
