"""Outcomes over time for the console's judged-success chart, with real
Postgres behind GET /admin/ai/insights/outcomes: decisions inserted at known
instants come back counted in their bucket of decision time, per decision
type, with pending and unknown apart from success and failure."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from tests.harness import bearer, gateway_client, running
from tests.integration.decisions.memory_support import connect, insert_rows, unit_vector

HOUR = 3600


async def _seed(template, database, rows: list[dict]) -> None:
    conn = await connect(template, database)
    try:
        await insert_rows(conn, rows)
    finally:
        await conn.close()


def _bucket_of(instant: datetime, start: str, width: int) -> int:
    return int((instant - datetime.fromisoformat(start)).total_seconds()) // width


async def test_counts_land_in_their_buckets_per_type_with_pending_apart(settings, template, database):
    now = datetime.now(UTC)
    hour_start = now.replace(minute=0, second=0, microsecond=0)
    three_ago = hour_start - timedelta(hours=3) + timedelta(minutes=10)
    five_ago = hour_start - timedelta(hours=5) + timedelta(minutes=5)
    embedding = unit_vector(1)
    stall = [
        *({"decided_at": three_ago, "outcome": "success"} for _ in range(3)),
        {"decided_at": three_ago, "outcome": "failure"},
        {"decided_at": three_ago, "outcome": "unknown"},
        *({"decided_at": three_ago} for _ in range(2)),
        {"decided_at": five_ago, "outcome": "failure"},
        {"decided_at": five_ago},
        # Two days back: outside a one-day window, inside the default week.
        {"decided_at": now - timedelta(days=2), "outcome": "success"},
    ]
    other = [{"decided_at": five_ago, "outcome": "success", "decision_type": "assignment_failure"}]
    await _seed(template, database, [{**row, "embedding": embedding} for row in stall + other])

    async with running(settings, ["registry", "decisions"]), gateway_client(settings) as client:
        day = await client.get("/admin/ai/insights/outcomes", params={"days": 1}, headers=bearer(role=4))
        only = await client.get(
            "/admin/ai/insights/outcomes",
            params={"days": 1, "decision_type": "assignment_failure"},
            headers=bearer(role=4),
        )
        week = await client.get("/admin/ai/insights/outcomes", headers=bearer(role=4))
        too_long = await client.get("/admin/ai/insights/outcomes", params={"days": 31}, headers=bearer(role=4))
        not_a_type = await client.get(
            "/admin/ai/insights/outcomes", params={"decision_type": "Stall Response"}, headers=bearer(role=4)
        )
        two_days_ago = now - timedelta(days=2)
        around = {
            "from": (two_days_ago - timedelta(hours=1)).isoformat(),
            "to": (two_days_ago + timedelta(hours=1)).isoformat(),
        }
        ranged = await client.get("/admin/ai/insights/outcomes", params=around, headers=bearer(role=4))
        both = await client.get("/admin/ai/insights/outcomes", params={**around, "days": 7}, headers=bearer(role=4))

    assert day.status_code == 200, day.text
    body = day.json()
    # A day in hours: 24 buckets and the one holding now, on whole hours.
    assert body["window_days"] == 1 and body["bucket_seconds"] == HOUR
    types = {series["decision_type"]: series["buckets"] for series in body["types"]}
    assert sorted(types) == ["assignment_failure", "stall_response"]
    buckets = types["stall_response"]
    assert len(buckets) == 25
    assert datetime.fromisoformat(body["start"]).timestamp() % HOUR == 0
    assert buckets[-1]["start"] <= now.isoformat() < body["end"]

    def counts(index: int) -> tuple[int, int, int, int]:
        b = buckets[index]
        return b["successes"], b["failures"], b["unknown"], b["pending"]

    at_three = _bucket_of(three_ago, body["start"], HOUR)
    at_five = _bucket_of(five_ago, body["start"], HOUR)
    assert at_three - at_five == 2
    assert counts(at_three) == (3, 1, 1, 2)
    assert counts(at_five) == (0, 1, 0, 1)
    assert all(counts(i) == (0, 0, 0, 0) for i in range(len(buckets)) if i not in (at_three, at_five))
    assert [b["successes"] for b in types["assignment_failure"]][at_five] == 1

    assert only.status_code == 200, only.text
    assert [series["decision_type"] for series in only.json()["types"]] == ["assignment_failure"]

    assert week.status_code == 200, week.text
    weekly = week.json()
    # A week in quarter days (28 and the one holding now); the two-day-old success is in it.
    assert weekly["window_days"] == 7 and weekly["bucket_seconds"] == 6 * HOUR
    stall_week = next(s["buckets"] for s in weekly["types"] if s["decision_type"] == "stall_response")
    assert len(stall_week) == 29
    assert sum(b["successes"] for b in stall_week) == 4 and sum(b["pending"] for b in stall_week) == 3

    assert too_long.status_code == 422 and not_a_type.status_code == 422

    # A range of its own: the two hours around the two-day-old success, in hours, nothing else.
    assert ranged.status_code == 200, ranged.text
    span = ranged.json()
    assert (span["window_days"], span["bucket_seconds"]) == (0, HOUR)
    assert datetime.fromisoformat(span["start"]) <= two_days_ago - timedelta(hours=1)
    assert two_days_ago + timedelta(hours=1) <= datetime.fromisoformat(span["end"])
    stall_span = next(s["buckets"] for s in span["types"] if s["decision_type"] == "stall_response")
    assert len(stall_span) in (2, 3)
    assert sum(b["successes"] for b in stall_span) == 1
    assert sum(b["failures"] + b["unknown"] + b["pending"] for b in stall_span) == 0
    assert [s["decision_type"] for s in span["types"]] == ["stall_response"]
    assert both.status_code == 422 and "days" in both.json()["error"]["details"]["fields"]
