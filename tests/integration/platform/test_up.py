"""`outrider up` from an empty data dir: ready, serving, data kept across a
restart, and nothing left running after Ctrl-C."""

from __future__ import annotations

import shutil
import stat
import tempfile
from pathlib import Path

import pytest

from tests.integration.platform.supervised import Platform, child, get, leftovers


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
    assert leftovers(data_dir, first.ports) == []

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
    assert leftovers(data_dir, second.ports) == []
    assert (data_dir / "postgres" / "PG_VERSION").exists()
    assert (data_dir / "nats" / "jetstream").exists()
