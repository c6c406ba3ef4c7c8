"""The evidence before a switch and the alerts (DESIGN §10) in the console, in
Chromium against the embedded stack with demo data: decisions recorded with
the router's propensity and how their action was carried out give the
estimates beside the model pin and the evidence beside the autonomy switch;
a drop in judged success, evaluated by the platform's alerter, shows on the
Alerts page and as the header badge. Every view passes axe-core, wide and at
390 px."""

from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime, timedelta

from playwright.async_api import Page, expect

from outrider.v1 import decisions_pb2, decisions_pb2_grpc, registry_pb2_grpc, telemetry_pb2_grpc
from outrider.wire import timestamp
from services.common.clients import ContextClients
from services.common.db import context_engine
from services.outcomes.alerting.job import Alerter
from services.outcomes.alerting.signals import SignalSources
from services.outcomes.rules.alerts import Thresholds
from tests.browser.conftest import Platform, pretty, screenshot, serious_violations
from tests.harness import engine_channel

AGENT = "DISPATCH_AGENT"
NARROW = {"width": 390, "height": 844}


async def accessible(page: Page, axe_source: str) -> None:
    found = await serious_violations(page, axe_source)
    assert found == [], pretty(found)


async def fits(page: Page) -> None:
    overflow = await page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    # The elements past the right edge, outside the tables that scroll in their own wrap.
    wide = await page.evaluate(
        "[...document.querySelectorAll('body *')].filter(e => !e.closest('.table-wrap')"
        " && e.getBoundingClientRect().right > document.documentElement.clientWidth + 2"
        " && [...e.children].every(c => c.getBoundingClientRect().right <= document.documentElement.clientWidth + 2))"
        ".slice(0, 12).map(e => e.tagName + '.' + e.className)"
    )
    assert overflow <= 0, f"the page is {overflow} px wider than the screen: {wide}"


async def record(
    demo: Platform, decision_type: str, plan: list[tuple[str, float | None, str, int, int]], *, start: datetime
) -> None:
    """Judged decisions as an engine records them: (model, propensity,
    execution, successes, failures), decided a minute apart from `start`."""
    requests, verdicts = [], []
    for model, propensity, execution, successes, failures in plan:
        for outcome in ["success"] * successes + ["failure"] * failures:
            requests.append(
                decisions_pb2.RecordDecisionRequest(
                    id=str(uuid.uuid4()),
                    decision_type=decision_type,
                    agent_id=AGENT,
                    subject_id=f"BK-{len(requests)}",
                    action="widen_radius",
                    confidence=0.7,
                    model=model,
                    model_propensity=propensity,
                    execution=execution,
                    decided_at=timestamp(start + timedelta(minutes=len(requests))),
                )
            )
            verdicts.append(outcome)
    async with engine_channel(demo.settings, "decisions") as channel:
        stub = decisions_pb2_grpc.DecisionsStub(channel)
        await stub.RecordDecisions(decisions_pb2.RecordDecisionsRequest(decisions=requests))
        for request, outcome in zip(requests, verdicts, strict=True):
            await stub.SetOutcome(decisions_pb2.SetOutcomeRequest(id=request.id, outcome=outcome))


async def test_the_estimates_and_the_autonomy_evidence_show_beside_the_switches(demo: Platform, page: Page, axe_source):
    decision_type = "evidence_check"
    # Propensity 0.5 for every pick: the weights are equal, so each model's
    # estimate is its own judged rate and its effective size its count.
    await record(
        demo,
        decision_type,
        [("claude-opus-5-5", 0.5, "confirmed", 40, 20), ("claude-sonnet-5-5", 0.5, "overridden", 12, 18)],
        start=datetime.now(UTC) - timedelta(days=1),
    )
    await page.goto(demo.link(path=f"/console/agents/{AGENT}"))
    config = page.get_by_role("region", name="Configuration")
    await config.get_by_label("Decision type to estimate").fill(decision_type)
    estimates = config.get_by_role("region", name=re.compile("^Estimates per model"))
    opus = estimates.get_by_role("row", name=re.compile("^claude-opus-5-5"))
    await expect(opus).to_contain_text("66.7 % (")
    await expect(opus).to_contain_text("60 of 90 judged decisions with a propensity went to claude-opus-5-5")
    await expect(opus.locator("td.num")).to_have_text(["60", "60.0"])
    sonnet = estimates.get_by_role("row", name=re.compile("^claude-sonnet-5-5"))
    await expect(sonnet).to_contain_text("40.0 % (")
    await expect(sonnet.locator("td.num")).to_have_text(["30", "30.0"])
    unpicked = estimates.get_by_role("row", name=re.compile("^claude-haiku-4-5"))
    await expect(unpicked).to_contain_text("No estimate: 0 judged decisions with a propensity went to claude-haiku-4-5")
    logged = "Logged policy: 57.8 % over 90 judged of 90 decisions (90 with a propensity)"
    await expect(estimates).to_contain_text(logged)

    await config.get_by_label("Decision type", exact=True).fill(decision_type)
    evidence = config.get_by_role("region", name=re.compile("^Judged success per execution"))
    await expect(evidence.get_by_role("row", name=re.compile("^Confirmed by a person"))).to_contain_text("66.7 % (")
    await expect(evidence.get_by_role("row", name=re.compile("^Overridden by a person"))).to_contain_text("40.0 % (")
    await expect(evidence.get_by_role("row", name=re.compile("^Acted alone"))).to_contain_text("—")
    await expect(config).to_contain_text("Agreement: 66.7 % of confirmed or overridden actions were confirmed.")
    # 90 confirmed or overridden decisions are fewer than the rule asks for.
    recommendation = config.locator(".recommendation")
    await expect(recommendation.locator(".badge")).to_have_text("Not enough evidence")
    await expect(recommendation).to_contain_text("90 judged confirmed or overridden decisions")
    await screenshot(page, "evidence")
    await accessible(page, axe_source)
    await page.set_viewport_size(NARROW)
    await screenshot(page, "evidence-narrow")
    await accessible(page, axe_source)
    await fits(page)


async def test_a_drop_in_judged_success_shows_on_the_alerts_page_and_in_the_header(
    demo: Platform, page: Page, axe_source
):
    decision_type = "drop_check"
    window = demo.settings.alert_window
    # A window at 90 % judged success, then one at 40 %: a drop of 0.5.
    steady, fallen = round(window * 0.9), round(window * 0.4)
    await record(
        demo,
        decision_type,
        [
            ("claude-opus-5-5", None, "", steady, window - steady),
            ("claude-opus-5-5", None, "", fallen, window - fallen),
        ],
        start=datetime.now(UTC) - timedelta(minutes=3 * window),
    )
    # One pass of the platform's alerter, as its timer runs it.
    clients = ContextClients(demo.settings)
    engine = context_engine(demo.settings.database_url, "outcomes")
    try:
        sources = SignalSources(
            decisions=clients.stub("decisions", decisions_pb2_grpc.DecisionsStub),
            telemetry=clients.stub("telemetry", telemetry_pb2_grpc.TelemetryStub),
            registry=clients.stub("registry", registry_pb2_grpc.RegistryStub),
            window=window,
        )
        thresholds = Thresholds(
            min_drop=demo.settings.alert_min_drop, silent_after=timedelta(seconds=demo.settings.alert_silent_after_s)
        )
        await Alerter(engine=engine, sources=sources, thresholds=thresholds).evaluate()
    finally:
        await engine.dispose()
        await clients.close()

    await page.goto(demo.link(path="/console/agents"))
    badge = page.get_by_role("link", name=re.compile(r"^\d+ alerts? firing$"))
    await expect(badge).to_be_visible()
    await badge.click()
    await expect(page.get_by_role("heading", name="Alerts", level=1)).to_be_visible()
    firing = page.locator("section", has=page.get_by_role("heading", name="Firing"))
    drop = firing.locator("li", has_text=f"{AGENT} × {decision_type}")
    await expect(drop).to_contain_text("Judged success dropped")
    await expect(drop).to_contain_text("fell from 90% to 40%")
    await expect(drop).to_contain_text(f"50.0 % (threshold {demo.settings.alert_min_drop * 100:.1f} %)")
    await expect(drop).to_contain_text("not yet")
    await expect(drop.get_by_role("link", name=f"Decisions of {decision_type}")).to_have_attribute(
        "href", f"/console/decisions?decision_type={decision_type}&agent_id={AGENT}"
    )
    await screenshot(page, "alerts")
    await accessible(page, axe_source)
    await page.set_viewport_size(NARROW)
    await screenshot(page, "alerts-narrow")
    await accessible(page, axe_source)
    await fits(page)
    await drop.get_by_role("link", name=f"Agent {AGENT} in Agent Studio").click()
    await expect(page).to_have_url(re.compile(f"/console/agents/{AGENT}$"))
