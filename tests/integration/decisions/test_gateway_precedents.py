"""The gateway's precedent search over its SearchPrecedents streams:
answered as a FindSimilar call would be, failures included."""

from __future__ import annotations

import asyncio

import grpc
import pytest

from gateway.app import PRECEDENT_STREAMS
from gateway.codec.decisions import similar_body
from gateway.errors import from_rpc_error
from outrider.v1 import decisions_pb2, decisions_pb2_grpc
from tests.harness import database_away, engine_channel, eventually, gateway_client, internal_headers, running
from tests.integration.decisions.memory_support import connect, insert_rows, near, unit_vector

SIMILAR = "/internal/agent-decisions/similar"


async def _judged_rows(template, database, queries: list[list[float]]) -> None:
    conn = await connect(template, database)
    try:
        await insert_rows(
            conn,
            [
                {
                    "embedding": near(query, 100 * q + i, 0.1 + 0.05 * i),
                    "outcome": "success" if i % 3 else "failure",
                    "action": f"q{q}-{i}",
                    "decision_type": "stall_response",
                }
                for q, query in enumerate(queries)
                for i in range(5)
            ],
        )
    finally:
        await conn.close()


async def test_concurrent_searches_share_the_gateway_streams_and_answer_as_single_calls(settings, template, database):
    queries = [unit_vector(seed) for seed in range(12)]
    await _judged_rows(template, database, queries)
    async with running(settings, ["decisions"]), gateway_client(settings) as client:
        async with engine_channel(settings, "decisions") as channel:
            stub = decisions_pb2_grpc.DecisionsStub(channel)
            single = [
                similar_body(
                    await stub.FindSimilar(
                        decisions_pb2.FindSimilarRequest(decision_type="stall_response", embedding=query, k=4)
                    )
                )
                for query in queries
            ]
        searches = client._transport.app.state.precedents
        opened = set()
        for _ in range(3):
            replies = await asyncio.gather(
                *(
                    client.post(
                        SIMILAR,
                        json={"decision_type": "stall_response", "embedding": query, "k": 4},
                        headers=internal_headers(),
                    )
                    for query in queries
                )
            )
            opened |= {id(stream) for stream in searches._streams if stream is not None}
            assert [(r.status_code, r.content) for r in replies] == [(200, body) for body in single]
    assert len(opened) == PRECEDENT_STREAMS


async def test_a_refused_search_is_the_error_a_refused_call_would_be(settings, template, database):
    query = unit_vector(3)
    async with running(settings, ["decisions"]), gateway_client(settings) as client:
        async with database_away(template, database):
            reply = await client.post(
                SIMILAR, json={"decision_type": "stall_response", "embedding": query}, headers=internal_headers()
            )
            async with engine_channel(settings, "decisions") as channel:
                with pytest.raises(grpc.aio.AioRpcError) as refused:
                    await decisions_pb2_grpc.DecisionsStub(channel).FindSimilar(
                        decisions_pb2.FindSimilarRequest(decision_type="stall_response", embedding=query)
                    )
    expected = from_rpc_error(refused.value, "decisions")
    assert reply.status_code == expected.status == 503, reply.text
    # The answer adds the request's id, as every 5xx does.
    details = {**expected.details, "request_id": reply.headers["x-request-id"]}
    assert reply.json() == {"error": {"code": expected.code, "message": expected.message, "details": details}}
    assert expected.code != "UPSTREAM_UNAVAILABLE"


async def test_searches_fail_fast_while_decisions_is_down_and_resume_when_it_is_back(settings, template, database):
    query = unit_vector(7)
    await _judged_rows(template, database, [query])
    body = {"decision_type": "stall_response", "embedding": query, "k": 3}
    async with gateway_client(settings) as client:
        async with running(settings, ["decisions"]):
            before = await client.post(SIMILAR, json=body, headers=internal_headers())
        loop = asyncio.get_running_loop()
        started = loop.time()
        down = await client.post(SIMILAR, json=body, headers=internal_headers())
        waited = loop.time() - started
        async with running(settings, ["decisions"]):
            # The channel reconnects within its short backoff; then a new stream serves.
            after = await eventually(
                lambda: client.post(SIMILAR, json=body, headers=internal_headers()),
                lambda reply: reply.status_code != 503,
                timeout=5.0,
                what="searches resumed",
            )
    assert before.status_code == 200
    assert (after.status_code, after.content) == (200, before.content)
    assert down.status_code == 503, down.text
    assert down.json()["error"]["code"] == "UPSTREAM_UNAVAILABLE"
    # Answered once the stream's few attempts are spent, well inside the call deadline.
    assert waited < settings.call_timeout_s / 2
