"""Start-up creates the streams with limits and never overwrites limits an
operator set on a stream that exists."""

from __future__ import annotations

from nats.js.api import DiscardPolicy, StorageType, StreamConfig

from services.common.nats import STREAMS, StreamLimits, ensure_topology
from tests.harness import service_nats

LIMITS = StreamLimits(max_age_s=7200.0, max_bytes=64 * 2**20)


async def test_new_streams_get_the_configured_limits_and_refuse_when_full(template):
    client = await service_nats(template.nats_url)
    try:
        js = client.jetstream()
        for info in await js.streams_info():
            await js.delete_stream(info.config.name)
        await ensure_topology(js, LIMITS)
        for spec in STREAMS:
            config = (await js.stream_info(spec.name)).config
            assert (config.max_age, config.max_bytes, config.discard) == (7200.0, 64 * 2**20, DiscardPolicy.NEW)
        # A second start (or a second replica) changes nothing.
        await ensure_topology(js, LIMITS)
        assert (await js.stream_info("FACTS")).config.max_bytes == 64 * 2**20
    finally:
        await client.close()


async def test_an_operators_limits_survive_a_start_and_missing_subjects_are_added(template):
    client = await service_nats(template.nats_url)
    try:
        js = client.jetstream()
        for info in await js.streams_info():
            await js.delete_stream(info.config.name)
        # An operator made FACTS by hand, bigger, with an extra subject of theirs and without ours.
        await js.add_stream(
            StreamConfig(
                name="FACTS",
                subjects=["ops.manual"],
                storage=StorageType.FILE,
                max_age=86_400.0 * 30,
                max_bytes=10 * 2**30,
            )
        )
        await ensure_topology(js, LIMITS)
        config = (await js.stream_info("FACTS")).config
        assert (config.max_age, config.max_bytes) == (86_400.0 * 30, 10 * 2**30)
        assert set(config.subjects) == {"ops.manual", "facts.>"}
    finally:
        await client.close()
