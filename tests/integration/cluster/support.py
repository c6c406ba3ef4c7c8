"""A three-node JetStream cluster on loopback, and replicas of contexts
against it: the parts the cluster fault tests kill and bring back.

Each node is the embedded nats-server `outrider up` runs, with real cluster
routes to the other two and the suite's users and passwords, so streams
created at R3 are stored on all three and elect leaders among them.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Iterable, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path

import psutil
from grpc_health.v1 import health_pb2, health_pb2_grpc
from nats.aio.client import Client
from nats.js.api import StorageType, StreamConfig

from outrider.nats_access import ENGINE_INBOX_PREFIX, open_connection
from outrider.rpc import keyed_channel
from services.common.embedded import ClusterMember, EmbeddedNats
from services.common.runtime import ContextServer
from services.common.settings import Settings
from tests.harness import INTERNAL_KEY, JWT_SECRET, NATS_ENGINE, NATS_SERVICE, SERVICE_KEY, eventually, reserved_port

CLUSTER_NAME = "outrider-test"


class NatsCluster:
    def __init__(self, data_dir: Path, size: int = 3) -> None:
        ports = [reserved_port() for _ in range(size)]
        route_ports = [reserved_port() for _ in range(size)]
        self.nodes: dict[str, EmbeddedNats] = {}
        self.down: set[str] = set()
        for index, (port, route_port) in enumerate(zip(ports, route_ports, strict=True)):
            name = f"nats-{index}"
            member = ClusterMember(
                CLUSTER_NAME,
                name,
                route_port,
                tuple(f"nats://127.0.0.1:{peer}" for peer in route_ports if peer != route_port),
            )
            self.nodes[name] = EmbeddedNats(
                data_dir / name, port, service=NATS_SERVICE, engine=NATS_ENGINE, cluster=member
            )

    @property
    def url(self) -> str:
        """Every server, comma-separated, as NATS_URL names a cluster."""
        return ",".join(f"nats://127.0.0.1:{node.port}" for node in self.nodes.values())

    def start(self) -> None:
        for node in self.nodes.values():
            node.start()

    def stop(self) -> None:
        for node in self.nodes.values():
            node.stop()

    def kill(self, name: str) -> None:
        """Lose a server the hard way: no shutdown, no goodbye to its peers."""
        node = self.nodes[name]
        assert node.pid is not None, f"{name} is not running"
        os.kill(node.pid, signal.SIGKILL)
        node.stop()
        self.down.add(name)

    def restart(self, name: str) -> None:
        self.nodes[name].start()
        self.down.discard(name)

    async def service(self) -> Client:
        return await open_connection(
            self.url, name="cluster-test-service", user=NATS_SERVICE.name, password=NATS_SERVICE.password, timeout=15
        )

    async def engine(self) -> Client:
        return await open_connection(
            self.url,
            name="cluster-test-engine",
            user=NATS_ENGINE.name,
            password=NATS_ENGINE.password,
            inbox_prefix=ENGINE_INBOX_PREFIX,
            timeout=15,
        )

    async def wait_for_jetstream(self, *, timeout: float = 30.0) -> None:
        """Until the cluster can place a stream on every server: it has elected
        a JetStream leader and all its peers have joined."""
        client = await self.service()
        js = client.jetstream(timeout=2)
        probe = StreamConfig(
            name="CLUSTER_READY", subjects=["cluster.ready"], storage=StorageType.MEMORY, num_replicas=len(self.nodes)
        )

        async def placed() -> bool:
            try:
                await js.add_stream(probe)
            except Exception:  # noqa: BLE001 - no leader yet, or too few peers: not ready
                return False
            return True

        try:
            await eventually(placed, timeout=timeout, step=0.25, what=f"an R{len(self.nodes)} stream placed")
            await js.delete_stream(probe.name)
        finally:
            await client.close()

    async def lead(self, client: Client, stream: str, server: str) -> None:
        """Move a stream's leadership to `server`, so that one kill takes the
        leaders of several streams at once."""
        js = client.jetstream()
        request = json.dumps({"placement": {"preferred": server}}).encode()

        async def leader() -> str | None:
            current = (await js.stream_info(stream)).cluster.leader
            if current != server:
                await client.request(f"$JS.API.STREAM.LEADER.STEPDOWN.{stream}", request, timeout=2)
            return current

        await eventually(
            leader, lambda current: current == server, timeout=20, step=0.5, what=f"{stream} led by {server}"
        )


# Runs the embedded Postgres in a process of its own, taking "start" and
# "stop" on stdin. pgserver starts pg_ctl as another user, which makes
# Python fork without exec'ing at once; forked from a process with gRPC's
# threads running, that child can crash (SIGSEGV) before it runs pg_ctl.
_POSTGRES_CONTROLLER = """
import sys
from pathlib import Path
from services.common.embedded import EmbeddedPostgres
server = EmbeddedPostgres(Path(sys.argv[1]))
for line in sys.stdin:
    if line.strip() == "start":
        print(server.start(), flush=True)
    elif line.strip() == "stop":
        server.stop()
        print("stopped", flush=True)
server.stop()
"""


class SeparatePostgres:
    """An embedded Postgres this test may stop and start at will."""

    def __init__(self, data_dir: Path) -> None:
        self._process = subprocess.Popen(
            [sys.executable, "-c", _POSTGRES_CONTROLLER, str(data_dir)],
            cwd=Path(__file__).resolve().parents[3],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    async def _ask(self, command: str) -> str:
        def ask() -> str:
            assert self._process.stdin is not None and self._process.stdout is not None
            self._process.stdin.write(command + "\n")
            self._process.stdin.flush()
            return self._process.stdout.readline().strip()

        answer = await asyncio.to_thread(ask)
        assert answer, f"the Postgres controller ended instead of answering {command!r}"
        return answer

    async def start(self) -> str:
        return await self._ask("start")

    async def stop(self) -> None:
        await self._ask("stop")

    def close(self) -> None:
        if self._process.stdin is not None:
            self._process.stdin.close()
        try:
            self._process.wait(30)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()


@asynccontextmanager
async def replicas(
    settings: Settings, contexts: Iterable[str], count: int = 2
) -> AsyncIterator[dict[str, list[ContextServer]]]:
    """`count` servers of each context on ports of their own, all against one
    database and one NATS cluster, as a deployment runs them."""
    servers: dict[str, list[ContextServer]] = {}
    started: list[ContextServer] = []
    try:
        for name in contexts:
            servers[name] = []
            for _ in range(count):
                server = ContextServer(name, settings)
                started.append(server)
                await server.start("127.0.0.1:0")
                servers[name].append(server)
        yield servers
    finally:
        await asyncio.gather(*(server.stop(grace=0.5) for server in started), return_exceptions=True)


def _platform_env(template, database: str, data_dir, extra_env: dict[str, str]) -> dict[str, str]:
    return {
        **os.environ,
        "DATABASE_URL": template.database_url(database),
        "OUTRIDER_JWT_SECRET": JWT_SECRET,
        "OUTRIDER_INTERNAL_KEY": INTERNAL_KEY,
        "OUTRIDER_SERVICE_KEY": SERVICE_KEY,
        "OUTRIDER_DATA_DIR": str(data_dir),
        "OUTRIDER_LOG_LEVEL": "WARNING",
        **extra_env,
    }


@contextmanager
def _process(command: list[str], env: dict[str, str]) -> Iterator[subprocess.Popen[bytes]]:
    process = subprocess.Popen(
        [sys.executable, "-m", "launcher.cli", *command],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        yield process
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


@contextmanager
def replica(
    context: str, template, database: str, port: int, data_dir, **extra_env: str
) -> Iterator[subprocess.Popen[bytes]]:
    """`outrider serve <context>` in a process of its own, so a test can kill it."""
    env = _platform_env(
        template, database, data_dir, {f"OUTRIDER_{context.upper()}_ADDR": f"127.0.0.1:{port}", **extra_env}
    )
    with _process(["serve", context], env) as process:
        yield process


@contextmanager
def gateway_process(
    template, database: str, port: int, data_dir, **extra_env: str
) -> Iterator[subprocess.Popen[bytes]]:
    """`outrider gateway` on `port` in a process of its own, so a test can kill it."""
    env = _platform_env(
        template, database, data_dir, {"OUTRIDER_HTTP_HOST": "127.0.0.1", "OUTRIDER_HTTP_PORT": str(port), **extra_env}
    )
    with _process(["gateway"], env) as process:
        yield process


async def serving(port: int) -> None:
    channel = keyed_channel(f"127.0.0.1:{port}", INTERNAL_KEY, health_checked=False)
    stub = health_pb2_grpc.HealthStub(channel)

    async def status() -> int:
        try:
            return (await stub.Check(health_pb2.HealthCheckRequest(), timeout=1)).status
        except Exception:  # noqa: BLE001 - not listening yet
            return health_pb2.HealthCheckResponse.UNKNOWN

    try:
        await eventually(
            status,
            lambda s: s == health_pb2.HealthCheckResponse.SERVING,
            timeout=60,
            step=0.2,
            what=f"replica on {port} serving",
        )
    finally:
        await channel.close()


def connected_ports(ports: set[int]) -> set[int]:
    """Which of `ports` this process holds an established connection to."""
    return {
        conn.raddr.port
        for conn in psutil.Process().net_connections(kind="tcp")
        if conn.raddr and conn.raddr.port in ports and conn.status == psutil.CONN_ESTABLISHED
    }
