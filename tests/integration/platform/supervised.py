"""`outrider up` driven as an operator runs it: a real process on a data dir
of its own, and what it left behind read from /proc."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import psutil

from launcher.supervisor import SUPERVISED_MARK
from services.common.settings import CONTEXTS, Settings, load
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


def _belongs(proc: psutil.Process, data_dir: Path) -> bool:
    """Whether a live process is of a run on `data_dir`: the data dir on its
    command line (nats-server, the postmaster), its working directory inside
    it (the postmaster's backends), or in its environment (the contexts and
    the gateway)."""
    where = str(data_dir.resolve())
    try:
        if proc.status() == psutil.STATUS_ZOMBIE:
            return False
        if where in " ".join(proc.cmdline()) or proc.cwd().startswith(where):
            return True
        environ = proc.environ()
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return False
    return where in (environ.get(SUPERVISED_MARK), environ.get("OUTRIDER_DATA_DIR"))


def leftovers(data_dir: Path, ports: tuple[int, ...] = ()) -> list[str]:
    """Every process still running for `data_dir`, and every one listening
    on one of `ports`."""
    found = [
        f"{proc.pid} {proc.info['name']}: {' '.join(proc.info['cmdline'] or [])[:120]}"
        for proc in psutil.process_iter(["name", "cmdline"])
        if proc.pid != os.getpid() and _belongs(proc, data_dir)
    ]
    found += [
        f"{held.pid} listens on {held.laddr.port}"
        for held in psutil.net_connections("tcp")
        if held.status == psutil.CONN_LISTEN and held.laddr.port in ports
    ]
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
        self.grpc_port = reserved_ports(len(CONTEXTS))
        self.nats_port = reserved_port()
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(("OUTRIDER_", "DATABASE_URL", "NATS_URL"))}
        self.env.update(
            {
                "OUTRIDER_DATA_DIR": str(data_dir),
                "OUTRIDER_HTTP_PORT": str(self.http_port),
                "OUTRIDER_GRPC_PORT": str(self.grpc_port),
                "OUTRIDER_NATS_PORT": str(self.nats_port),
            }
        )
        self.process: subprocess.Popen | None = None

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.http_port}"

    @property
    def ports(self) -> tuple[int, ...]:
        return (self.http_port, *range(self.grpc_port, self.grpc_port + len(CONTEXTS)), self.nats_port)

    def settings(self) -> Settings:
        """What an engine on this machine reads: the data dir's secrets included."""
        return load(self.env)

    def start(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "launcher.cli", "up"],
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )

    def attempt(self) -> subprocess.CompletedProcess[str]:
        """A start expected to be refused: its exit status and what it said."""
        return subprocess.run(
            [sys.executable, "-m", "launcher.cli", "up"],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    def wait_ready(self, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.process.poll() is None, "outrider up exited early"
            status, _ = get(f"{self.base}/readyz")
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

    def descendants(self) -> list[psutil.Process]:
        return psutil.Process(self.process.pid).children(recursive=True)

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
