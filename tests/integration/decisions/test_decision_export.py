"""The export: every decision the filters select, across pages, as CSV or
JSON Lines, never with context, and never a cell a spreadsheet would run."""

from __future__ import annotations

import csv
import io
import json
from datetime import UTC, datetime, timedelta

from tests.harness import bearer, gateway_client, running
from tests.integration.decisions.memory_support import connect, insert_rows, unit_vector

SECRET = "+91-98450-12345"
# More than one page of the listing's largest (200), so the export must follow cursors.
COUNT = 450
EXPORT = "/admin/ai/decisions/export"


async def _seed(template, database) -> list[str]:
    start = datetime.now(UTC) - timedelta(days=2)
    rows = [
        {
            "embedding": unit_vector(i),
            "decided_at": start + timedelta(minutes=i),
            "agent_id": "DISPATCH_AGENT" if i % 3 == 0 else "EXCEPTION_AGENT",
            "subject_id": '=HYPERLINK("http://evil.example")' if i == 7 else f"booking-{i}",
            "outcome": ("success", "failure", None)[i % 3],
            "context": f'{{"rider": {{"phone": "{SECRET}"}}}}',
        }
        for i in range(COUNT)
    ]
    conn = await connect(template, database)
    try:
        return [str(i) for i in await insert_rows(conn, rows)]
    finally:
        await conn.close()


async def test_the_export_holds_every_selected_decision_across_pages(settings, template, database):
    ids = await _seed(template, database)
    async with running(settings, ["decisions"]), gateway_client(settings) as client:
        as_csv = await client.get(EXPORT, headers=bearer(role=4))
        as_lines = await client.get(
            EXPORT, params={"format": "jsonl", "agent_id": "DISPATCH_AGENT"}, headers=bearer(role=3)
        )
        listed = await client.get(
            "/admin/ai/decisions", params={"agent_id": "DISPATCH_AGENT", "limit": 200}, headers=bearer(role=3)
        )

    assert as_csv.status_code == 200, as_csv.text
    assert as_csv.headers["content-type"].startswith("text/csv")
    assert as_csv.headers["content-disposition"].startswith('attachment; filename="decisions-')
    assert SECRET not in as_csv.text and "phone" not in as_csv.text
    rows = list(csv.DictReader(io.StringIO(as_csv.text)))
    assert len(rows) == COUNT and {row["id"] for row in rows} == set(ids)
    stamps = [row["decided_at"] for row in rows]
    assert stamps == sorted(stamps, reverse=True)
    assert {row["outcome"] for row in rows} == {"success", "failure", ""}
    # A subject an engine sent as a formula stays text.
    assert '\'=HYPERLINK("http://evil.example")' in {row["subject_id"] for row in rows}
    assert all(not cell.startswith(("=", "+", "-", "@")) for row in rows for cell in row.values())

    assert as_lines.status_code == 200, as_lines.text
    assert as_lines.headers["content-type"].startswith("application/x-ndjson")
    decisions = [json.loads(line) for line in as_lines.text.splitlines()]
    assert len(decisions) == COUNT // 3 and {d["agent_id"] for d in decisions} == {"DISPATCH_AGENT"}
    # The same shape, item for item, as the listing's first page.
    assert decisions[:150] == listed.json()["items"][:150]


async def test_the_export_refuses_as_the_listing_does(settings, template, database):
    async with running(settings, ["decisions"]), gateway_client(settings) as client:
        tenant = await client.get(EXPORT, headers=bearer(role=1, tenant=7))
        stranger = await client.get(EXPORT, headers=bearer(role=2))
        anonymous = await client.get(EXPORT)
        bad_format = await client.get(EXPORT, params={"format": "xlsx"}, headers=bearer())
        bad_window = await client.get(
            EXPORT,
            params={"decided_from": "2026-03-02T10:00:00Z", "decided_to": "2026-03-01T10:00:00Z"},
            headers=bearer(),
        )
    assert (tenant.status_code, stranger.status_code, anonymous.status_code) == (403, 403, 401)
    assert bad_format.status_code == 422
    # Refused before the answer starts: a status and the envelope, not a file that stops short.
    assert bad_window.status_code == 422 and bad_window.json()["error"]["code"], bad_window.text


async def test_the_export_of_a_context_that_is_down_is_a_503_not_an_empty_file(settings, template, database):
    async with gateway_client(settings) as client:
        reply = await client.get(EXPORT, headers=bearer(role=4))
    assert reply.status_code == 503, reply.text
    assert reply.json()["error"]["code"]
