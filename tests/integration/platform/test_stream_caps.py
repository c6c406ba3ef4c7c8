"""One engine key cannot lock everyone out by holding streams open: its
watches and precedent streams are capped per key and for all engines
together, below what a context serves at once, and the console, the
gateway's engines and the health checks go on being answered.

Against the real contexts and the gateway, as `outrider up` runs them.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import grpc

from outrider.rpc import ERROR_CODE_KEY, ERROR_DETAILS_KEY
from outrider.v1 import decisions_pb2, decisions_pb2_grpc, registry_pb2, registry_pb2_grpc
from services.common.settings import CONTEXTS
from tests.harness import bearer, engine_channel, eventually, gateway_client, internal_headers, running, with_env

OTHER_ENGINE_KEY = "other-engine-key-0123456789abcdefghij"
WATCHES = 400


async def opened_watch(stub: registry_pb2_grpc.RegistryStub) -> tuple[Any, grpc.aio.AioRpcError | None]:
    """A watch and, when it was refused, its refusal; an admitted one has sent its first snapshot."""
    call = stub.WatchSnapshot(registry_pb2.WatchSnapshotRequest())
    try:
        await call.read()
    except grpc.aio.AioRpcError as refused:
        return call, refused
    return call, None


def named_cap(error: grpc.aio.AioRpcError) -> tuple[grpc.StatusCode, str, dict[str, Any]]:
    trailing = dict(error.trailing_metadata() or ())
    return error.code(), trailing[ERROR_CODE_KEY], json.loads(trailing[ERROR_DETAILS_KEY])


async def console_answers(client: Any) -> dict[str, int]:
    """What the console and the engines behind the gateway see from the registry right now."""
    agents = await client.get("/admin/ai/agents", headers=bearer(role=3))
    snapshot = await client.get("/internal/ai/registry", headers=internal_headers())
    ready = await client.get("/readyz")
    return {"agents": agents.status_code, "snapshot": snapshot.status_code, "ready": ready.status_code}


async def test_400_watches_from_one_engine_key_leave_the_console_answering(settings):
    async with (
        running(settings, CONTEXTS),
        gateway_client(settings) as client,
        engine_channel(settings, "registry") as channel,
    ):
        stub = registry_pb2_grpc.RegistryStub(channel)
        opened = await asyncio.gather(*(opened_watch(stub) for _ in range(WATCHES)))
        admitted = [call for call, refused in opened if refused is None]
        refusals = {named_cap(refused)[:2] for _, refused in opened if refused is not None}
        answers = await console_answers(client)
        _, refused = await opened_watch(stub)
        for call in admitted:
            call.cancel()

    assert len(admitted) == settings.streams_per_engine
    assert refusals == {(grpc.StatusCode.RESOURCE_EXHAUSTED, "STREAM_CAP_REACHED")}
    assert answers == {"agents": 200, "snapshot": 200, "ready": 200}
    assert refused is not None
    assert named_cap(refused) == (
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        "STREAM_CAP_REACHED",
        {
            "cap": "per_caller",
            "stream": "WatchSnapshot",
            "limit": settings.streams_per_engine,
            "caller": "engine:default",
        },
    )


async def test_engines_filling_their_total_leave_room_for_every_other_call(settings):
    # Half of what the registry serves at once is the engines' to fill; a
    # key allowed the whole half fills it, and the other half still serves.
    settings = with_env(
        settings,
        grpc_max_concurrent_rpcs=2 * WATCHES,
        streams_per_engine=WATCHES,
        streams_all_engines=WATCHES,
        engine_keys={**settings.engine_keys, "other": (OTHER_ENGINE_KEY,)},
    )
    async with (
        running(settings, CONTEXTS),
        gateway_client(settings) as client,
        engine_channel(settings, "registry") as channel,
        engine_channel(settings, "registry", OTHER_ENGINE_KEY) as other_channel,
    ):
        stub = registry_pb2_grpc.RegistryStub(channel)
        opened = await asyncio.gather(*(opened_watch(stub) for _ in range(WATCHES)))
        answers = await console_answers(client)
        _, own_refused = await opened_watch(stub)
        _, other_refused = await opened_watch(registry_pb2_grpc.RegistryStub(other_channel))
        opened[0][0].cancel()
        # The slot a cancelled watch held is the other engine's to take.
        retried: list[Any] = []
        await eventually(
            lambda: _admitted(registry_pb2_grpc.RegistryStub(other_channel), retried), what="the freed slot taken"
        )
        for call in [*(call for call, _ in opened), *retried]:
            call.cancel()

    assert [refused for _, refused in opened] == [None] * WATCHES
    assert answers == {"agents": 200, "snapshot": 200, "ready": 200}
    assert own_refused is not None and other_refused is not None
    assert named_cap(own_refused)[2]["cap"] == "per_caller"
    assert named_cap(other_refused)[2] == {
        "cap": "total",
        "stream": "WatchSnapshot",
        "limit": WATCHES,
        "caller": "engine:other",
    }


async def _admitted(stub: registry_pb2_grpc.RegistryStub, kept: list[Any]) -> bool:
    call, refused = await opened_watch(stub)
    if refused is not None:
        return False
    kept.append(call)
    return True


async def opened_search(stub: decisions_pb2_grpc.DecisionsStub) -> tuple[Any, grpc.aio.AioRpcError | None]:
    """A precedent stream that answered one search (a refused search is an
    answer too: the stream was admitted), or the stream's refusal."""
    call = stub.SearchPrecedents()
    search = decisions_pb2.FindSimilarRequest(decision_type="stall_response", k=1)
    try:
        await call.write(decisions_pb2.PrecedentQueries(queries=[decisions_pb2.PrecedentQuery(tag=1, search=search)]))
        await call.read()
    except grpc.aio.AioRpcError as refused:
        return call, refused
    except grpc.aio.UsageError:
        # Written after the server had already refused the stream: read why.
        try:
            await call.read()
        except grpc.aio.AioRpcError as refused:
            return call, refused
        raise
    return call, None


async def test_precedent_streams_are_capped_per_engine_and_the_gateways_searches_go_on(settings):
    settings = with_env(settings, streams_per_engine=4)
    async with (
        running(settings, CONTEXTS),
        gateway_client(settings) as client,
        engine_channel(settings, "decisions") as channel,
    ):
        stub = decisions_pb2_grpc.DecisionsStub(channel)
        opened = [await opened_search(stub) for _ in range(5)]
        similar = await client.post(
            "/internal/agent-decisions/similar",
            json={"decision_type": "stall_response", "context": {"stall_minutes": 12}, "k": 3},
            headers=internal_headers(),
        )
        for call, _ in opened:
            call.cancel()

    assert [refused is None for _, refused in opened] == [True] * 4 + [False]
    refused = opened[-1][1]
    assert refused is not None
    assert named_cap(refused) == (
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        "STREAM_CAP_REACHED",
        {"cap": "per_caller", "stream": "SearchPrecedents", "limit": 4, "caller": "engine:default"},
    )
    # The gateway's own streams carry every HTTP engine's searches; they are not any engine's.
    assert similar.status_code == 200, similar.text
