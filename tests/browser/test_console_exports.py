"""Exports from the console, in Chromium against the embedded stack with demo
data: on Runs, Audit and Decisions, either button saves every row the
filters on the page select, the same rows the API's export answers, and
says how many it saved."""

from __future__ import annotations

import asyncio
import csv
import io
import json
import re
from pathlib import Path

import httpx
from playwright.async_api import Page, expect

from tests.browser.conftest import Platform, pretty, screenshot, serious_violations
from tests.harness import bearer


async def exported(demo: Platform, path: str, **params: str) -> list[dict]:
    """What the API's export answers, as JSON Lines."""
    async with httpx.AsyncClient(base_url=demo.base) as client:
        reply = await client.get(path, params={**params, "format": "jsonl"}, headers=bearer(role=4))
    assert reply.status_code == 200, reply.text
    return [json.loads(line) for line in reply.text.splitlines()]


async def saved(page: Page, button: str, name: str) -> str:
    """Clicks an export button and answers the text of the file the browser saved."""
    async with page.expect_download() as started:
        await page.get_by_role("button", name=button).click()
    download = await started.value
    suffix = "csv" if button == "Export CSV" else "jsonl"
    assert re.fullmatch(rf"{name}-\d{{8}}T\d{{6}}Z\.{suffix}", download.suggested_filename), download.suggested_filename
    return await asyncio.to_thread(Path(await download.path()).read_text)


async def test_the_runs_page_exports_the_runs_its_filters_select(demo: Platform, page: Page, axe_source):
    expected = await exported(demo, "/admin/ai/runs/export", agent_id="DISPATCH_AGENT", status="failed")
    assert expected, "the demo fails some of the dispatch agent's runs"
    await page.goto(demo.link(role=3, path="/console/runs?agent_id=DISPATCH_AGENT&status=failed"))
    await expect(page.locator("tbody tr").first).to_be_visible()

    rows = list(csv.DictReader(io.StringIO(await saved(page, "Export CSV", "runs"))))
    assert [row["task_id"] for row in rows] == [run["task_id"] for run in expected]
    assert {row["status"] for row in rows} == {"failed"}
    await expect(page.get_by_role("status").filter(has_text="Exported")).to_contain_text(
        f"Exported {len(expected):,} runs"
    )
    await screenshot(page, "runs-exported")
    found = await serious_violations(page, axe_source)
    assert found == [], pretty(found)


async def test_the_audit_exports_every_change_as_json_lines(demo: Platform, page: Page, axe_source):
    # Three verdicts by one person, each audited; the reason is text from outside.
    async with httpx.AsyncClient(
        base_url=demo.base, headers=bearer(role=1, sub="u-exporter", email="exporter@example.com")
    ) as api:
        listed = await api.get("/admin/ai/decisions", params={"outcome": "success", "limit": 3})
        for decision in listed.json()["items"]:
            judged = await api.patch(
                f"/admin/ai/decisions/{decision['id']}/outcome",
                json={"outcome": "failure", "reason": '=HYPERLINK("http://evil.example") rider said "late"'},
            )
            assert judged.status_code == 200, judged.text
    expected = await exported(demo, "/admin/ai/audit/export", actor="exporter@example.com")
    assert len(expected) >= 3
    await page.goto(demo.link(role=3, path="/console/audit?actor=exporter%40example.com"))
    await expect(page.locator("tbody tr").first).to_be_visible()

    lines = [json.loads(line) for line in (await saved(page, "Export JSON Lines", "audit")).splitlines()]
    assert lines == expected
    await expect(page.get_by_role("status").filter(has_text="Exported")).to_contain_text(
        f"Exported {len(expected):,} changes"
    )
    # The same changes as CSV: no cell a spreadsheet would run.
    rows = list(csv.DictReader(io.StringIO(await saved(page, "Export CSV", "audit"))))
    assert [int(row["id"]) for row in rows] == [change["id"] for change in expected]
    assert all(not cell.startswith(("=", "+", "@")) for row in rows for cell in row.values())
    found = await serious_violations(page, axe_source)
    assert found == [], pretty(found)


async def test_decisions_export_as_json_lines_in_the_listings_shape(demo: Platform, page: Page):
    expected = await exported(demo, "/admin/ai/decisions/export", agent_id="EXCEPTION_AGENT")
    await page.goto(demo.link(path="/console/decisions?agent_id=EXCEPTION_AGENT"))
    await expect(page.locator("tbody tr").first).to_be_visible()

    lines = [json.loads(line) for line in (await saved(page, "Export JSON Lines", "decisions")).splitlines()]
    assert [d["id"] for d in lines] == [d["id"] for d in expected]
    assert all("context" not in d for d in lines)
    await expect(page.get_by_role("status").filter(has_text="Exported")).to_contain_text(
        f"Exported {len(expected):,} decisions"
    )
