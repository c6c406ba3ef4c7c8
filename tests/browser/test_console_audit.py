"""The audit log and the links between views, in Chromium against the
embedded stack with demo data: a threshold changed in Agent Studio reads as
one diff line in the audit and links back to its agent; an outcome count on
Insights opens the Decisions list filtered to it; the audit page passes
axe-core, wide and at 390 px."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from urllib.parse import parse_qs, urlparse

import httpx
from playwright.async_api import Page, expect

from tests.browser.conftest import Platform, pretty, screenshot, serious_violations
from tests.harness import bearer


async def accessible(page: Page, axe_source: str) -> None:
    found = await serious_violations(page, axe_source)
    assert found == [], pretty(found)


async def no_sideways_scroll(page: Page) -> None:
    width = await page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, f"the page is {width} px wide at 390 px"


async def test_a_threshold_change_reads_as_one_diff_line_and_links_back_to_its_agent(
    demo: Platform, page: Page, axe_source
):
    await page.goto(demo.link(email="lead@example.com", path="/console/agents/EXCEPTION_AGENT"))
    field = page.get_by_label("stallMinutes")
    before = await field.input_value()
    after = "17" if before != "17" else "18"
    await field.fill(after)
    await page.get_by_role("button", name="Save thresholds").click()
    await expect(page.get_by_role("status").filter(has_text="Saved as version")).to_be_visible()

    # The studio's own link opens this agent's audit; the threshold is its skill's.
    views = page.get_by_role("navigation", name=re.compile("^Views of "))
    await expect(views.get_by_role("link", name="Audit")).to_have_attribute(
        "href", re.compile(r"/console/audit\?entity=agent&entity_id=EXCEPTION_AGENT$")
    )
    await page.goto(demo.link(email="lead@example.com", path="/console/audit?entity=skill&entity_id=stall_response"))
    row = page.get_by_role("row").filter(has_text="thresholds.stallMinutes").first
    await expect(row).to_contain_text(f"thresholds.stallMinutes {before} → {after}")
    # Changed keys only: the threshold left alone is not listed.
    await expect(row).not_to_contain_text("reassignConfidence")
    await expect(row).to_contain_text("lead@example.com")
    await screenshot(page, "audit")
    await accessible(page, axe_source)

    await row.get_by_role("link", name="stall_response").click()
    await expect(page).to_have_url(re.compile(r"/console/agents/EXCEPTION_AGENT$"))
    await expect(page.get_by_label("stallMinutes")).to_have_value(after)


async def test_the_audit_filters_live_in_the_url_and_a_verdict_links_to_its_decision(
    demo: Platform, page: Page, axe_source
):
    async with httpx.AsyncClient(
        base_url=demo.base, headers=bearer(role=1, sub="u-judge", email="judge@example.com")
    ) as api:
        listed = await api.get("/admin/ai/decisions", params={"outcome": "success", "limit": 1})
        [decision] = listed.json()["items"]
        judged = await api.patch(
            f"/admin/ai/decisions/{decision['id']}/outcome", json={"outcome": "failure", "reason": "came back damaged"}
        )
        assert judged.status_code == 200, judged.text

    await page.goto(demo.link(path="/console/audit"))
    await page.get_by_label("Entity", exact=True).select_option("decision")
    await page.get_by_label("Changed by (email or id)").fill("judge@example.com")
    await page.get_by_role("button", name="Apply filters").click()
    await expect(page).to_have_url(re.compile(r"entity=decision&actor=judge%40example\.com"))
    row = page.get_by_role("row").filter(has_text="verdict.outcome")
    await expect(row).to_have_count(1)
    await expect(row).to_contain_text("verdict.outcome success → failure")
    await expect(row).to_contain_text("verdict.reason — → came back damaged")

    # A time range that ends before it starts is named, and nothing is asked.
    await page.get_by_label("Changed from").fill("2026-03-02 10:00")
    await page.get_by_label("Changed before").fill("2026-03-01 10:00")
    await page.get_by_role("button", name="Apply filters").click()
    await expect(page.get_by_role("alert")).to_contain_text("must be later than")
    await page.get_by_label("Changed from").fill("")
    await page.get_by_label("Changed before").fill("")
    await page.get_by_role("button", name="Apply filters").click()
    await expect(row).to_have_count(1)

    await page.set_viewport_size({"width": 390, "height": 844})
    await screenshot(page, "audit-narrow")
    await accessible(page, axe_source)
    await no_sideways_scroll(page)

    await row.get_by_role("link", name=decision["id"]).click()
    await expect(page).to_have_url(re.compile(rf"/console/decisions/{decision['id']}$"))
    await expect(page.get_by_role("heading", name=re.compile("failure$"))).to_be_visible()


async def test_an_outcome_count_on_insights_opens_the_decisions_it_counts(demo: Platform, page: Page, axe_source):
    await page.goto(demo.link(path="/console/insights?days=7"))
    grid = page.locator("section", has=page.get_by_role("heading", name="Decisions by type and outcome"))
    count = grid.get_by_role("link", name=re.compile(r"decisions success: open them$")).first
    await expect(count).to_be_visible()
    label = await count.get_attribute("aria-label") or ""
    decision_type = label.split(" ")[1]
    await count.click()

    await expect(page).to_have_url(re.compile(r"/console/decisions\?"))
    asked = parse_qs(urlparse(page.url).query)
    assert asked["decision_type"] == [decision_type] and asked["outcome"] == ["success"], page.url
    assert "from" in asked, page.url
    await expect(page.get_by_label("Type")).to_have_value(decision_type)
    await expect(page.get_by_label("Outcome")).to_have_value("success")
    rows = page.locator("tbody tr")
    await expect(rows.first).to_be_visible()
    types = await rows.locator("td:nth-child(2)").all_inner_texts()
    outcomes = await rows.locator("td:nth-child(8)").all_inner_texts()
    assert types and set(types) == {decision_type}, types
    assert {text.strip() for text in outcomes} == {"success"}, outcomes
    await screenshot(page, "insights-to-decisions")
    await accessible(page, axe_source)


async def test_agent_studio_links_to_its_decisions_runs_insights_routing_and_audit_and_a_precedent_to_its_subject(
    demo: Platform, page: Page
):
    await page.goto(demo.link(path="/console/agents/EXCEPTION_AGENT"))
    views = page.get_by_role("navigation", name=re.compile("^Views of "))
    await views.get_by_role("link", name="Decisions").click()
    await expect(page).to_have_url(re.compile(r"/console/decisions\?agent_id=EXCEPTION_AGENT$"))
    await expect(page.get_by_label("Agent")).to_have_value("EXCEPTION_AGENT")
    await page.go_back()
    await views.get_by_role("link", name="Runs").click()
    await expect(page).to_have_url(re.compile(r"/console/runs\?agent_id=EXCEPTION_AGENT$"))
    await expect(page.get_by_label("Agent")).to_have_value("EXCEPTION_AGENT")
    await page.go_back()
    await views.get_by_role("link", name="Insights").click()
    await expect(page).to_have_url(re.compile(r"/console/insights\?agent=EXCEPTION_AGENT$"))
    # Its own runs and latency are drawn, under its name.
    await expect(page.get_by_label("Runs and latency of")).to_have_value("EXCEPTION_AGENT")
    chosen = page.locator("#chart-agent option:checked")
    await expect(chosen).to_have_text(re.compile(r"^\S.* \(EXCEPTION_AGENT\)$"))
    agents_table = page.locator("section[aria-labelledby=agents-runs] table")
    await expect(agents_table.get_by_role("link", name=re.compile(r"^\S.* EXCEPTION_AGENT$")).first).to_have_attribute(
        "href", "/console/agents/EXCEPTION_AGENT"
    )
    await screenshot(page, "insights-of-an-agent")
    await page.go_back()
    await views.get_by_role("link", name="Routing").click()
    await expect(page).to_have_url(re.compile(r"/console/routing\?decision_type=stall_response$"))
    await expect(page.get_by_label("Decision type")).to_have_value("stall_response")
    # And back: Routing names the agent whose skill it is, linked to its studio.
    owner = page.locator(".routing-owner")
    await expect(owner).to_contain_text("Used by")
    await expect(owner.get_by_role("link", name=re.compile(r"EXCEPTION_AGENT$"))).to_have_attribute(
        "href", "/console/agents/EXCEPTION_AGENT"
    )
    await page.go_back()
    # A skill's changes are audited under the skill: its history links there.
    skill = page.locator("article.skill", has=page.locator("code", has_text=re.compile("^stall_response$")))
    await skill.get_by_text("Recent changes").click()
    await skill.get_by_role("link", name="Every change to this skill in the audit").click()
    await expect(page).to_have_url(re.compile(r"/console/audit\?entity=skill&entity_id=stall_response$"))

    async with httpx.AsyncClient(base_url=demo.base, headers=bearer(role=3)) as api:
        listed = await api.get("/admin/ai/decisions", params={"decision_type": "stall_response", "limit": 50})
        ids = [item["id"] for item in listed.json()["items"]]
        with_precedents = []
        for decision_id in ids:
            detail = (await api.get(f"/admin/ai/decisions/{decision_id}")).json()
            if detail["precedents"]:
                with_precedents.append(detail)
                break
    assert with_precedents, "the demo holds no stall_response decision with a precedent"
    [detail] = with_precedents
    precedent = detail["precedents"][0]
    await page.goto(demo.link(path=f"/console/decisions/{detail['id']}"))
    precedents = page.locator("section", has=page.get_by_role("heading", name="Precedents"))
    await precedents.get_by_role("link", name=precedent["subject_id"], exact=True).first.click()
    await expect(page).to_have_url(re.compile(r"/console/decisions\?subject_id="))
    await expect(page.get_by_label("Subject")).to_have_value(precedent["subject_id"])
    async with httpx.AsyncClient(base_url=demo.base, headers=bearer(role=3)) as api:
        about = await api.get("/admin/ai/decisions", params={"subject_id": precedent["subject_id"], "limit": 25})
    about_the_subject = len(about.json()["items"])
    assert about_the_subject >= 1
    # The listing keeps the previous page on screen while the filtered one loads: wait for the filtered rows.
    await expect(page.locator("tbody tr td:nth-child(4)")).to_have_text([precedent["subject_id"]] * about_the_subject)


async def test_a_rollout_is_found_in_the_audit_by_when_it_started_and_opens_from_its_row(
    demo: Platform, page: Page, axe_source
):
    before = datetime.now(UTC) - timedelta(seconds=5)
    async with httpx.AsyncClient(
        base_url=demo.base, headers=bearer(role=1, sub="u-roller", email="roller@example.com")
    ) as api:
        created = await api.post(
            "/admin/ai/rollouts",
            json={
                "agent_id": "DISPATCH_AGENT",
                "decision_type": "audited_rollout",
                "change": {"model": "claude-opus-4-7"},
            },
        )
    assert created.status_code == 201, created.text
    rollout_id = created.json()["id"]
    since = before.isoformat().replace("+00:00", "Z")

    await page.goto(demo.link(path=f"/console/audit?entity=rollout&from={since}"))
    rows = page.get_by_role("row").filter(has=page.get_by_role("link", name=rollout_id))
    await expect(rows.filter(has_text="created")).to_have_count(1)
    await expect(rows.first).to_contain_text("roller@example.com")
    await expect(page.get_by_label("Changed from")).not_to_have_value("")
    await screenshot(page, "audit-rollout-by-time")
    await accessible(page, axe_source)

    # Up to a moment before it started, it is not there.
    await page.goto(demo.link(path=f"/console/audit?entity=rollout&to={since}"))
    await expect(page.locator("main table, main .state-empty").first).to_be_visible()
    await expect(page.get_by_role("link", name=rollout_id)).to_have_count(0)

    await page.goto(demo.link(path=f"/console/audit?entity=rollout&from={since}"))
    await rows.filter(has_text="created").get_by_role("link", name=rollout_id).click()
    await expect(page).to_have_url(re.compile(rf"/console/rollouts/{rollout_id}$"))
    await expect(page.get_by_role("heading", name=re.compile("→ claude-opus-4-7"))).to_be_visible()
