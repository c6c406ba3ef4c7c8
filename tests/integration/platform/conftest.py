"""Fixtures of the platform tests that speak NATS."""

from __future__ import annotations

import pytest

from services.common.nats import ensure_topology
from tests.harness import Stack, service_nats
from tests.integration.platform.nats_support import LIMITS


@pytest.fixture
async def topology(stack: Stack):
    """The streams and bucket as the services make them, emptied."""
    client = await service_nats(stack.nats_url)
    try:
        js = client.jetstream()
        for info in await js.streams_info():
            await js.delete_stream(info.config.name)
        await ensure_topology(js, LIMITS)
        yield client, js
    finally:
        await client.close()
