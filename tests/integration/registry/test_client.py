"""The engine client against a real registry: it follows changes, rides out outages
with its last good snapshot, and starts from disk when the registry is down."""

from __future__ import annotations

import json

from outrider.client import RegistryClient, RegistryDefaults
from services.common.runtime import ContextServer
from tests.harness import INTERNAL_KEY, bearer, gateway_client, running
from tests.integration.registry.helpers import registry_db

WRITER = bearer(role=1)


def make_client(settings, tmp_path, **options) -> RegistryClient:
    return RegistryClient(
        settings.addr("registry"),
        INTERNAL_KEY,
        cache_path=tmp_path / "engine" / "registry.json",
        retry_min_s=0.05,
        retry_max_s=0.2,
        call_timeout_s=1.0,
        **options,
    )


async def test_the_client_follows_the_registry_and_keeps_a_disk_copy(settings, tmp_path):
    async with running(settings, ["registry"]), gateway_client(settings) as api:
        async with make_client(settings, tmp_path) as client:
            first = await client.wait_for_snapshot(timeout=5.0)
            assert first is not None and client.source == "registry"
            assert client.skill_enabled("stall_response") is True
            assert client.threshold("stall_response", "stallMinutes") == 10
            assert client.autonomous("EXCEPTION_AGENT") is False
            assert client.model("DISPATCH_AGENT") is None
            assert client.requires_confirmation("EXCEPTION_AGENT", "reassign_booking") is True
            await api.patch(
                "/admin/ai/skills/stall_response", json={"thresholds": {"stallMinutes": 25}}, headers=WRITER
            )
            await api.patch(
                "/admin/ai/agents/EXCEPTION_AGENT",
                json={"autonomous": True, "confirm": "EXCEPTION_AGENT", "model": "claude-opus-4-8"},
                headers=WRITER,
            )
            latest = first
            while latest is not None and latest.agents["EXCEPTION_AGENT"].model is None:
                latest = await client.wait_for_change(latest.etag, timeout=1.0)
            assert latest is not None
            assert client.threshold("stall_response", "stallMinutes") == 25
            assert client.autonomous("EXCEPTION_AGENT") is True
            assert client.model("EXCEPTION_AGENT") == "claude-opus-4-8"
            assert client.requires_confirmation("EXCEPTION_AGENT", "reassign_booking") is False
            assert client.requires_confirmation("CUSTOMER_AGENT", "notify_customer") is True
    saved = json.loads((tmp_path / "engine" / "registry.json").read_text())
    assert saved["etag"] == latest.etag
    assert json.loads(saved["document"])["skills"]["stall_response"]["thresholds"]["stallMinutes"] == 25
    assert list((tmp_path / "engine").iterdir()) == [tmp_path / "engine" / "registry.json"]  # no temp files left


async def test_the_client_keeps_its_snapshot_through_an_outage_and_catches_up(settings, template, database, tmp_path):
    servers = running(settings, ["registry"])
    started = await servers.__aenter__()
    try:
        async with make_client(settings, tmp_path) as client:
            before = await client.wait_for_snapshot(timeout=5.0)
            assert before is not None
            await started["registry"].stop(grace=0.1)
            # Changed while the registry is down: the client cannot know yet.
            async with registry_db(template, database) as conn:
                await conn.execute(
                    "update skills set enabled = false, version = version + 1 where id = 'assignment_failure_triage'"
                )
            assert await client.wait_for_change(before.etag, timeout=0.5) is None
            assert client.snapshot is before
            assert client.skill_enabled("assignment_failure_triage") is True
            assert client.connected is False
            back = ContextServer("registry", settings)
            await back.start()
            try:
                after = await client.wait_for_change(before.etag, timeout=5.0)
            finally:
                await back.stop(grace=0.1)
    finally:
        await servers.__aexit__(None, None, None)
    assert after is not None
    assert client.skill_enabled("assignment_failure_triage") is False


async def test_an_engine_restarting_during_an_outage_starts_from_its_disk_copy(settings, tmp_path):
    async with running(settings, ["registry"]), gateway_client(settings) as api:
        await api.patch("/admin/ai/skills/doorstep_stall", json={"enabled": False}, headers=WRITER)
        async with make_client(settings, tmp_path) as client:
            snapshot = await client.wait_for_snapshot(timeout=5.0)
            while snapshot is not None and snapshot.skills["doorstep_stall"].enabled:
                snapshot = await client.wait_for_change(snapshot.etag, timeout=2.0)
    # The registry is gone now; a new engine process starts.
    defaults = RegistryDefaults(skills_enabled={"doorstep_stall": True}, autonomy={"EXCEPTION_AGENT": True})
    async with make_client(settings, tmp_path, defaults=defaults) as restarted:
        assert restarted.source == "disk"
        assert restarted.snapshot is not None and restarted.snapshot.etag == snapshot.etag
        assert restarted.skill_enabled("doorstep_stall") is False
        assert restarted.autonomous("EXCEPTION_AGENT") is False  # the defaults no longer apply
        assert restarted.threshold("stall_response", "stallMinutes") == 10


async def test_defaults_apply_only_until_the_first_snapshot(settings, tmp_path):
    defaults = RegistryDefaults(
        skills_enabled={"dispatch_rebalance": True},
        thresholds={"stall_response": {"stallMinutes": 7}},
        autonomy={"EXCEPTION_AGENT": True},
        models={"DISPATCH_AGENT": "claude-from-env"},
    )
    async with make_client(settings, tmp_path, defaults=defaults) as client:
        assert client.source == "defaults" and client.snapshot is None
        assert client.skill_enabled("dispatch_rebalance") is True
        assert client.threshold("stall_response", "stallMinutes") == 7
        assert client.autonomous("EXCEPTION_AGENT") is True
        assert client.model("DISPATCH_AGENT") == "claude-from-env"
        async with running(settings, ["registry"]):
            assert await client.wait_for_snapshot(timeout=5.0) is not None
            assert client.source == "registry"
            assert client.skill_enabled("dispatch_rebalance") is False
            assert client.threshold("stall_response", "stallMinutes") == 10
            assert client.autonomous("EXCEPTION_AGENT") is False
            assert client.model("DISPATCH_AGENT") is None
