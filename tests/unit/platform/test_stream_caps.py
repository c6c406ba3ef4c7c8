"""Long-lived streams are capped per engine key and for all engines together,
refused past a cap with the cap named, and released however they end; the
platform's own streams and unary calls are never held back by them.

The counter is tested alone, then in a real gRPC server (no database: a
registry servicer that only watches) through the interceptor every context
serves with.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_health.v1 import _async as health_aio  # health.aio re-exports this module under a name mypy cannot follow
from grpc_health.v1 import health_pb2, health_pb2_grpc

from outrider.rpc import ERROR_CODE_KEY, ERROR_DETAILS_KEY, channel_with, keyed_channel
from outrider.v1 import registry_pb2, registry_pb2_grpc
from services.common.callers import SERVICE_KEY_HEADER, Access
from services.common.errors import RateLimited
from services.common.grpc_server import EngineStreamCaps, GuardInterceptor, Keys, bind
from services.common.settings import SettingsError, load
from services.common.stream_caps import StreamCaps
from tests.harness import eventually

ALPHA_KEY = "alpha-engine-key-0123456789abcdefghij"
BETA_KEY = "beta-engine-key-0123456789abcdefghijk"
SERVICE_KEY = "service-key-0123456789abcdefghijklmno"
KEYS = Keys(engine={"alpha": (ALPHA_KEY,), "beta": (BETA_KEY,)}, service=(SERVICE_KEY,))
ACCESS = {
    "/outrider.v1.Registry/WatchSnapshot": Access.ENGINE,
    "/outrider.v1.Registry/GetSnapshot": Access.ENGINE,
}
CAPS = EngineStreamCaps(per_engine=3, all_engines=5)
HEALTH_WATCHES = 2


# ─── The counter ───────────────────────────────────────────────────────────


def test_a_caller_past_its_cap_is_refused_and_others_go_on() -> None:
    caps = StreamCaps("WatchSnapshot", per_caller=2, total=5)
    held = [caps.admit("engine:a"), caps.admit("engine:a")]
    with pytest.raises(RateLimited) as refused:
        caps.admit("engine:a")
    assert refused.value.code == "STREAM_CAP_REACHED"
    assert refused.value.details == {"cap": "per_caller", "stream": "WatchSnapshot", "limit": 2, "caller": "engine:a"}
    assert "engine:a holds 2 open WatchSnapshot streams" in refused.value.message
    caps.admit("engine:b")
    held[0].release()
    caps.admit("engine:a")
    with pytest.raises(RateLimited):
        caps.admit("engine:a")


def test_the_total_is_shared_and_names_itself() -> None:
    caps = StreamCaps("SearchPrecedents", per_caller=2, total=3)
    caps.admit("engine:a")
    caps.admit("engine:a")
    caps.admit("engine:b")
    with pytest.raises(RateLimited) as refused:
        caps.admit("engine:c")
    assert refused.value.details == {"cap": "total", "stream": "SearchPrecedents", "limit": 3, "caller": "engine:c"}


def test_a_slot_released_twice_is_released_once() -> None:
    caps = StreamCaps("WatchSnapshot", per_caller=2, total=2)
    with caps.admit("engine:a") as slot:
        caps.admit("engine:a")
    slot.release()
    caps.admit("engine:b")
    with pytest.raises(RateLimited):
        caps.admit("engine:b")


@pytest.mark.parametrize(("per_caller", "total"), [(0, 5), (6, 5)])
def test_a_cap_per_caller_lies_between_one_and_the_total(per_caller: int, total: int) -> None:
    with pytest.raises(ValueError, match="per caller"):
        StreamCaps("WatchSnapshot", per_caller=per_caller, total=total)


# ─── In a server ───────────────────────────────────────────────────────────


class WatchOnly(registry_pb2_grpc.RegistryServicer):
    """Sends one snapshot, then holds the stream open; `if_none_match="fail"` fails it after the snapshot."""

    async def WatchSnapshot(self, request: Any, context: Any) -> AsyncIterator[registry_pb2.Snapshot]:
        yield registry_pb2.Snapshot(etag="e1")
        if request.if_none_match == "fail":
            raise RuntimeError("the watch broke")
        await asyncio.Event().wait()

    async def GetSnapshot(self, request: Any, context: Any) -> registry_pb2.GetSnapshotResponse:
        return registry_pb2.GetSnapshotResponse(not_modified=True)


@asynccontextmanager
async def server() -> AsyncIterator[str]:
    serving = grpc.aio.server(
        interceptors=[GuardInterceptor(ACCESS, KEYS, engine_streams=CAPS, health_watch_cap=HEALTH_WATCHES)]
    )
    registry_pb2_grpc.add_RegistryServicer_to_server(WatchOnly(), serving)
    health = health_aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health, serving)
    port = bind(serving, "127.0.0.1:0")
    await serving.start()
    try:
        yield f"127.0.0.1:{port}"
    finally:
        await serving.stop(0)


def engine(address: str, key: str) -> grpc.aio.Channel:
    return keyed_channel(address, key, health_checked=False)


def platform(address: str) -> grpc.aio.Channel:
    return channel_with(address, lambda: ((SERVICE_KEY_HEADER, SERVICE_KEY),), health_checked=False)


async def watch(channel: grpc.aio.Channel, etag: str = "") -> Any:
    """An admitted watch (its first snapshot read), or the refusal raised."""
    call = registry_pb2_grpc.RegistryStub(channel).WatchSnapshot(registry_pb2.WatchSnapshotRequest(if_none_match=etag))
    await call.read()
    return call


async def refusal(channel: grpc.aio.Channel) -> grpc.aio.AioRpcError:
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await watch(channel)
    return refused.value


def named_cap(error: grpc.aio.AioRpcError) -> tuple[str, dict[str, Any]]:
    trailing = dict(error.trailing_metadata() or ())
    return trailing[ERROR_CODE_KEY], json.loads(trailing[ERROR_DETAILS_KEY])


async def admitted_again(channel: grpc.aio.Channel, kept: list[Any]) -> bool:
    try:
        kept.append(await watch(channel))
    except grpc.aio.AioRpcError as error:
        if error.code() != grpc.StatusCode.RESOURCE_EXHAUSTED:
            raise
        return False
    return True


async def test_an_engine_past_its_cap_is_refused_by_name_and_everyone_else_is_served() -> None:
    async with server() as address, engine(address, ALPHA_KEY) as alpha, engine(address, BETA_KEY) as beta:
        held = [await watch(alpha) for _ in range(CAPS.per_engine)]
        refused = await refusal(alpha)
        assert refused.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert named_cap(refused) == (
            "STREAM_CAP_REACHED",
            {"cap": "per_caller", "stream": "WatchSnapshot", "limit": 3, "caller": "engine:alpha"},
        )
        held += [await watch(beta) for _ in range(CAPS.all_engines - CAPS.per_engine)]
        over = await refusal(beta)
        assert named_cap(over)[1] == {"cap": "total", "stream": "WatchSnapshot", "limit": 5, "caller": "engine:beta"}
        # Unary calls and the platform's own streams are what the room below the total is for.
        reply = await registry_pb2_grpc.RegistryStub(alpha).GetSnapshot(registry_pb2.GetSnapshotRequest())
        assert reply.not_modified
        async with platform(address) as own:
            held += [await watch(own) for _ in range(CAPS.all_engines + 1)]
        for call in held:
            call.cancel()


@pytest.mark.parametrize("ending", ["cancelled", "failed", "client gone"])
async def test_a_stream_frees_its_slot_however_it_ends(ending: str) -> None:
    async with server() as address, engine(address, ALPHA_KEY) as alpha:
        held = [await watch(alpha) for _ in range(CAPS.per_engine - 1)]
        if ending == "cancelled":
            (await watch(alpha)).cancel()
        elif ending == "failed":
            broken = await watch(alpha, etag="fail")
            with pytest.raises(grpc.aio.AioRpcError) as failed:
                await broken.read()
            assert failed.value.code() == grpc.StatusCode.INTERNAL
        else:
            # The engine's process goes away: its connection closes under the stream.
            gone = engine(address, ALPHA_KEY)
            await watch(gone)
            await gone.close(grace=None)
        await eventually(lambda: admitted_again(alpha, held), what=f"a slot freed after a stream {ending}")
        assert (await refusal(alpha)).code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        for call in held:
            call.cancel()


async def test_health_watches_share_one_cap_and_are_refused_by_name() -> None:
    async with server() as address, platform(address) as channel:
        health = health_pb2_grpc.HealthStub(channel)
        watches = [health.Watch(health_pb2.HealthCheckRequest()) for _ in range(HEALTH_WATCHES)]
        for each in watches:
            await each.read()
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await health.Watch(health_pb2.HealthCheckRequest()).read()
        assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "poll Check instead" in (refused.value.details() or "")
        assert named_cap(refused.value) == (
            "STREAM_CAP_REACHED",
            {"cap": "per_caller", "stream": "health Watch", "limit": HEALTH_WATCHES, "caller": "anyone"},
        )
        watches[0].cancel()
        await eventually(lambda: _fresh_watch(health, watches), what="a health watch freed")
        for each in watches:
            each.cancel()


async def _fresh_watch(health: health_pb2_grpc.HealthStub, kept: list[Any]) -> bool:
    call = health.Watch(health_pb2.HealthCheckRequest())
    try:
        await call.read()
    except grpc.aio.AioRpcError:
        return False
    kept.append(call)
    return True


# ─── The settings ──────────────────────────────────────────────────────────


def test_the_default_caps_load_and_leave_half_a_context_for_calls(tmp_path: Path) -> None:
    settings = load({"OUTRIDER_DATA_DIR": str(tmp_path)})
    assert settings.streams_per_engine <= settings.streams_all_engines <= settings.grpc_max_concurrent_rpcs // 2
    assert settings.sse_per_person <= settings.sse_total


@pytest.mark.parametrize(
    ("env", "named"),
    [
        ({"OUTRIDER_STREAMS_PER_ENGINE": "40", "OUTRIDER_STREAMS_ALL_ENGINES": "30"}, "OUTRIDER_STREAMS_PER_ENGINE"),
        ({"OUTRIDER_SSE_PER_PERSON": "9", "OUTRIDER_SSE_TOTAL": "8"}, "OUTRIDER_SSE_PER_PERSON"),
        ({"OUTRIDER_GRPC_MAX_CONCURRENT_RPCS": "400"}, "OUTRIDER_STREAMS_ALL_ENGINES"),
        ({"OUTRIDER_STREAMS_ALL_ENGINES": "501"}, "OUTRIDER_STREAMS_ALL_ENGINES"),
    ],
)
def test_caps_that_refuse_under_their_own_cap_or_starve_calls_do_not_load(
    tmp_path: Path, env: dict[str, str], named: str
) -> None:
    with pytest.raises(SettingsError, match=named):
        load({"OUTRIDER_DATA_DIR": str(tmp_path), **env})
