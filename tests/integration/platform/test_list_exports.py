"""The run list's and the audit's exports through REST, with real Postgres
behind them: every row the filters select, across pages, as CSV or JSON
Lines, in the listing's own order and shape; values from outside never
become a formula, whatever JSON an audit row holds; refused as the listing
refuses."""

from __future__ import annotations

import csv
import io
import json

import pytest

from tests.harness import bearer, gateway_client, running
from tests.integration.registry.helpers import registry_db
from tests.integration.telemetry.support import execute

# More than one page of the listings' largest (200), so an export must follow cursors.
COUNT = 450
FORMULA = '=HYPERLINK("http://evil.example")'
# An audit row's old and new values are whatever was changed: every JSON type.
CHANGED = [None, True, 3, -2.5, "On", FORMULA, [1, "two"], {"min": 0.4, "nested": {"k": [None]}}]


async def _seed_runs(template, database) -> None:
    await execute(
        template,
        database,
        "insert into runs (agent_id, task_id, task_type, status, started_at, finished_at, duration_ms, error)"
        " select case when n % 3 = 0 then 'DISPATCH_AGENT' else 'EXCEPTION_AGENT' end, 't-' || n, 'stall_response',"
        " case when n % 5 = 0 then 'failed' else 'succeeded' end,"
        " now() - make_interval(mins => n), now() - make_interval(mins => n) + interval '2 seconds', 2000 + n,"
        " case when n = 7 then $1 when n % 5 = 0 then 'upstream timeout' else '' end"
        " from generate_series(1, $2) as n",
        FORMULA,
        COUNT,
    )


async def test_the_run_export_holds_every_selected_run_across_pages(settings, template, database):
    await _seed_runs(template, database)
    async with running(settings, ["telemetry"]), gateway_client(settings) as client:
        as_csv = await client.get("/admin/ai/runs/export", headers=bearer(role=4))
        as_lines = await client.get(
            "/admin/ai/runs/export", params={"format": "jsonl", "agent_id": "DISPATCH_AGENT"}, headers=bearer(role=3)
        )
        listed = await client.get(
            "/admin/ai/runs", params={"agent_id": "DISPATCH_AGENT", "limit": 200}, headers=bearer(role=3)
        )
        failed = await client.get("/admin/ai/runs/export", params={"status": "failed"}, headers=bearer(role=3))

    assert as_csv.status_code == 200, as_csv.text
    assert as_csv.headers["content-type"].startswith("text/csv")
    assert as_csv.headers["content-disposition"].startswith('attachment; filename="runs-')
    rows = list(csv.DictReader(io.StringIO(as_csv.text)))
    assert len(rows) == COUNT and {row["task_id"] for row in rows} == {f"t-{n}" for n in range(1, COUNT + 1)}
    stamps = [row["started_at"] for row in rows]
    assert stamps == sorted(stamps, reverse=True)
    assert f"'{FORMULA}" in {row["error"] for row in rows}
    assert all(not cell.startswith(("=", "+", "-", "@")) for row in rows for cell in row.values())

    assert as_lines.status_code == 200, as_lines.text
    assert as_lines.headers["content-type"].startswith("application/x-ndjson")
    runs = [json.loads(line) for line in as_lines.text.splitlines()]
    assert len(runs) == COUNT // 3 and {r["agent_id"] for r in runs} == {"DISPATCH_AGENT"}
    assert runs == listed.json()["items"]

    assert {row["status"] for row in csv.DictReader(io.StringIO(failed.text))} == {"failed"}
    assert len(list(csv.DictReader(io.StringIO(failed.text)))) == COUNT // 5


async def _seed_audit(template, database) -> None:
    async with registry_db(template, database) as conn:
        await conn.executemany(
            "insert into audit (entity, entity_id, field, old, new, changed_by, changed_by_email, changed_at)"
            " values ('skill', $1, 'threshold', $2, $3, $4, $5, now() - make_interval(mins => $6))",
            [
                (
                    "route_optimizer" if n % 2 else "assignment_failure",
                    CHANGED[n % len(CHANGED)],
                    CHANGED[(n + 1) % len(CHANGED)],
                    "u-lead" if n % 4 == 0 else "u-ops",
                    "lead@example.com" if n % 4 == 0 else "ops@example.com",
                    n,
                )
                for n in range(COUNT)
            ],
        )


async def test_the_audit_export_holds_every_change_and_any_json_it_held(settings, template, database):
    await _seed_audit(template, database)
    async with running(settings, ["registry"]), gateway_client(settings) as client:
        as_csv = await client.get("/admin/ai/audit/export", headers=bearer(role=4))
        as_lines = await client.get(
            "/admin/ai/audit/export", params={"format": "jsonl", "actor": "lead@example.com"}, headers=bearer(role=3)
        )
        listed = await client.get(
            "/admin/ai/audit", params={"actor": "lead@example.com", "limit": 200}, headers=bearer(role=3)
        )

    assert as_csv.status_code == 200, as_csv.text
    assert as_csv.headers["content-disposition"].startswith('attachment; filename="audit-')
    rows = list(csv.DictReader(io.StringIO(as_csv.text)))
    assert len(rows) == COUNT
    ids = [int(row["id"]) for row in rows]
    assert ids == sorted(ids, reverse=True)
    assert all(not cell.startswith(("=", "+", "@")) for row in rows for cell in row.values())
    # Each changed value reads back: an object or a list as its JSON, text as itself.
    olds = {row["old"] for row in rows}
    assert {"", "true", "3", "-2.5", "On", f"'{FORMULA}", '[1,"two"]', '{"min":0.4,"nested":{"k":[null]}}'} == olds

    assert as_lines.status_code == 200, as_lines.text
    changes = [json.loads(line) for line in as_lines.text.splitlines()]
    assert len(changes) == len(range(0, COUNT, 4)) and {c["changed_by_email"] for c in changes} == {"lead@example.com"}
    assert changes == listed.json()["items"]
    assert {json.dumps(c["old"], sort_keys=True) for c in changes} <= {json.dumps(v, sort_keys=True) for v in CHANGED}


@pytest.mark.parametrize("path", ["/admin/ai/runs/export", "/admin/ai/audit/export"])
async def test_an_export_refuses_as_its_listing_does(settings, path):
    async with running(settings, ["registry", "telemetry"]), gateway_client(settings) as client:
        tenant = await client.get(path, headers=bearer(role=1, tenant=7))
        stranger = await client.get(path, headers=bearer(role=2))
        anonymous = await client.get(path)
        bad_format = await client.get(path, params={"format": "xlsx"}, headers=bearer())
        backwards = await client.get(
            path, params={"from": "2026-03-02T10:00:00Z", "to": "2026-03-01T10:00:00Z"}, headers=bearer()
        )
    assert (tenant.status_code, stranger.status_code, anonymous.status_code) == (403, 403, 401)
    assert bad_format.status_code == 422 and "format" in bad_format.json()["error"]["details"]["fields"]
    assert backwards.status_code == 422, backwards.text
