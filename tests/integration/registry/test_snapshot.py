"""The live snapshot: ETag and 304, not-modified over gRPC, and pushes to watchers on every replica."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx

from gateway.app import create_app
from outrider.v1 import registry_pb2
from services.common.runtime import ContextServer
from tests.harness import bearer, eventually, internal_headers, person, running
from tests.integration.registry.helpers import registry_db, registry_stub

WRITER = bearer(role=1)
OPERATOR = person(sub="u-9", email="ops@example.com")


@asynccontextmanager
async def gateway(settings) -> AsyncIterator[tuple[httpx.AsyncClient, object]]:
    """The real gateway app, with its state in reach so a test can see the feed."""
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://gateway") as client:
            yield client, app


async def test_grpc_get_snapshot_answers_not_modified_for_the_current_etag(settings):
    async with running(settings, ["registry"]), registry_stub(settings, who=OPERATOR) as registry:
        full = await registry.GetSnapshot(registry_pb2.GetSnapshotRequest())
        again = await registry.GetSnapshot(registry_pb2.GetSnapshotRequest(if_none_match=full.snapshot.etag))
        stale = await registry.GetSnapshot(registry_pb2.GetSnapshotRequest(if_none_match="0" * 32))
    assert not full.not_modified and full.snapshot.etag
    document = json.loads(full.snapshot.document)
    assert set(document) == {"format", "agents", "skills", "tools"}
    assert document["skills"]["stall_response"]["thresholds"] == {"reassignConfidence": 0.7, "stallMinutes": 10}
    assert document["agents"]["EXCEPTION_AGENT"]["autonomous"] is False
    assert document["tools"]["reassign_booking"]["requires_confirmation"] is True
    assert again.not_modified and not again.HasField("snapshot")
    assert stale.snapshot.etag == full.snapshot.etag


async def test_rest_snapshot_has_an_etag_and_answers_304_until_a_change(settings):
    async with running(settings, ["registry"]), gateway(settings) as (client, app):
        first = await client.get("/internal/ai/registry", headers=internal_headers())
        etag = first.headers["etag"]
        unchanged = await client.get("/internal/ai/registry", headers={**internal_headers(), "If-None-Match": etag})
        listed = await client.get(
            "/internal/ai/registry", headers={**internal_headers(), "If-None-Match": f'"other", W/{etag}'}
        )
        noop = await client.patch("/admin/ai/skills/stall_response", json={"enabled": True}, headers=WRITER)
        after_noop = await client.get("/internal/ai/registry", headers={**internal_headers(), "If-None-Match": etag})
        change = await client.patch("/admin/ai/skills/stall_response", json={"enabled": False}, headers=WRITER)
        feed = app.state.registry_feed
        assert await eventually(lambda: _changed(feed, etag), timeout=5.0)
        changed = await client.get("/internal/ai/registry", headers={**internal_headers(), "If-None-Match": etag})
    assert first.status_code == 200
    assert first.headers["content-type"] == "application/json"
    assert etag.startswith('"') and etag.endswith('"')
    assert json.loads(first.content)["skills"]["stall_response"]["enabled"] is True
    assert unchanged.status_code == 304 and unchanged.content == b""
    assert unchanged.headers["etag"] == etag
    assert listed.status_code == 304
    assert noop.status_code == 200 and after_noop.status_code == 304  # no change, no new etag
    assert change.status_code == 200
    assert changed.status_code == 200 and changed.headers["etag"] != etag
    assert json.loads(changed.content)["skills"]["stall_response"]["enabled"] is False


async def _changed(feed, etag: str) -> bool:
    return feed.snapshot is not None and f'"{feed.snapshot.etag}"' != etag


async def test_the_gateway_copy_is_pushed_and_survives_a_registry_outage(settings):
    servers_cm = running(settings, ["registry"])
    servers = await servers_cm.__aenter__()
    try:
        async with gateway(settings) as (client, app):
            first = await client.get("/internal/ai/registry", headers=internal_headers())
            feed = app.state.registry_feed

            async def live() -> bool:
                return feed.live

            assert await eventually(live, timeout=2.0)
            async with registry_stub(settings, who=OPERATOR) as registry:
                await registry.UpdateAgent(registry_pb2.UpdateAgentRequest(id="DISPATCH_AGENT", model="claude-x"))
            # Pushed by the watch: no poll asked for it.
            assert await eventually(lambda: _changed(feed, first.headers["etag"]), timeout=1.0)
            await servers["registry"].stop(grace=0.1)
            held = await client.get("/internal/ai/registry", headers=internal_headers())
            cached = await client.get(
                "/internal/ai/registry", headers={**internal_headers(), "If-None-Match": held.headers["etag"]}
            )
    finally:
        await servers_cm.__aexit__(None, None, None)
    assert held.status_code == 200
    assert json.loads(held.content)["agents"]["DISPATCH_AGENT"]["model"] == "claude-x"
    assert cached.status_code == 304


async def test_a_watcher_on_another_replica_sees_a_change_within_a_second(settings):
    async with running(settings, ["registry"]):
        other = ContextServer("registry", settings)
        port = await other.start(address="127.0.0.1:0")
        try:
            async with (
                registry_stub(settings, who=OPERATOR, address=f"127.0.0.1:{port}") as replica_b,
                registry_stub(settings, who=OPERATOR) as replica_a,
            ):
                current = await replica_b.GetSnapshot(registry_pb2.GetSnapshotRequest())
                etag = current.snapshot.etag
                watch_b = replica_b.WatchSnapshot(registry_pb2.WatchSnapshotRequest(if_none_match=etag))
                watch_a = replica_a.WatchSnapshot(registry_pb2.WatchSnapshotRequest(if_none_match=etag))
                await watch_b.initial_metadata()
                await watch_a.initial_metadata()
                await replica_a.UpdateSkill(registry_pb2.UpdateSkillRequest(id="doorstep_stall", enabled=False))
                async with asyncio.timeout(1.0):
                    pushed_b = await watch_b.read()
                    pushed_a = await watch_a.read()
                watch_a.cancel()
                watch_b.cancel()
        finally:
            await other.stop(grace=0.1)
    assert pushed_b.etag != etag
    assert pushed_b.etag == pushed_a.etag  # same content, same name on every replica
    assert json.loads(pushed_b.document)["skills"]["doorstep_stall"]["enabled"] is False


async def test_a_watch_with_a_current_etag_stays_quiet_until_a_change(settings):
    async with running(settings, ["registry"]), registry_stub(settings, who=OPERATOR) as registry:
        etag = (await registry.GetSnapshot(registry_pb2.GetSnapshotRequest())).snapshot.etag
        fresh = registry.WatchSnapshot(registry_pb2.WatchSnapshotRequest())
        first = await asyncio.wait_for(fresh.read(), 1.0)
        quiet = registry.WatchSnapshot(registry_pb2.WatchSnapshotRequest(if_none_match=etag))
        pending = asyncio.ensure_future(quiet.read())
        done, _ = await asyncio.wait({pending}, timeout=0.3)
        assert not done
        await registry.UpdateAgent(
            registry_pb2.UpdateAgentRequest(
                id="EXPRESS_DISPATCH_AGENT", autonomous=True, confirm="EXPRESS_DISPATCH_AGENT"
            )
        )
        pushed = await asyncio.wait_for(pending, 1.0)
        fresh.cancel()
        quiet.cancel()
    assert first.etag == etag
    assert pushed.etag != etag
    assert json.loads(pushed.document)["agents"]["EXPRESS_DISPATCH_AGENT"]["autonomous"] is True


LISTENERS = (
    "select count(*) from pg_stat_activity"
    " where application_name = 'outrider-registry-listen' and datname = current_database()"
)


async def test_a_replica_whose_listener_was_cut_catches_up_when_it_reconnects(settings, template, database):
    async with running(settings, ["registry"]), registry_stub(settings, who=OPERATOR) as registry:
        etag = (await registry.GetSnapshot(registry_pb2.GetSnapshotRequest())).snapshot.etag
        watch = registry.WatchSnapshot(registry_pb2.WatchSnapshotRequest(if_none_match=etag))
        await watch.initial_metadata()
        async with registry_db(template, database) as conn:

            async def listening() -> bool:
                return await conn.fetchval(LISTENERS) == 1

            assert await eventually(listening, timeout=5.0)
            # Committed behind the registry's back, without a notification:
            # only a rebuild after reconnecting can find it.
            await conn.execute("update agents set model = 'claude-opus-4-8' where id = 'EXCEPTION_AGENT'")
            cut = await conn.fetchval(LISTENERS.replace("count(*)", "count(pg_terminate_backend(pid))"))
        pushed = await asyncio.wait_for(watch.read(), 5.0)
        watch.cancel()
    assert cut == 1
    assert json.loads(pushed.document)["agents"]["EXCEPTION_AGENT"]["model"] == "claude-opus-4-8"
