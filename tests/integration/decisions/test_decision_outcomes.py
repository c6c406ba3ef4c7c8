"""Outcomes: one judge per pending decision, only people re-judge, history kept;
and the outcome judge's batch API."""

from __future__ import annotations

import asyncio
import json
import uuid
from datetime import UTC, datetime, timedelta

import grpc
import pytest

from outrider.v1 import decisions_pb2, decisions_pb2_grpc
from tests.harness import (
    bearer,
    gateway_client,
    internal_headers,
    running,
    service_channel,
)
from tests.integration.decisions.memory_support import connect, insert_rows, unit_vector


async def _history(template, database, decision_id: str) -> list[dict]:
    conn = await connect(template, database)
    try:
        rows = await conn.fetch(
            "select old_outcome, new_outcome, reason, judged_by, changed_by, changed_by_email"
            " from outcome_history where decision_id = $1 order by id",
            uuid.UUID(decision_id),
        )
    finally:
        await conn.close()
    return [dict(r) for r in rows]


async def test_a_judged_decision_is_rejudged_only_by_a_person_and_every_change_is_kept(settings, template, database):
    conn = await connect(template, database)
    try:
        [decision_id] = [str(i) for i in await insert_rows(conn, [{"embedding": unit_vector(1)}])]
    finally:
        await conn.close()
    path = f"/internal/agent-decisions/{decision_id}/outcome"
    async with running(settings, ["registry", "decisions"]), gateway_client(settings) as client:
        unknown_word = await client.patch(path, json={"outcome": "succeeded"}, headers=internal_headers())
        first = await client.patch(
            path, json={"outcome": "success", "reason": "delivered in SLA"}, headers=internal_headers()
        )
        retry = await client.patch(
            path, json={"outcome": "success", "reason": "delivered in SLA"}, headers=internal_headers()
        )
        machine = await client.patch(path, json={"outcome": "failure"}, headers=internal_headers())
        reader = await client.patch(
            f"/admin/ai/decisions/{decision_id}/outcome", json={"outcome": "failure"}, headers=bearer(role=3)
        )
        person = await client.patch(
            f"/admin/ai/decisions/{decision_id}/outcome",
            json={"outcome": "failure", "reason": "customer complained: parcel damaged"},
            headers=bearer(role=1, sub="u-7", email="lead@example.com"),
        )
        missing = await client.patch(
            f"/internal/agent-decisions/{uuid.uuid4()}/outcome", json={"outcome": "success"}, headers=internal_headers()
        )
        malformed = await client.patch(
            "/internal/agent-decisions/42/outcome", json={"outcome": "success"}, headers=internal_headers()
        )
    assert unknown_word.status_code == 422
    assert next(iter(unknown_word.json()["error"]["details"]["fields"])) == "outcome"
    assert "'success', 'failure' or 'unknown'" in unknown_word.json()["error"]["message"]
    assert first.status_code == 200, first.text
    assert first.json()["outcome"] == "success" and first.json()["judged_by"] == "engine:default"
    assert first.json()["judged_at"] is not None and "context" not in first.json()
    assert retry.status_code == 200 and retry.json()["judged_at"] == first.json()["judged_at"]
    assert machine.status_code == 409 and machine.json()["error"]["code"] == "ALREADY_JUDGED"
    assert reader.status_code == 403
    assert person.status_code == 200, person.text
    assert person.json()["outcome"] == "failure" and person.json()["judged_by"] == "human"
    assert missing.status_code == 404
    assert malformed.status_code == 422 and next(iter(malformed.json()["error"]["details"]["fields"])) == "decision_id"
    assert await _history(template, database, decision_id) == [
        {
            "old_outcome": None,
            "new_outcome": "success",
            "reason": "delivered in SLA",
            "judged_by": "engine:default",
            "changed_by": "",
            "changed_by_email": "",
        },
        {
            "old_outcome": "success",
            "new_outcome": "failure",
            "reason": "customer complained: parcel damaged",
            "judged_by": "human",
            "changed_by": "u-7",
            "changed_by_email": "lead@example.com",
        },
    ]


async def test_two_sweepers_never_judge_one_decision_twice(settings, template, database):
    conn = await connect(template, database)
    try:
        ids = [str(i) for i in await insert_rows(conn, [{"embedding": unit_vector(i)} for i in range(60)])]
    finally:
        await conn.close()
    async with running(settings, ["decisions"]):
        async with service_channel(settings, "decisions") as ch:
            judge = decisions_pb2_grpc.DecisionsStub(ch)

            def sweep(outcome: str) -> decisions_pb2.SetOutcomesRequest:
                return decisions_pb2.SetOutcomesRequest(
                    judged_by="sweeper",
                    verdicts=[
                        decisions_pb2.OutcomeVerdict(id=i, outcome=outcome, reason=f"sweep {outcome}") for i in ids
                    ],
                )

            replies = await asyncio.gather(*(judge.SetOutcomes(sweep(o)) for o in ("success", "failure", "unknown")))
            again = await judge.SetOutcomes(sweep("failure"))
            with pytest.raises(grpc.aio.AioRpcError) as bad_word:
                await judge.SetOutcomes(
                    decisions_pb2.SetOutcomesRequest(
                        judged_by="sweeper", verdicts=[decisions_pb2.OutcomeVerdict(id=ids[0], outcome="maybe")]
                    )
                )
    judged = [set(reply.judged_ids) for reply in replies]
    assert set().union(*judged) == set(ids)
    assert sum(len(j) for j in judged) == len(ids)
    assert list(again.judged_ids) == []
    assert bad_word.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    details = json.loads(dict(bad_word.value.trailing_metadata())["outrider-error-details"])
    assert list(details["fields"]) == ["verdicts[0].outcome"]
    conn = await connect(template, database)
    try:
        history = await conn.fetchval("select count(*) from outcome_history")
        by_judge = await conn.fetch("select judged_by, count(*) from decisions group by judged_by")
    finally:
        await conn.close()
    assert history == len(ids)
    assert [tuple(r) for r in by_judge] == [("sweeper", len(ids))]


async def test_the_judge_pages_pending_decisions_oldest_first_and_counts_outcomes(settings, template, database):
    now = datetime.now(UTC)
    rows = [
        {
            "embedding": unit_vector(i),
            "decided_at": now - timedelta(hours=50 + i),
            "subject_id": f"b-{i}",
            "decision_type": "stall_response" if i % 2 else "assignment_failure",
        }
        for i in range(7)
    ]
    rows.append({"embedding": unit_vector(90), "decided_at": now - timedelta(minutes=5), "subject_id": "fresh"})
    rows.append(
        {
            "embedding": unit_vector(91),
            "decided_at": now - timedelta(hours=60),
            "outcome": "success",
            "subject_id": "judged",
        }
    )
    conn = await connect(template, database)
    try:
        await insert_rows(conn, rows)
    finally:
        await conn.close()
    before = now - timedelta(hours=48)
    async with running(settings, ["decisions"]):
        async with service_channel(settings, "decisions") as ch:
            judge = decisions_pb2_grpc.DecisionsStub(ch)
            stamp = decisions_pb2.ListPendingRequest(limit=3)
            stamp.decided_before.FromDatetime(before)
            seen, cursor = [], ""
            for _ in range(5):
                stamp.after_cursor = cursor
                page = await judge.ListPending(stamp)
                seen.append([item.subject_id for item in page.items])
                cursor = page.next_cursor
                if not cursor:
                    break
            counts = await judge.CountOutcomes(decisions_pb2.CountOutcomesRequest())
            with pytest.raises(grpc.aio.AioRpcError) as too_many:
                await judge.ListPending(decisions_pb2.ListPendingRequest(limit=5000))
    assert seen == [["b-6", "b-5", "b-4"], ["b-3", "b-2", "b-1"], ["b-0"]]
    assert too_many.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    table = {(c.decision_type, c.outcome): c.count for c in counts.items}
    assert table == {("assignment_failure", ""): 4, ("stall_response", ""): 4, ("stall_response", "success"): 1}
