"""One of two gateways killed under load: a client that sends a failed
request again through the other gateway, as an engine's HTTP client does,
loses nothing and doubles nothing, and a registry change made meanwhile is
one snapshot, with one ETag, from every gateway and every registry replica.

Both gateways are `outrider gateway` processes in front of two replicas each
of the registry and outcomes; the killed one gets SIGKILL, so requests in
flight on it lose their connection with no answer.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
from collections import Counter

import asyncpg
import httpx
import pytest

from outrider.rpc import keyed_channel
from outrider.v1 import registry_pb2, registry_pb2_grpc
from tests.harness import (
    INTERNAL_KEY,
    NATS_ENGINE,
    NATS_SERVICE,
    bearer,
    eventually,
    internal_headers,
    make_settings,
    reserved_port,
    reset_nats,
)
from tests.integration.cluster.support import gateway_process, replicas

pytestmark = pytest.mark.cluster

WORKERS = 4
BEFORE_KILL_S = 2.0
AFTER_KILL_S = 3.0
SKILL = "/admin/ai/skills/stall_response"


class EitherGateway:
    """An engine's HTTP client given two gateways: each request goes to the
    next one in turn and, when the connection fails with no answer, is sent
    again through the other. Only requests that are safe to repeat are sent
    through it: a write whose answer was lost may have been done."""

    def __init__(self, client: httpx.AsyncClient, urls: list[str]) -> None:
        self._client = client
        self._urls = urls
        self._turn = 0
        # Requests sent again, by how the first gateway failed: refused (the
        # request never left) or lost mid-request (it may have been done).
        self.resent: Counter[str] = Counter()

    async def request(self, method: str, path: str, **kwargs) -> httpx.Response:
        self._turn += 1
        first = self._turn % len(self._urls)
        for attempt, url in enumerate(self._urls[first:] + self._urls[:first]):
            try:
                return await self._client.request(method, url + path, **kwargs)
            except httpx.TransportError as error:
                if attempt == len(self._urls) - 1:
                    raise
                self.resent["refused" if isinstance(error, httpx.ConnectError) else "lost_mid_request"] += 1
        raise AssertionError("unreachable: the last attempt returns or raises")


async def gateway_ready(url: str) -> None:
    async with httpx.AsyncClient(timeout=1.0) as client:

        async def healthy() -> bool:
            try:
                return (await client.get(url + "/healthz")).status_code == 200
            except httpx.TransportError:
                return False

        await eventually(healthy, timeout=60, step=0.2, what=f"gateway {url} answering")


async def replica_etag(port: int) -> str:
    channel = keyed_channel(f"127.0.0.1:{port}", INTERNAL_KEY, health_checked=False)
    try:
        reply = await registry_pb2_grpc.RegistryStub(channel).GetSnapshot(registry_pb2.GetSnapshotRequest(), timeout=5)
    finally:
        await channel.close()
    return reply.snapshot.etag


async def test_a_client_resending_through_the_other_gateway_loses_nothing(template, database, tmp_path):
    await reset_nats(template.nats_url)
    settings = make_settings(template, database)
    gateway_ports = [reserved_port(), reserved_port()]
    urls = [f"http://127.0.0.1:{port}" for port in gateway_ports]
    calls: Counter[str] = Counter()
    failures: list[str] = []
    recorded: list[str] = []
    async with replicas(settings, ["registry", "outcomes"]) as servers:
        addresses = {
            f"OUTRIDER_{name.upper()}_ADDR": ",".join(f"127.0.0.1:{server.port}" for server in started)
            for name, started in servers.items()
        }
        env = {
            **addresses,
            "NATS_URL": template.nats_url,
            "OUTRIDER_NATS_PASSWORD": NATS_SERVICE.password,
            "OUTRIDER_NATS_ENGINE_PASSWORD": NATS_ENGINE.password,
        }
        registry_ports = [server.port for server in servers["registry"]]
        with (
            gateway_process(template, database, gateway_ports[0], tmp_path, **env) as victim,
            gateway_process(template, database, gateway_ports[1], tmp_path, **env),
        ):
            for url in urls:
                await gateway_ready(url)
            async with httpx.AsyncClient(timeout=10.0) as http:
                engine = EitherGateway(http, urls)
                first = await engine.request("GET", "/internal/ai/registry", headers=internal_headers())
                assert first.status_code == 200, first.text
                stop = asyncio.Event()

                async def record(worker: int) -> None:
                    n = 0
                    while not stop.is_set():
                        subject = f"BK-{worker}-{n}"
                        for event in (
                            {"status": "created", "at": "2026-09-29T10:00:00Z", "sla_due_at": "2026-09-29T14:00:00Z"},
                            {"status": "assigned", "at": "2026-09-29T10:05:00Z"},
                        ):
                            # Facts merge: a fact sent twice is stored once.
                            reply = await engine.request(
                                "POST",
                                "/internal/facts",
                                headers=internal_headers(),
                                content=json.dumps({"subject_id": subject, **event}).encode(),
                            )
                            calls["facts"] += 1
                            if reply.status_code != 200:
                                failures.append(f"facts {reply.status_code} {reply.text[:120]}")
                        recorded.append(subject)
                        n += 1

                async def poll() -> None:
                    while not stop.is_set():
                        reply = await engine.request("GET", "/internal/ai/registry", headers=internal_headers())
                        calls["snapshot"] += 1
                        if reply.status_code != 200:
                            failures.append(f"snapshot {reply.status_code} {reply.text[:120]}")

                load = [
                    *(asyncio.create_task(record(w)) for w in range(WORKERS)),
                    *(asyncio.create_task(poll()) for _ in range(WORKERS)),
                ]
                await asyncio.sleep(BEFORE_KILL_S)
                os.kill(victim.pid, signal.SIGKILL)
                # A registry change while one gateway is gone: setting a
                # threshold is the same change however often it is sent.
                change = await engine.request(
                    "PATCH", SKILL, json={"thresholds": {"stallMinutes": 27}}, headers=bearer()
                )
                calls["registry_write"] += 1
                await asyncio.sleep(AFTER_KILL_S)
                stop.set()
                await asyncio.gather(*load)
                resent = engine.resent

            # The lost gateway comes back: it must serve the snapshot the
            # survivor and both registry replicas hold.
            victim.wait()
            with gateway_process(template, database, gateway_ports[0], tmp_path, **env):
                await gateway_ready(urls[0])
                async with httpx.AsyncClient(timeout=10.0) as http:

                    async def gateway_etags() -> list[str]:
                        return [
                            (await http.get(url + "/internal/ai/registry", headers=internal_headers()))
                            .headers["etag"]
                            .strip('"')
                            for url in urls
                        ]

                    etags = await eventually(
                        gateway_etags,
                        lambda seen: len(set(seen)) == 1,
                        timeout=10,
                        what="both gateways serving one snapshot",
                    )
                    document = (await http.get(urls[0] + "/internal/ai/registry", headers=internal_headers())).json()
        replica_etags = [await replica_etag(port) for port in registry_ports]

    db = await asyncpg.connect(template.raw_dsn(database))
    try:
        stored = await db.fetch(
            "select subject_id, facts from outcomes.subject_facts where subject_id = any($1::text[])", recorded
        )
    finally:
        await db.close()
    complete = [
        row["subject_id"]
        for row in stored
        if json.loads(row["facts"])["status"]["value"] == "assigned" and "sla_due_at" in json.loads(row["facts"])
    ]
    figures = {
        "calls": dict(calls),
        "resent_through_other_gateway": dict(resent),
        "failed_to_caller": len(failures),
        "bookings": len(recorded),
        "landed": len(complete),
        "duplicated": len(stored) - len({row["subject_id"] for row in stored}),
        "distinct_etags": len({*etags, *replica_etags}),
    }
    print("gateway loss figures:", json.dumps(figures))
    assert failures == [], failures[:5]
    assert sum(resent.values()) > 0, "the kill was felt by the client"
    assert change.status_code == 200, change.text
    assert sorted(complete) == sorted(recorded), figures
    assert figures["duplicated"] == 0, figures
    assert etags == replica_etags and len(set(etags)) == 1, figures
    assert etags[0] != first.headers["etag"].strip('"'), "the change made during the kill is in the snapshot"
    assert document["skills"]["stall_response"]["thresholds"]["stallMinutes"] == 27
