"""States that help an operator read the console: agents by name beside their
ids, a decision's context redacted for role 1 (and no way to it for anyone
else), and what the badges mean; each page passing axe, light and dark, and
fitting a 390 px screen."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator

import httpx
import pytest
from playwright.async_api import Browser, Page, expect

from tests.browser.conftest import OPERATOR_ZONE, Platform, pretty, screenshot, serious_violations
from tests.harness import bearer

PHONE = {"width": 390, "height": 844}
# What a phone number, an e-mail address or an exact coordinate looks like in
# text: none may show in a redacted context.
PERSONAL = re.compile(r"\+91|\b\d{10}\b|[\w.+-]+@[\w-]+\.[\w.]+|-?\d{1,3}\.\d{4,}")


@pytest.fixture
async def phone(browser: Browser) -> AsyncIterator[Page]:
    context = await browser.new_context(viewport=PHONE, timezone_id=OPERATOR_ZONE, locale="en-GB")
    opened = await context.new_page()
    opened.set_default_timeout(15_000)
    try:
        yield opened
    finally:
        await context.close()


async def accessible(page: Page, axe_source: str) -> None:
    found = await serious_violations(page, axe_source)
    assert found == [], pretty(found)


async def fits(page: Page) -> None:
    width: int = await page.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"], width


async def api_get(demo: Platform, path: str, **params: str) -> dict:
    async with httpx.AsyncClient(base_url=demo.base) as client:
        reply = await client.get(path, params=params, headers=bearer(role=4))
    assert reply.status_code == 200, reply.text
    answer: dict = reply.json()
    return answer


async def named_decision(demo: Platform) -> tuple[dict, str]:
    """The newest decision and the registry's name of its agent."""
    [decision] = (await api_get(demo, "/admin/ai/decisions", limit="1"))["items"]
    names = {agent["id"]: agent["name"] for agent in (await api_get(demo, "/admin/ai/agents"))["items"]}
    assert names.get(decision["agent_id"], decision["agent_id"]) != decision["agent_id"], "the demo names its agents"
    return decision, names[decision["agent_id"]]


async def test_agents_show_by_name_beside_their_ids(demo: Platform, page: Page, phone: Page, axe_source):
    decision, name = await named_decision(demo)

    await page.goto(demo.link(role=3, path="/console/decisions"))
    first = page.locator("tbody tr").first.locator(".agent-ref")
    await expect(first).to_contain_text(name)
    await expect(first.locator("code")).to_have_text(decision["agent_id"])

    await page.goto(demo.link(role=3, path=f"/console/decisions/{decision['id']}"))
    agent = page.locator(".facts .agent-ref")
    await expect(agent).to_have_text(f"{name} {decision['agent_id']}")
    await expect(agent.get_by_role("link")).to_have_attribute("href", f"/console/agents/{decision['agent_id']}")
    await accessible(page, axe_source)

    [run] = (await api_get(demo, "/admin/ai/runs", limit="1"))["items"]
    runs_names = {a["id"]: a["name"] for a in (await api_get(demo, "/admin/ai/agents"))["items"]}
    await phone.goto(demo.link(role=3, path="/console/runs"))
    run_agent = phone.locator("tbody tr").first.locator(".agent-ref")
    await expect(run_agent.locator("code")).to_have_text(run["agent_id"])
    if run["agent_id"] in runs_names:
        await expect(run_agent).to_contain_text(runs_names[run["agent_id"]])
    await fits(phone)
    await screenshot(phone, "states-runs-names")


async def test_role_1_reads_a_decisions_context_redacted_and_each_read_is_audited(
    demo: Platform, page: Page, phone: Page, axe_source
):
    decision, _ = await named_decision(demo)
    path = f"/console/decisions/{decision['id']}"
    before = await api_get(demo, "/admin/ai/audit", entity="decision", entity_id=decision["id"])

    await page.goto(demo.link(role=1, sub="u-dpo", email="dpo@example.com", path=path))
    show = page.get_by_role("button", name="Show redacted context")
    await expect(show).to_be_visible()
    # Nothing is read until asked: every read is an audit row.
    assert await page.locator(".context-json").count() == 0
    await show.click()
    shown = page.locator(".context-json")
    await expect(shown).to_be_visible()
    await expect(page.locator(".redaction-note")).to_have_text(re.compile(r"^(Replaced: .+|Nothing in it .+)\.$"))
    text = await shown.inner_text()
    redacted = (await api_get_as_writer(demo, f"/admin/ai/decisions/{decision['id']}/context"))["context"]
    assert text.strip() and PERSONAL.search(text) is None, text
    assert all(key in text for key in redacted), (text, redacted)
    await screenshot(page, "states-redacted-context")
    await accessible(page, axe_source)

    after = await api_get(demo, "/admin/ai/audit", entity="decision", entity_id=decision["id"])
    reads = [row for row in after["items"] if row["field"] == "context_read"]
    assert len(reads) == len([r for r in before["items"] if r["field"] == "context_read"]) + 2
    assert {row["changed_by_email"] for row in reads} == {"dpo@example.com"}

    await phone.goto(demo.link(role=1, path=path))
    await phone.get_by_role("button", name="Show redacted context").click()
    await expect(phone.locator(".context-json")).to_be_visible()
    await fits(phone)
    await screenshot(phone, "states-redacted-context-phone")

    for role in (3, 4):
        # A fresh load, so the new sign-in link is read (a hash change alone is not a load).
        await page.goto("about:blank")
        await page.goto(demo.link(role=role, path=path))
        await expect(page.get_by_role("button", name="Judge it yourself")).to_have_count(0)
        await expect(page.locator("#rejudge-heading")).to_have_count(0)
        await expect(page.locator("#decision-heading")).to_be_visible()
        await expect(page.get_by_role("button", name="Show redacted context")).to_have_count(0)
        await expect(page.locator("#context-heading")).to_have_count(0)


async def api_get_as_writer(demo: Platform, path: str) -> dict:
    async with httpx.AsyncClient(base_url=demo.base) as client:
        reply = await client.get(path, headers=bearer(role=1, sub="u-dpo", email="dpo@example.com"))
    assert reply.status_code == 200, reply.text
    answer: dict = reply.json()
    return answer


async def test_a_legend_says_what_the_badges_mean(demo: Platform, phone: Page, axe_source):
    await phone.goto(demo.link(role=3, path="/console/agents"))
    legend = phone.locator("details.badge-legend")
    await expect(legend.locator("summary")).to_have_text("What the badges mean")
    await expect(legend.locator(".badge-legend-list").first).to_be_hidden()
    await legend.locator("summary").click()
    for badge, meaning in (
        ("live", "Runs for real and acts on real bookings"),
        ("simulation", "Runs on invented data; nothing it shows is real"),
        ("retired", "No longer runs"),
        ("silent", "Nothing reported for a while: it may have stopped"),
    ):
        row = legend.locator(".badge-legend-row", has=phone.locator(".badge", has_text=re.compile(f"^{badge}$")))
        await expect(row.locator("dd")).to_have_text(meaning)
    await fits(phone)
    await screenshot(phone, "states-legend-agents")
    await accessible(phone, axe_source)

    await phone.goto(demo.link(role=3, path="/console/decisions"))
    legend = phone.locator("details.badge-legend")
    await legend.locator("summary").click()
    outcomes = legend.locator(".badge-legend-row .badge")
    await expect(outcomes).to_have_text(["success", "failure", "unknown", "pending"])
    await fits(phone)
    await accessible(phone, axe_source)


async def test_the_new_states_pass_axe_in_dark_mode(demo: Platform, browser: Browser, axe_source):
    decision, _ = await named_decision(demo)
    context = await browser.new_context(
        viewport={"width": 1360, "height": 900}, timezone_id=OPERATOR_ZONE, locale="en-GB", color_scheme="dark"
    )
    dark = await context.new_page()
    dark.set_default_timeout(15_000)
    try:
        found = {}
        await dark.goto(demo.link(role=1, path=f"/console/decisions/{decision['id']}"))
        await dark.get_by_role("button", name="Show redacted context").click()
        await expect(dark.locator(".context-json")).to_be_visible()
        await screenshot(dark, "states-dark-context")
        found["context"] = await serious_violations(dark, axe_source)
        for path in ("/console/agents", "/console/decisions"):
            await dark.goto(demo.link(role=1, path=path))
            await dark.locator("details.badge-legend summary").click()
            await expect(dark.locator(".badge-legend-list").first).to_be_visible()
            await screenshot(dark, "states-dark-legend" + path.replace("/console", "").replace("/", "-"))
            found[path] = await serious_violations(dark, axe_source)
        assert {where: v for where, v in found.items() if v} == {}, pretty([found])
    finally:
        await context.close()
