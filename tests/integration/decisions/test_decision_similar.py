"""Precedent search: judged decisions of the same type only, nearest first."""

from __future__ import annotations

import asyncio

import asyncpg
import pytest

from services.common.db import context_engine
from services.decisions import store
from services.decisions.precedent import JudgedCounts, PrecedentSearch
from services.decisions.server import SEARCH_CONNECTIONS, direct_connections
from tests.harness import gateway_client, internal_headers, running
from tests.integration.decisions.memory_support import (
    connect,
    insert_rows,
    near,
    unit_vector,
    vector_text,
)


async def test_only_judged_decisions_of_the_type_come_back_nearest_first(settings, template, database):
    query = unit_vector(7)
    conn = await connect(template, database)
    try:
        # The pending and unknown rows are the closest of all; they must
        # still never come back, nor the other type's.
        closest = [
            {"embedding": near(query, 1, 0.05), "outcome": None, "action": "pending"},
            {"embedding": near(query, 2, 0.05), "outcome": "unknown", "action": "unknown"},
            {
                "embedding": near(query, 3, 0.05),
                "outcome": "success",
                "decision_type": "assignment_failure",
                "action": "other-type",
            },
        ]
        judged = [
            {
                "embedding": near(query, 10 + i, 0.2 + 0.15 * i),
                "outcome": "success" if i % 3 else "failure",
                "action": f"judged-{i}",
            }
            for i in range(8)
        ]
        await insert_rows(conn, closest + judged)
    finally:
        await conn.close()
    async with running(settings, ["decisions"]), gateway_client(settings) as client:
        reply = await client.post(
            "/internal/agent-decisions/similar",
            json={"decision_type": "stall_response", "embedding": query, "k": 5},
            headers=internal_headers(),
        )
        everything = await client.post(
            "/internal/agent-decisions/similar",
            json={"decision_type": "stall_response", "embedding": query, "k": 100},
            headers=internal_headers(),
        )
    assert reply.status_code == 200, reply.text
    body = reply.json()
    assert [item["action"] for item in body["items"]] == [f"judged-{i}" for i in range(5)]
    similarities = [item["similarity"] for item in body["items"]]
    assert similarities == sorted(similarities, reverse=True)
    assert 0.5 < similarities[-1] < similarities[0] <= 1.0
    assert all(item["outcome"] in ("success", "failure") for item in body["items"])
    assert body["items"][0]["context"] == {"facts": {"stall_minutes": 12}}
    assert body["summary"] == {"successes": 3, "failures": 2, "success_rate": 0.6}
    actions = [item["action"] for item in everything.json()["items"]]
    assert sorted(actions) == sorted(f"judged-{i}" for i in range(8))


async def test_a_type_without_judged_precedent_answers_empty_with_no_rate(settings, template, database):
    conn = await connect(template, database)
    try:
        await insert_rows(conn, [{"embedding": unit_vector(1), "outcome": None}])
    finally:
        await conn.close()
    async with running(settings, ["decisions"]), gateway_client(settings) as client:
        reply = await client.post(
            "/internal/agent-decisions/similar",
            json={"decision_type": "stall_response", "context": {"facts": {"stall_minutes": 12}}},
            headers=internal_headers(),
        )
        too_many = await client.post(
            "/internal/agent-decisions/similar",
            json={"decision_type": "stall_response", "context": {}, "k": 101},
            headers=internal_headers(),
        )
        nothing = await client.post(
            "/internal/agent-decisions/similar",
            json={"decision_type": "stall_response"},
            headers=internal_headers(),
        )
    assert reply.status_code == 200
    assert reply.json() == {"items": [], "summary": {"successes": 0, "failures": 0, "success_rate": None}}
    assert too_many.status_code == 422 and next(iter(too_many.json()["error"]["details"]["fields"])) == "k"
    assert nothing.status_code == 422 and next(iter(nothing.json()["error"]["details"]["fields"])) == "context"


async def test_a_context_finds_the_precedent_recorded_with_the_same_facts(settings):
    facts = {"facts": {"stall_minutes": 14, "zone": "north", "vehicle": "bike"}}
    other = {"facts": {"stall_minutes": 300, "zone": "south", "vehicle": "van"}}
    async with running(settings, ["decisions"]), gateway_client(settings) as client:
        ids = {}
        for name, context in (("same", facts), ("other", other)):
            reply = await client.post(
                "/internal/agent-decisions",
                json={
                    "decision_type": "stall_response",
                    "agent_id": "EXCEPTION_AGENT",
                    "subject_id": name,
                    "context": context,
                    "decision": {"action": name, "confidence": 0.5},
                },
                headers=internal_headers(),
            )
            ids[name] = reply.json()["id"]
            judged = await client.patch(
                f"/internal/agent-decisions/{ids[name]}/outcome",
                json={"outcome": "success"},
                headers=internal_headers(),
            )
            assert judged.status_code == 200, judged.text
        reply = await client.post(
            "/internal/agent-decisions/similar",
            json={"decision_type": "stall_response", "context": facts, "k": 2},
            headers=internal_headers(),
        )
    items = reply.json()["items"]
    assert [item["id"] for item in items] == [ids["same"], ids["other"]]
    assert abs(items[0]["similarity"] - 1.0) < 1e-6
    assert items[1]["similarity"] < 0.9


async def _mixed_types(template, database) -> list[float]:
    """300 judged decisions of a common type close to the query, 200 of another
    type further out, and pending noise closest of all."""
    query = unit_vector(99)
    rows = [
        {"embedding": near(query, i, 0.5), "outcome": "success", "decision_type": "stall_response"} for i in range(300)
    ]
    rows += [
        {
            "embedding": near(query, 1000 + i, 2.0),
            "outcome": "failure",
            "decision_type": "assignment_failure",
            "action": f"far-{i}",
        }
        for i in range(200)
    ]
    rows += [{"embedding": near(query, 2000 + i, 0.1), "outcome": None} for i in range(50)]
    conn = await connect(template, database)
    try:
        await insert_rows(conn, rows)
        await conn.execute("analyze decisions")
    finally:
        await conn.close()
    return query


async def test_explain_shows_the_partial_hnsw_index_serving_precedent_search(settings, template, database):
    query = await _mixed_types(template, database)
    conn = await connect(template, database)
    try:
        await conn.execute("set hnsw.ef_search = 100")
        plan = await conn.fetchval(
            f"explain (format json) {store.SIMILAR_GRAPH_SQL}", vector_text(query), "stall_response", 10
        )
        exact_plan = await conn.fetchval(
            f"explain (format json) {store.SIMILAR_EXACT_SQL}", vector_text(query), "stall_response", 10
        )
    finally:
        await conn.close()
    # No planner switches are turned off: at a few hundred rows the planner
    # already prefers the graph to reading and sorting, as it will at millions.
    assert '"Index Name": "decisions_judged_embedding"' in plan
    assert '"Node Type": "Seq Scan"' not in plan
    assert "decisions_judged_embedding" not in exact_plan


async def test_a_short_graph_walk_for_a_rare_type_is_rerun_exactly(settings, template, database):
    query = store.vector_bytes(await _mixed_types(template, database))
    searches = direct_connections(settings.database_url, "decisions", purpose="search", size=SEARCH_CONNECTIONS)
    engine = context_engine(settings.database_url, "decisions")
    try:
        async with searches.connection(ef_search=40) as conn:
            walked = await store.find_similar(
                conn, decision_type="assignment_failure", embedding=query, k=10, exact=False
            )
        async with searches.connection() as conn:
            exact = await store.find_similar(
                conn, decision_type="assignment_failure", embedding=query, k=10, exact=True
            )
        # The hazard: the graph hands back its 40 nearest judged rows and the
        # type filter runs after; all 40 are of the common type, so the other
        # type, 40% of the graph, gets nothing at all.
        assert len(walked) < 10
        assert len(exact) == 10
        # Forced onto the graph with the narrowest walk, the search notices
        # the short answer and walks again wider, then exactly if need be.
        search = PrecedentSearch(searches, counts=JudgedCounts(engine), exact_rows=0, ef_per_result=0.01)
        found = await search.nearest(decision_type="assignment_failure", embedding=query, k=10)
        common = await search.nearest(decision_type="stall_response", embedding=query, k=10)
    finally:
        await searches.close()
        await engine.dispose()
    assert [row.id for row in found] == [row.id for row in exact]
    assert len(common) == 10 and all(row.decision_type == "stall_response" for row in common)
    assert all(row.outcome in ("success", "failure") for row in found + common)


async def test_search_survives_its_connections_being_killed(settings, template, database):
    query = unit_vector(5)
    conn = await connect(template, database)
    try:
        await insert_rows(conn, [{"embedding": near(query, i, 0.3), "outcome": "success"} for i in range(3)])
        async with running(settings, ["decisions"]), gateway_client(settings) as client:
            before = await client.post(
                "/internal/agent-decisions/similar",
                json={"decision_type": "stall_response", "embedding": query},
                headers=internal_headers(),
            )
            # A database restart or failover drops every pooled connection.
            killed = await conn.fetchval(
                "select count(pg_terminate_backend(pid)) from pg_stat_activity"
                " where application_name = 'outrider-decisions-search'"
            )
            after = await client.post(
                "/internal/agent-decisions/similar",
                json={"decision_type": "stall_response", "embedding": query},
                headers=internal_headers(),
            )
    finally:
        await conn.close()
    assert killed >= 1
    assert before.status_code == 200 and after.status_code == 200, after.text
    assert [i["id"] for i in after.json()["items"]] == [i["id"] for i in before.json()["items"]]
    assert len(after.json()["items"]) == 3


async def test_a_search_takes_the_idle_connection_already_set_to_its_width(settings):
    searches = direct_connections(settings.database_url, "decisions", purpose="search", size=2)
    try:
        async with searches.connection(ef_search=100) as narrow, searches.connection(ef_search=300) as wide:
            widths = (await narrow.fetchval("show hnsw.ef_search"), await wide.fetchval("show hnsw.ef_search"))
        # `wide` went back last, yet a search for 100 gets the connection
        # already set to 100: no SET, one round trip.
        async with searches.connection(ef_search=100) as again:
            assert again is narrow
        async with searches.connection(ef_search=300) as again:
            assert again is wide and await again.fetchval("show hnsw.ef_search") == "300"
        # The server refusing a statement leaves the connection in use; a
        # call cancelled mid-statement does not.
        with pytest.raises(asyncpg.DivisionByZeroError):
            async with searches.connection(ef_search=300) as refused:
                await refused.fetchval("select 1 / 0")
        async with searches.connection(ef_search=300) as again:
            assert again is refused
        with pytest.raises(TimeoutError):
            async with searches.connection(ef_search=300) as cancelled:
                await asyncio.wait_for(cancelled.fetchval("select pg_sleep(5)"), 0.2)
        assert cancelled.is_closed()
        async with searches.connection(ef_search=300) as fresh:
            assert fresh is not cancelled and await fresh.fetchval("show hnsw.ef_search") == "300"
    finally:
        await searches.close()
    assert widths == ("100", "300")


async def test_a_search_opens_a_connection_for_a_new_width_rather_than_reset_an_idle_one(settings):
    searches = direct_connections(settings.database_url, "decisions", purpose="search", size=2)
    try:
        async with searches.connection(ef_search=100) as narrow:
            pass
        # Under the cap, a width no idle connection has gets a connection of
        # its own; `narrow` keeps its width for the next search that wants it.
        async with searches.connection(ef_search=300) as wide:
            assert wide is not narrow
        async with searches.connection(ef_search=100) as again:
            assert again is narrow and await again.fetchval("show hnsw.ef_search") == "100"
        # At the cap, a third width re-sets an idle connection: no more
        # connections than the cap, ever.
        async with searches.connection(ef_search=500) as third:
            assert third in (narrow, wide) and await third.fetchval("show hnsw.ef_search") == "500"
        # An exact search has no width: it takes what is idle, opening nothing.
        async with searches.connection() as exact:
            assert exact in (narrow, wide)
        # Connections that died are counted out: a dead one takes the idle
        # ones with it, and the cap then has room for two new widths again.
        third.terminate()
        with pytest.raises(asyncpg.InterfaceError):
            async with searches.connection(ef_search=500) as dead:
                await dead.fetchval("select 1")
        async with searches.connection(ef_search=100) as first:
            assert first not in (narrow, wide)
        async with searches.connection(ef_search=300) as second:
            assert second is not first
    finally:
        await searches.close()


async def test_searches_opening_at_once_never_pass_the_cap(settings):
    searches = direct_connections(settings.database_url, "decisions", purpose="search", size=2)
    held: list[asyncpg.Connection] = []
    release = asyncio.Event()

    async def hold(width: int) -> None:
        async with searches.connection(ef_search=width) as conn:
            held.append(conn)
            await release.wait()

    try:
        async with searches.connection(ef_search=100) as narrow:
            pass
        # One connection open, one under the cap: the first new width opens
        # it, and the second, arriving while that connect is under way, must
        # re-set the idle one instead of opening a third.
        holders = [asyncio.create_task(hold(300)), asyncio.create_task(hold(500))]
        while len(held) < 2:  # noqa: ASYNC110 - the holders fill a list, not an event
            await asyncio.sleep(0.01)
        release.set()
        await asyncio.gather(*holders)
    finally:
        await searches.close()
    assert narrow in held
    assert len({id(conn) for conn in held}) == 2
