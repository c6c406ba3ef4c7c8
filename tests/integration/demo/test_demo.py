"""The demo end to end against the embedded stack: it must hold every claim it
prints (decisions judged, precedents judged only, routing preferring the
better model, insights filled, the worse model's rollout halted and the
better one's completed), and hold them again on the same platform."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx

from gateway.auth import issue_token
from launcher.demo.fleet import ROLLOUTS, STRONG_MODEL, WEAK_MODEL, DemoReport, DemoTarget, render, run_fleet
from launcher.demo.rollouts import BATCH, MIN_JUDGED, STEPS, RolloutReport
from services.common.settings import CONTEXTS
from tests.harness import INTERNAL_KEY, JWT_SECRET, NATS_ENGINE, bound_socket, running, serving_gateway, with_env

WORSE, BETTER = ROLLOUTS
BETTER_CHANGE = {"model": STRONG_MODEL}
OTHER_CHANGE = {"model": "claude-opus-4-8"}


async def landed_model_calls(api: httpx.AsyncClient, wanted: int, patience_s: float = 30.0) -> list[dict[str, Any]]:
    """Insights' model usage once `wanted` calls have landed (they travel through the stream), or at the deadline."""
    deadline = time.monotonic() + patience_s
    while True:
        models: list[dict[str, Any]] = (await api.get("/admin/ai/insights", params={"days": 1})).json()["models"]
        if sum(m["calls"] for m in models) >= wanted or time.monotonic() > deadline:
            return models
        await asyncio.sleep(0.5)


def by_claim(report: DemoReport) -> dict[str, RolloutReport]:
    return {rollout.plan.claim: rollout for rollout in report.rollouts}


def assert_rollouts_end_as_claimed(report: DemoReport) -> None:
    rollouts = by_claim(report)
    worse, better = rollouts["worse"], rollouts["better"]
    assert worse.plan is WORSE and WORSE.baseline == STRONG_MODEL and WORSE.candidate == WEAK_MODEL
    assert better.plan is BETTER and BETTER.baseline == WEAK_MODEL and BETTER.candidate == STRONG_MODEL
    assert (WORSE.agent_id, WORSE.decision_type) != (BETTER.agent_id, BETTER.decision_type)

    assert worse.state == "halted" and worse.reason.startswith("halted: the candidate is worse")
    assert worse.p_harm is not None and worse.p_harm >= 0.95
    # Halted at its first step: the share never grew past 20 %.
    assert worse.walked == [STEPS[0]]
    # Every decision made with the candidate's model was stamped with its
    # arm: the guard counted them, all but those of the batch it halted in
    # that were judged after its look.
    assert 0 < worse.arms["candidate"]["judged"] + worse.arms["candidate"]["unknown"] <= worse.candidate_decisions
    assert worse.candidate_decisions - worse.arms["candidate"]["judged"] <= BATCH
    assert worse.arms["candidate"]["judged"] + worse.arms["control"]["judged"] <= worse.decisions

    assert better.state == "completed" and better.reason.startswith("completed: the candidate is not worse")
    assert better.walked == list(STEPS)
    assert better.p_harm is not None and better.p_harm < 0.05
    assert better.arms["candidate"]["judged"] >= MIN_JUDGED * len(STEPS)
    assert better.arms["control"]["judged"] >= MIN_JUDGED
    assert 0 <= better.candidate_decisions - better.arms["candidate"]["judged"] <= BATCH

    text = render(report)
    assert (
        f"worse model on {WORSE.agent_id}/{WORSE.decision_type}: {STRONG_MODEL} → {WEAK_MODEL}  halted after 20 %"
        in text
    )
    assert f"candidate decisions exposed before the halt: {worse.candidate_decisions}" in text
    assert (
        f"better model on {BETTER.agent_id}/{BETTER.decision_type}: {WEAK_MODEL} → {STRONG_MODEL}"
        "  completed after 20 % → 50 % → 100 %" in text
    )
    candidate = better.arms["candidate"]
    assert f"candidate {candidate['successes']:.0f}/{candidate['judged']:.0f} succeeded" in text
    assert f"guard: {worse.reason}" in text and f"guard: {better.reason}" in text
    assert f"p_harm {worse.p_harm:.3f}" in text


async def test_the_demo_shows_the_whole_loop(settings):
    sock = bound_socket()
    # The timer sweeps every second, between the demo's own sweeps: the
    # report counts what the platform judged, whoever swept.
    settings = with_env(settings, http_port=sock.getsockname()[1], sweep_interval_s=1)
    lines: list[str] = []
    async with (
        running(settings, CONTEXTS),
        serving_gateway(settings, sock) as gateway_url,
    ):
        target = DemoTarget(
            gateway_url=gateway_url,
            decisions_addr=settings.addr("decisions"),
            registry_addr=settings.addr("registry"),
            nats_url=settings.nats_url,
            internal_key=INTERNAL_KEY,
            console_token=issue_token(JWT_SECRET, sub="demo", role=1),
            nats_user=NATS_ENGINE.name,
            nats_password=NATS_ENGINE.password,
        )
        console = {"Authorization": f"Bearer {target.console_token}"}
        report = await run_fleet(target, scale=40, seed=5, out=lines.append)
        assert report.failures == [], render(report)
        async with httpx.AsyncClient(base_url=gateway_url, headers=console) as api:
            held = {r.plan.claim: (await api.get(f"/admin/ai/rollouts/{r.rollout_id}")).json() for r in report.rollouts}
            baseline = (await api.get(f"/admin/ai/agents/{BETTER.agent_id}")).json()["model"]
            usage = await landed_model_calls(api, report.model_calls)
            # A demo that crashed mid-rollout had pinned the baseline and
            # left its rollout running.
            pinned = await api.patch(f"/admin/ai/agents/{BETTER.agent_id}", json={"model": BETTER.baseline})
            assert pinned.status_code == 200, pinned.text
            stale = await api.post(
                "/admin/ai/rollouts",
                json={"agent_id": BETTER.agent_id, "decision_type": BETTER.decision_type, "change": BETTER_CHANGE},
            )
        assert stale.status_code == 201, stale.text
        # The same demo again on the same platform, as a newcomer would.
        again = await run_fleet(target, scale=10, seed=5, out=lambda _: None)
        async with httpx.AsyncClient(base_url=gateway_url, headers=console) as api:
            stale_after = (await api.get(f"/admin/ai/rollouts/{stale.json()['id']}")).json()
            # Someone else's rollout in the demo's way is left alone, and the demo says so.
            theirs = await api.post(
                "/admin/ai/rollouts",
                json={"agent_id": WORSE.agent_id, "decision_type": WORSE.decision_type, "change": OTHER_CHANGE},
            )
            blocked = await run_fleet(target, scale=2, seed=5, out=lambda _: None)
            theirs_after = (await api.get(f"/admin/ai/rollouts/{theirs.json()['id']}")).json()

    assert report.failures == [], render(report)
    rollout_decisions = sum(rollout.decisions for rollout in report.rollouts)
    assert rollout_decisions >= 2 * MIN_JUDGED
    assert report.decisions_recorded == 80 + rollout_decisions
    assert report.recorder["sent"] == 80 + rollout_decisions and report.recorder["dropped"] == {}
    assert report.facts_sent == 80 + rollout_decisions
    assert report.judged == 80 + rollout_decisions and report.pending == 0
    assert sum(report.by_outcome.values()) == 80 + rollout_decisions
    assert f"judged               {report.judged}  {report.by_outcome}  (pending 0)" in "\n".join(lines)
    assert_rollouts_end_as_claimed(report)
    # The platform holds what the report says, and the better model is now the agent's baseline.
    for claim, rollout in by_claim(report).items():
        assert held[claim]["state"] == rollout.state and held[claim]["arms"] == rollout.arms
    assert baseline == STRONG_MODEL
    assert report.precedents and all(p["outcome"] in ("success", "failure") for p in report.precedents)
    arms = {arm["model"]: arm for arm in report.routing["arms"]}
    assert arms[STRONG_MODEL]["posterior_mean"] > arms[WEAK_MODEL]["posterior_mean"]
    assert report.insights["receiving"] is True
    # Each run made one model call, exported as OTLP spans: Insights' tokens and cost have something to show.
    assert report.model_calls == report.task_runs
    assert sum(m["calls"] for m in usage) == report.model_calls
    assert {m["model"] for m in usage} == {STRONG_MODEL, WEAK_MODEL}
    assert all(m["input_tokens"] > 0 and m["output_tokens"] > 0 for m in usage)
    assert f"model calls (OTLP)   {report.model_calls}" in "\n".join(lines)
    runs = {agent["agent_id"]: agent["runs"] for agent in report.insights["agents"]}
    assert runs["EXCEPTION_AGENT"] == 40
    assert "all claims hold" in lines[-1] and "guarded rollouts" in lines[-1]

    # The second demo counts every run the platform holds (none still on its
    # way) and records contexts of its own: identical ones would come back
    # as pairs of precedents exactly as similar as each other.
    assert again.failures == [], render(again)
    assert {agent["agent_id"]: agent["runs"] for agent in again.insights["agents"]}["EXCEPTION_AGENT"] == 50
    similarities = [p["similarity"] for p in again.precedents]
    assert len(set(similarities)) == len(similarities), similarities

    # The second run aborted the rollout the "crashed" one left, started its
    # own on the baseline it pinned again, and both end as claimed once more.
    assert stale.status_code == 201, stale.text
    assert by_claim(again)["better"].aborted_stale == stale.json()["id"]
    assert stale_after["state"] == "aborted" and stale_after["percent"] == 0
    assert_rollouts_end_as_claimed(again)
    assert by_claim(again)["worse"].aborted_stale == ""

    assert theirs.status_code == 201, theirs.text
    assert theirs_after["state"] == "running"
    in_the_way = f"rollout {theirs.json()['id']}"
    assert any(in_the_way in failure and "already runs" in failure for failure in blocked.failures), blocked.failures
    assert "CLAIMS FAILED" in render(blocked)
