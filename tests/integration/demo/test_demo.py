"""The demo end to end against the embedded stack: it must hold every claim it
prints (decisions judged, precedents judged only, routing preferring the
better model, insights filled)."""

from __future__ import annotations

from gateway.auth import issue_token
from launcher.demo.fleet import STRONG_MODEL, WEAK_MODEL, DemoTarget, render, run_fleet
from services.common.settings import CONTEXTS
from tests.harness import INTERNAL_KEY, JWT_SECRET, NATS_ENGINE, bound_socket, running, serving_gateway, with_env


async def test_the_demo_shows_the_whole_loop(settings):
    sock = bound_socket()
    settings = with_env(settings, http_port=sock.getsockname()[1])
    lines: list[str] = []
    async with (
        running(settings, CONTEXTS),
        serving_gateway(settings, sock) as gateway_url,
    ):
        target = DemoTarget(
            gateway_url=gateway_url,
            decisions_addr=settings.addr("decisions"),
            nats_url=settings.nats_url,
            internal_key=INTERNAL_KEY,
            console_token=issue_token(JWT_SECRET, sub="demo", role=1),
            nats_user=NATS_ENGINE.name,
            nats_password=NATS_ENGINE.password,
        )
        report = await run_fleet(target, scale=40, seed=5, out=lines.append)
        # The same demo again on the same platform, as a newcomer would.
        again = await run_fleet(target, scale=10, seed=5, out=lambda _: None)

    assert report.failures == [], render(report)
    assert report.decisions_recorded == 80
    assert report.recorder["sent"] == 80 and report.recorder["dropped"] == {}
    assert report.judged == 80
    assert sum(report.by_outcome.values()) == 80
    assert report.precedents and all(p["outcome"] in ("success", "failure") for p in report.precedents)
    arms = {arm["model"]: arm for arm in report.routing["arms"]}
    assert arms[STRONG_MODEL]["posterior_mean"] > arms[WEAK_MODEL]["posterior_mean"]
    assert report.insights["receiving"] is True
    runs = {agent["agent_id"]: agent["runs"] for agent in report.insights["agents"]}
    assert runs["EXCEPTION_AGENT"] == 40
    assert "all claims hold" in lines[-1]

    # The second demo counts every run the platform holds (none still on its
    # way) and records contexts of its own: identical ones would come back
    # as pairs of precedents exactly as similar as each other.
    assert again.failures == [], render(again)
    assert {agent["agent_id"]: agent["runs"] for agent in again.insights["agents"]}["EXCEPTION_AGENT"] == 50
    similarities = [p["similarity"] for p in again.precedents]
    assert len(set(similarities)) == len(similarities), similarities
