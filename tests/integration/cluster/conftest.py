"""The cluster tests' NATS: three servers with routes between them, started
once for the module and emptied before each test."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.integration.cluster.support import NatsCluster


@pytest.fixture(scope="module")
async def nats_cluster() -> AsyncIterator[NatsCluster]:
    data_dir = Path(tempfile.mkdtemp(prefix="outrider-cluster-"))
    cluster = NatsCluster(data_dir)
    try:
        cluster.start()
        await cluster.wait_for_jetstream()
        yield cluster
    finally:
        cluster.stop()
        shutil.rmtree(data_dir, ignore_errors=True)


@pytest.fixture
async def cluster(nats_cluster: NatsCluster) -> NatsCluster:
    """The cluster with every server up and no streams left by an earlier test."""
    for name in sorted(nats_cluster.down):
        nats_cluster.restart(name)
    await nats_cluster.wait_for_jetstream()
    client = await nats_cluster.service()
    try:
        js = client.jetstream()
        for info in await js.streams_info():
            await js.delete_stream(info.config.name)
    finally:
        await client.close()
    return nats_cluster
