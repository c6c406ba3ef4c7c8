"""Finding decisions by part of a model's name, and the filters' choices.

A substring is matched against the distinct models and each one's page is
read through the model index, so the class of inputs a LIKE pattern gets
wrong (`%`, `_`, `\\`, case) is checked against a plain Python oracle with
generated needles, through the gateway and real Postgres.
"""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta

from sqlalchemy import text

from services.common.db import context_engine
from services.decisions import store
from tests.harness import bearer, gateway_client, running
from tests.integration.decisions.memory_support import connect, insert_rows, unit_vector, vector_text

MODELS = ["claude-sonnet-4-5", "Claude-Haiku_4%", "gpt\\4o", "gpt-4o-mini", "claude-sonnet-4-5-lite", None]
ALPHABET = "claude-sonnet4HAIKU_%\\gpto5x"


async def _seed(template, database, now: datetime) -> list[dict]:
    rows = [
        {
            "embedding": unit_vector(i),
            "decided_at": now - timedelta(minutes=7 * i),
            "agent_id": ["DISPATCH_AGENT", "EXCEPTION_AGENT"][i % 2],
            "decision_type": ["stall_response", "assignment_failure", "customer_update"][i % 3],
            "model": MODELS[i % len(MODELS)],
        }
        for i in range(36)
    ]
    rows.append({**rows[0], "embedding": unit_vector(40), "decided_at": now - timedelta(days=45), "model": "retired-1"})
    rows[-1]["agent_id"], rows[-1]["decision_type"] = "RETIRED_AGENT", "retired_type"
    conn = await connect(template, database)
    try:
        ids = await insert_rows(conn, rows)
        models = [(i, row["model"]) for i, row in zip(ids, rows, strict=True)]
        await conn.executemany("update decisions set model = $2 where id = $1", models)
    finally:
        await conn.close()
    return [{**row, "id": str(i)} for i, row in zip(ids, rows, strict=True)]


async def test_a_model_substring_lists_exactly_the_decisions_whose_model_contains_it(settings, template, database):
    now = datetime.now(UTC)
    rows = await _seed(template, database, now)
    newest_first = sorted(rows, key=lambda r: (r["decided_at"], r["id"]), reverse=True)
    rng = random.Random(29)
    needles = sorted({name[a:b] for name in MODELS if name for a in range(len(name)) for b in (a + 1, a + 3)})
    needles = rng.sample(needles, 30) + ["".join(rng.choices(ALPHABET, k=rng.randint(1, 4))) for _ in range(20)]
    needles += ["%", "_", "\\", "CLAUDE", "4%", "u_4", "zz"]
    async with running(settings, ["decisions"]), gateway_client(settings) as client:

        async def listed(limit: int = 100, **params) -> list[str]:
            seen: list[str] = []
            cursor = ""
            while True:
                reply = await client.get(
                    "/admin/ai/decisions", params={**params, "limit": limit, "cursor": cursor}, headers=bearer(role=4)
                )
                assert reply.status_code == 200, (params, reply.text)
                seen += [item["id"] for item in reply.json()["items"]]
                cursor = reply.json()["next_cursor"]
                if not cursor:
                    return seen

        for needle in needles:
            expected = [r["id"] for r in newest_first if r["model"] and needle.casefold() in r["model"].casefold()]
            assert await listed(model_contains=needle) == expected, needle
        # Paged in small pages, merged across models, the keyset still holds.
        sonnet = [r["id"] for r in newest_first if r["model"] and "sonnet" in r["model"]]
        assert await listed(limit=4, model_contains="SONNET") == sonnet
        # With the exact model as well, both hold; with the other filters, all hold.
        assert await listed(model="claude-sonnet-4-5", model_contains="sonnet") == [
            r["id"] for r in newest_first if r["model"] == "claude-sonnet-4-5"
        ]
        assert await listed(model="gpt-4o-mini", model_contains="sonnet") == []
        assert await listed(model_contains="gpt", agent_id="DISPATCH_AGENT", decision_type="stall_response") == [
            r["id"]
            for r in newest_first
            if r["model"]
            and "gpt" in r["model"]
            and (r["agent_id"], r["decision_type"]) == ("DISPATCH_AGENT", "stall_response")
        ]
        exact = await listed(limit=5, model="Claude-Haiku_4%")
        too_long = await client.get("/admin/ai/decisions", params={"model_contains": "x" * 257}, headers=bearer(role=4))
    assert exact == [r["id"] for r in newest_first if r["model"] == "Claude-Haiku_4%"]
    assert too_long.status_code == 422


async def test_the_facets_offer_what_the_window_decided_and_refuse_a_window_out_of_range(settings, template, database):
    now = datetime.now(UTC)
    await _seed(template, database, now)
    async with running(settings, ["decisions"]), gateway_client(settings) as client:
        month = await client.get("/admin/ai/decisions/facets", headers=bearer(role=3))
        longer = await client.get("/admin/ai/decisions/facets", params={"days": 60}, headers=bearer(role=4))
        refused = [
            await client.get("/admin/ai/decisions/facets", params={"days": days}, headers=bearer(role=4))
            for days in (0, 366, "a week")
        ]
    assert month.status_code == 200, month.text
    assert month.json() == {
        "window_days": 30,
        "decision_types": ["assignment_failure", "customer_update", "stall_response"],
        "agent_ids": ["DISPATCH_AGENT", "EXCEPTION_AGENT"],
        "models": sorted(m for m in MODELS if m),
    }
    assert longer.json()["window_days"] == 60
    assert "RETIRED_AGENT" in longer.json()["agent_ids"] and "retired_type" in longer.json()["decision_types"]
    assert "retired-1" in longer.json()["models"]
    assert [r.status_code for r in refused] == [422, 422, 422]


async def _plan(engine, **listing) -> str:
    statement = store.listing_statement(
        decision_type=None, outcome=None, agent_id=None, after=None, limit=26, **listing
    )
    async with engine.connect() as conn:
        rows = await conn.execute(text(f"explain (format json) {statement.sql}"), statement.params)
        return json.dumps(rows.scalar_one())


async def test_a_rare_model_and_a_booking_are_read_through_their_own_indexes(settings, template, database):
    """Plans, not timings (bench/decisions/bench_decision_search has those): a
    page of a model only the oldest decisions name, and a booking's
    decisions, are ranges of their own indexes, never a walk of the
    decision-time index that drops every other row."""
    conn = await connect(template, database)
    try:
        await conn.execute(
            """
            insert into decisions (id, decision_type, agent_id, subject_id, action, confidence, embedding,
                                   decided_at, model)
            select gen_random_uuid(), 'stall_response', 'agent_' || (n % 20), 'b-' || n, 'wait', 0.7,
                   $1::text::vector, now() - make_interval(secs => n), 'm-' || (n % 5)
              from generate_series(1, 20000) as n
            """,
            vector_text(unit_vector(1)),
        )
        await conn.execute(
            "update decisions set model = 'retired-0'"
            " where id in (select id from decisions order by decided_at limit 30)"
        )
        await conn.execute("analyze decisions")
    finally:
        await conn.close()
    engine = context_engine(settings.database_url, "decisions")
    try:
        retired = await _plan(engine, models=["retired-0"])
        several = await _plan(engine, models=["m-0", "retired-0"], subject_id="b-17")
        booking = await _plan(engine, subject_id="b-17")
    finally:
        await engine.dispose()
    assert '"Index Name": "decisions_model_decided"' in retired and "decisions_decided" not in retired
    assert '"Index Name": "decisions_subject_decided"' in booking and "decisions_decided" not in booking
    assert '"Node Type": "Seq Scan"' not in retired + several + booking
