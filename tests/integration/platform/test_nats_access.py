"""NATS admits only its two credentials, and the engines' one only to publish:
runs, heartbeats and facts go in; nothing comes out, and no stream, consumer or
bucket can be made, read or removed with it. A TLS-configured server is
reached over TLS or not at all."""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import subprocess
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import nats
import pytest
from nats.aio.msg import Msg
from nats.js.api import ConsumerConfig

from outrider.client.telemetry import TelemetryPublisher
from outrider.nats_access import ENGINE_INBOX_PREFIX, CredentialRefused, open_connection
from services.common.embedded import EmbeddedNats, ServedTls, nats_server_binary, reported_port
from services.common.errors import Unavailable
from services.common.nats import HEARTBEAT_BUCKET, connect, ensure_topology, warn_if_open
from tests.harness import NATS_ENGINE, NATS_SERVICE, engine_nats, eventually, make_settings
from tests.integration.platform.nats_support import CANCELLED, LIMITS, Refusals

TASK = json.dumps(
    {
        "agent_id": "EXCEPTION_AGENT",
        "task_id": "t-1",
        "task_type": "stall_check",
        "status": "succeeded",
        "started_at": "2026-09-29T10:00:00+00:00",
        "finished_at": "2026-09-29T10:00:01+00:00",
    }
).encode()


def _protocol_exchange(port: int, lines: bytes) -> bytes:
    """Speak NATS by hand: everything the server answers a client that sends
    `lines`, until it hangs up or falls silent."""
    with socket.create_connection(("127.0.0.1", port), timeout=3) as conn:
        conn.recv(4096)  # INFO
        conn.sendall(lines)
        answer = b""
        try:
            while chunk := conn.recv(4096):
                answer += chunk
        except TimeoutError:
            pass
        return answer


async def test_a_publish_without_credentials_is_refused_and_stores_nothing(stack, topology):
    _, js = topology
    port = int(stack.nats_url.rsplit(":", 1)[1])
    answer = await asyncio.to_thread(
        _protocol_exchange,
        port,
        (
            b'CONNECT {"verbose":false,"pedantic":false}\r\n'
            b"PUB facts.booking " + str(len(CANCELLED)).encode() + b"\r\n" + CANCELLED + b"\r\nPING\r\n"
        ),
    )
    assert b"-ERR 'Authorization Violation'" in answer and b"PONG" not in answer
    assert (await js.stream_info("FACTS")).state.messages == 0

    with pytest.raises(Exception, match="Authorization Violation"):
        await nats.connect(stack.nats_url, allow_reconnect=False, connect_timeout=2)
    started = time.monotonic()
    with pytest.raises(CredentialRefused):
        await open_connection(stack.nats_url, name="probe", user=NATS_ENGINE.name, password="wrong" * 8, timeout=30)
    # Refused at once, not after the timeout: retrying a wrong password cannot help.
    assert time.monotonic() - started < 10


async def test_a_refused_service_credential_names_the_settings(stack):
    with pytest.raises(Unavailable) as refused:
        await connect(stack.nats_url, name="probe", user=NATS_SERVICE.name, password="x" * 40, timeout=30)
    assert refused.value.code == "NATS_CREDENTIALS_REFUSED"
    assert "OUTRIDER_NATS_PASSWORD" in str(refused.value) and "x" * 40 not in str(refused.value)


async def test_the_engine_credential_publishes_runs_heartbeats_and_facts(stack, topology):
    service, js = topology
    beats: asyncio.Queue[Msg] = asyncio.Queue()
    await service.subscribe("telemetry.agent", cb=beats.put)
    await service.flush()
    engine = await engine_nats(stack.nats_url)
    try:
        engine_js = engine.jetstream(timeout=5)
        run = await engine_js.publish("telemetry.task", TASK, headers={"Nats-Msg-Id": "EXCEPTION_AGENT:t-1"})
        fact = await engine_js.publish("facts.booking", CANCELLED)
        await engine.publish("telemetry.agent", b'{"agent_id": "EXCEPTION_AGENT", "state": "idle"}')
        await engine.flush()
        beat = await asyncio.wait_for(beats.get(), 5)
    finally:
        await engine.close()
    assert (run.stream, fact.stream) == ("TELEMETRY", "FACTS")
    assert (await js.stream_info("TELEMETRY")).state.messages == 1
    assert (await js.stream_info("FACTS")).state.messages == 1
    assert json.loads(beat.data)["agent_id"] == "EXCEPTION_AGENT"


async def test_the_sdk_publishes_with_the_engine_credential(stack, topology):
    _, js = topology
    publisher = await TelemetryPublisher.connect(
        stack.nats_url, user=NATS_ENGINE.name, password=NATS_ENGINE.password, timeout_s=10
    )
    try:
        started = datetime.now(UTC)
        await publisher.task_run(
            agent_id="EXCEPTION_AGENT",
            task_id="t-9",
            task_type="stall_check",
            status="succeeded",
            started_at=started,
            finished_at=started + timedelta(seconds=1),
        )
    finally:
        await publisher.close()
    assert (await js.stream_info("TELEMETRY")).state.messages == 1


@pytest.mark.parametrize(
    "subject", ["telemetry.task", "facts.>", "facts.booking", "telemetry.agent", "_INBOX.>", "$JS.>", "$KV.>", ">"]
)
async def test_the_engine_credential_cannot_listen(stack, topology, subject):
    service, _ = topology
    refusals = Refusals()
    engine = await engine_nats(stack.nats_url, error_cb=refusals.note)
    try:
        heard: asyncio.Queue[Msg] = asyncio.Queue()
        # A sentinel inbox the engine may read, subscribed first: the server
        # takes one connection's commands in order, so once it has refused the
        # probe's subscription it holds the sentinel's. (A flush proves less:
        # nats-py writes its PING ahead of commands still waiting to go out.)
        sentinel = f"{ENGINE_INBOX_PREFIX}.sentinel"
        await engine.subscribe(sentinel, cb=heard.put)
        await engine.subscribe(subject, cb=heard.put)
        await engine.flush()

        async def refused() -> bool:
            return refusals.mention(subject)

        await eventually(refused, what=f"the subscription to {subject} refused")
        # The probe, then the sentinel, from one connection: delivered in that
        # order, so a probe that got through arrives first.
        concrete = subject.replace(">", "x").replace("*", "x")
        await service.publish(concrete, b"{}")
        await service.publish(sentinel, b"{}")
        await service.flush()
        first = await asyncio.wait_for(heard.get(), 5)
        assert first.subject == sentinel, f"the engine credential heard {first.subject}"
    finally:
        await engine.close()


async def test_the_engine_credential_cannot_administer_or_consume_streams(stack, topology):
    _, js = topology
    refusals = Refusals()
    engine = await engine_nats(stack.nats_url, error_cb=refusals.note)
    try:
        engine_js = engine.jetstream(timeout=1)
        attempts = {
            "delete a stream": lambda: engine_js.delete_stream("FACTS"),
            "purge a stream": lambda: engine_js.purge_stream("TELEMETRY"),
            "list streams": engine_js.streams_info,
            "create a consumer": lambda: engine_js.add_consumer("FACTS", ConsumerConfig(durable_name="thief")),
            "pull from a stream": lambda: engine_js.pull_subscribe("facts.>", durable="thief"),
            "read the heartbeat bucket": lambda: engine_js.key_value(HEARTBEAT_BUCKET),
            # Spans go through the gateway, which checks them and strips contents.
            "publish spans past the gateway": lambda: engine_js.publish("telemetry.otlp", b"{}"),
        }
        for what, attempt in attempts.items():
            try:
                await attempt()
            except nats.errors.Error:
                # The server drops a refused request, so no answer ever comes.
                continue
            raise AssertionError(f"the engine credential could {what}")
        # A permitted publish whose reply subject is the JetStream API does not
        # reach it: the acknowledgement goes there, not an API request.
        await engine.publish("facts.booking", CANCELLED, reply="$JS.API.STREAM.DELETE.TELEMETRY")
        # The stream acknowledges its messages in order, and the API handles
        # what it is sent as it arrives: once the next publish is acknowledged,
        # whatever the first acknowledgement would have done is done. The
        # server's refusals came on this connection before it, too.
        await engine_js.publish("facts.booking", CANCELLED)
    finally:
        await engine.close()
    assert (await js.stream_info("FACTS")).state.messages == 2
    assert refusals.mention("$js.api.stream.delete.facts") and refusals.mention("$js.api.consumer")
    assert refusals.mention("telemetry.otlp")
    assert sorted(info.config.name for info in await js.streams_info()) == sorted(
        ["FACTS", "TELEMETRY", f"KV_{HEARTBEAT_BUCKET}"]
    )
    assert await js.consumers_info("FACTS") == []


async def test_a_server_that_admits_anyone_is_reported(tmp_path, stack, caplog):
    open_server = await asyncio.create_subprocess_exec(
        *(nats_server_binary(), "-a", "127.0.0.1", "-p", "-1", "--ports_file_dir", str(tmp_path)),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        port = await eventually(
            lambda: asyncio.to_thread(reported_port, tmp_path, open_server.pid), what="a bare nats-server's port"
        )
        await eventually(lambda: asyncio.to_thread(_listening, port), what="a bare nats-server listening")
        guarded = make_settings(stack, "unused", OUTRIDER_ENV="production")
        exposed = make_settings(stack, "unused", OUTRIDER_ENV="production", NATS_URL=f"nats://127.0.0.1:{port}")
        with caplog.at_level(logging.ERROR, logger="services.common.nats"):
            assert await warn_if_open(guarded) is False
            assert await warn_if_open(exposed) is True
        warnings = [r.getMessage() for r in caplog.records if r.name == "services.common.nats"]
        assert len(warnings) == 1 and "without credentials" in warnings[0]
    finally:
        open_server.terminate()
        await asyncio.wait_for(open_server.wait(), 10)


def _listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


# ─── TLS ───────────────────────────────────────────────────────────────────


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def make_ca_and_server_cert(directory: Path) -> tuple[Path, ServedTls]:
    """A throwaway CA and a certificate for 127.0.0.1 it signed."""
    ec = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes")
    _openssl(
        "req",
        "-x509",
        *ec,
        "-keyout",
        "ca.key",
        "-out",
        "ca.pem",
        "-days",
        "2",
        "-subj",
        "/CN=Outrider test CA",
        "-addext",
        "basicConstraints=critical,CA:TRUE",
        "-addext",
        "keyUsage=critical,keyCertSign,cRLSign",
        cwd=directory,
    )
    _openssl("req", *ec, "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=127.0.0.1", cwd=directory)
    (directory / "server.ext").write_text(
        "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n"
        "basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\n"
        "subjectKeyIdentifier=hash\nauthorityKeyIdentifier=keyid\n"
    )
    _openssl(
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        "server.pem",
        "-days",
        "2",
        "-extfile",
        "server.ext",
        cwd=directory,
    )
    return directory / "ca.pem", ServedTls(directory / "server.pem", directory / "server.key")


@pytest.fixture
def tls_server(tmp_path):
    ca, served = make_ca_and_server_cert(tmp_path)
    server = EmbeddedNats(tmp_path / "data", None, service=NATS_SERVICE, engine=NATS_ENGINE, tls=served)
    url = server.start()
    try:
        yield url, ca
    finally:
        server.stop()


async def test_a_tls_configured_engine_client_talks_to_a_tls_server(tls_server):
    url, ca = tls_server
    assert url.startswith("tls://")
    service = await connect(url, name="probe", user=NATS_SERVICE.name, password=NATS_SERVICE.password, tls_ca=ca)
    try:
        js = service.jetstream()
        await ensure_topology(js, LIMITS)
        publisher = await TelemetryPublisher.connect(
            url, user=NATS_ENGINE.name, password=NATS_ENGINE.password, tls_ca=ca, timeout_s=10
        )
        try:
            started = datetime.now(UTC)
            await publisher.task_run(
                agent_id="EXCEPTION_AGENT",
                task_id="t-1",
                task_type="stall_check",
                status="succeeded",
                started_at=started,
                finished_at=started,
            )
        finally:
            await publisher.close()
        assert (await js.stream_info("TELEMETRY")).state.messages == 1
    finally:
        await service.close()


async def test_a_tls_server_talks_to_no_client_that_cannot_verify_it_or_speaks_in_clear(tls_server):
    url, _ = tls_server
    # Without the CA the server's certificate is unknown: no connection, and no password sent.
    with pytest.raises(TimeoutError, match=r"CERTIFICATE_VERIFY_FAILED|certificate verify failed"):
        await open_connection(url, name="probe", user=NATS_ENGINE.name, password=NATS_ENGINE.password, timeout=4)
    # A client that waits for a greeting in clear gets none: the server speaks TLS first.
    plain = url.replace("tls://", "nats://")
    with pytest.raises(Exception):  # noqa: B017, PT011 - whichever way the client gives up, it is not connected
        await nats.connect(
            plain, user=NATS_ENGINE.name, password=NATS_ENGINE.password, allow_reconnect=False, connect_timeout=2
        )
