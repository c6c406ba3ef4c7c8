"""SearchPrecedents: many searches over one call, each answered as FindSimilar would answer it."""

from __future__ import annotations

import asyncio
import json

import grpc

from outrider.client.decisions import PrecedentClient
from outrider.rpc import ERROR_CODE_KEY
from outrider.v1 import decisions_pb2, decisions_pb2_grpc
from tests.harness import INTERNAL_KEY, engine_channel, reserved_port, running
from tests.integration.decisions.memory_support import connect, insert_rows, near, unit_vector


async def _judged_rows(template, database, queries: list[list[float]]) -> None:
    conn = await connect(template, database)
    try:
        await insert_rows(
            conn,
            [
                {
                    "embedding": near(query, 100 * q + i, 0.1 + 0.05 * i),
                    "outcome": "success" if i % 2 else "failure",
                    "action": f"q{q}-{i}",
                    "decision_type": "stall_response" if q % 2 else "assignment_failure",
                }
                for q, query in enumerate(queries)
                for i in range(6)
            ],
        )
    finally:
        await conn.close()


async def _answers(
    stub: decisions_pb2_grpc.DecisionsStub, messages: list[decisions_pb2.PrecedentQueries]
) -> list[decisions_pb2.PrecedentAnswer]:
    return [answer async for message in stub.SearchPrecedents(iter(messages)) for answer in message.answers]


def _search(query: list[float], q: int, k: int = 4) -> decisions_pb2.FindSimilarRequest:
    return decisions_pb2.FindSimilarRequest(
        decision_type="stall_response" if q % 2 else "assignment_failure", embedding=query, k=k
    )


async def test_each_answer_carries_its_tag_and_equals_the_single_call_answer(settings, template, database):
    queries = [unit_vector(seed) for seed in range(12)]
    await _judged_rows(template, database, queries)
    async with running(settings, ["decisions"]), engine_channel(settings, "decisions") as channel:
        stub = decisions_pb2_grpc.DecisionsStub(channel)
        single = [await stub.FindSimilar(_search(query, q)) for q, query in enumerate(queries)]
        # Tags far apart and out of order: the service echoes them, it does not count.
        tags = [10_000 + 7 * (len(queries) - q) for q in range(len(queries))]
        asked = [
            decisions_pb2.PrecedentQuery(tag=tag, search=_search(query, q))
            for tag, (q, query) in zip(tags, enumerate(queries), strict=True)
        ]
        # One message of one search, then one of all the rest.
        answers = await _answers(
            stub, [decisions_pb2.PrecedentQueries(queries=asked[:1]), decisions_pb2.PrecedentQueries(queries=asked[1:])]
        )
    by_tag = {answer.tag: answer for answer in answers}
    assert sorted(by_tag) == sorted(tags)
    assert len(answers) == len(queries)
    for tag, expected in zip(tags, single, strict=True):
        assert by_tag[tag].WhichOneof("answer") == "found"
        assert by_tag[tag].found == expected
        assert [item.action for item in expected.items]


async def test_a_refused_search_is_answered_alone_and_the_stream_goes_on(settings, template, database):
    queries = [unit_vector(seed) for seed in range(2)]
    await _judged_rows(template, database, queries)
    asked = [
        decisions_pb2.PrecedentQuery(tag=1, search=_search(queries[0], 0)),
        decisions_pb2.PrecedentQuery(tag=2, search=_search(queries[0], 0, k=0)),
        decisions_pb2.PrecedentQuery(
            tag=3,
            search=decisions_pb2.FindSimilarRequest(decision_type="stall_response", context_json=b'{"stall_minutes": '),
        ),
        decisions_pb2.PrecedentQuery(tag=4, search=_search(queries[1], 1)),
    ]
    async with running(settings, ["decisions"]), engine_channel(settings, "decisions") as channel:
        stub = decisions_pb2_grpc.DecisionsStub(channel)
        answers = {
            answer.tag: answer
            for answer in await _answers(stub, [decisions_pb2.PrecedentQueries(queries=[q]) for q in asked])
        }
        try:
            await stub.FindSimilar(_search(queries[0], 0, k=0))
        except grpc.aio.AioRpcError as error:
            single_call = (error.code().name, dict(error.trailing_metadata())[ERROR_CODE_KEY])
    assert [answers[tag].WhichOneof("answer") for tag in (1, 2, 3, 4)] == ["found", "refused", "refused", "found"]
    refused = answers[2].refused
    assert (refused.status, refused.code) == single_call
    assert refused.status == "INVALID_ARGUMENT"
    assert "k" in json.loads(refused.details_json)["fields"]
    assert answers[3].refused.status == "INVALID_ARGUMENT"
    assert "context" in json.loads(answers[3].refused.details_json)["fields"]
    assert answers[4].found.items


async def test_the_engine_client_shares_one_stream_across_concurrent_searches(settings, template, database):
    queries = [unit_vector(seed) for seed in range(8)]
    await _judged_rows(template, database, queries)
    async with running(settings, ["decisions"]), engine_channel(settings, "decisions") as channel:
        stub = decisions_pb2_grpc.DecisionsStub(channel)
        single = [await stub.FindSimilar(_search(query, q, k=5)) for q, query in enumerate(queries)]
        client = PrecedentClient(settings.addr("decisions"), INTERNAL_KEY, timeout_s=5.0)
        try:
            rounds, streams = [], set()
            for _ in range(3):
                rounds.append(
                    await asyncio.gather(
                        *(
                            client.precedents("stall_response" if q % 2 else "assignment_failure", k=5, embedding=query)
                            for q, query in enumerate(queries)
                        )
                    )
                )
                streams.add(id(client._searches._streams[0]))
        finally:
            await client.close()
    assert len(streams) == 1
    for answers in rounds:
        for answer, expected in zip(answers, single, strict=True):
            assert answer.available
            assert [p.id for p in answer.items] == [d.id for d in expected.items]
            assert (answer.successes, answer.failures) == (expected.summary.successes, expected.summary.failures)
    assert client.unavailable == 0


async def test_the_engine_client_opens_a_new_stream_after_the_context_restarts(settings, template, database):
    queries = [unit_vector(seed) for seed in range(2)]
    await _judged_rows(template, database, queries)
    client = PrecedentClient(settings.addr("decisions"), INTERNAL_KEY, timeout_s=3.0)
    try:
        async with running(settings, ["decisions"]):
            before = await client.precedents("stall_response", embedding=queries[1])
        # The context is gone: the stream broke, and the answer is "unknown", fast.
        gone = await client.precedents("stall_response", embedding=queries[1])
        async with running(settings, ["decisions"]):
            after = await client.precedents("stall_response", embedding=queries[1])
    finally:
        await client.close()
    assert before.available and after.available
    assert [p.id for p in after.items] == [p.id for p in before.items]
    assert gone.available is False
    assert client.unavailable == 1


async def test_a_search_without_the_engine_key_is_refused_at_the_stream(settings):
    async with running(settings, ["decisions"]), engine_channel(settings, "decisions", key="x" * 40) as channel:
        stranger = decisions_pb2.PrecedentQuery(
            tag=1, search=decisions_pb2.FindSimilarRequest(decision_type="stall_response", context_json=b"{}")
        )
        try:
            answers = await _answers(
                decisions_pb2_grpc.DecisionsStub(channel), [decisions_pb2.PrecedentQueries(queries=[stranger])]
            )
        except grpc.aio.AioRpcError as error:
            code = error.code()
        else:
            raise AssertionError(f"a stranger's stream was answered: {answers}")
    assert code is grpc.StatusCode.UNAUTHENTICATED


async def test_outrider_down_answers_unknown_within_the_timeout():
    client = PrecedentClient(f"127.0.0.1:{reserved_port()}", INTERNAL_KEY, timeout_s=0.3)
    started = asyncio.get_running_loop().time()
    try:
        answer = await client.precedents("stall_response", {"stall_minutes": 12})
    finally:
        await client.close()
    assert answer.available is False
    assert asyncio.get_running_loop().time() - started < 1.0
