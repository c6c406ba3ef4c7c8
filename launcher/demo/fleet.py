"""A simulated logistics fleet driving a running Outrider through the engine client.

Time is compressed: the simulation plays the last few hours of a shift at once,
stamping each decision and fact at its instant in that past. Decisions are
therefore old enough for the sweeper (which never judges one younger than 30
minutes) the moment they land, and the whole loop — telemetry, decisions,
facts, judgement, precedents, routing — shows in a minute or two.

Two models serve the same agents. One is better by construction; the demo's
closing claims are that Outrider's routing found out which, and that a guarded
rollout of each model to an agent pinned to the other ends as it should: the
worse one halted by the guard, the better one walked to every subject
(launcher.demo.rollouts).
"""

from __future__ import annotations

import asyncio
import json
import random
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx

from launcher.demo.rollouts import MIN_JUDGED, STEPS, GuardedRollouts, RolloutPlan, RolloutReport
from outrider.client.decisions import DecisionRecorder, PrecedentClient
from outrider.client.registry import RegistryClient
from outrider.client.telemetry import TelemetryPublisher

STRONG_MODEL = "claude-sonnet-4-5"
WEAK_MODEL = "claude-haiku-4-5"
# Chance that a decision by each model works out. Far enough apart that a
# few hundred decisions separate them, close enough to need evidence.
SUCCESS_RATE = {STRONG_MODEL: 0.8, WEAK_MODEL: 0.45}
FIRST_TURN_RATE = {STRONG_MODEL: 0.75, WEAK_MODEL: 0.35}

AGENTS_REPORTING = ("EXCEPTION_AGENT", "DISPATCH_AGENT", "EXPRESS_DISPATCH_AGENT", "CUSTOMER_AGENT")
SHIFT = timedelta(hours=6)
ZONES = ("indiranagar", "koramangala", "hsr", "whitefield", "jayanagar")
# One rollout per (agent, decision type), so the two are on different pairs;
# and a model pin is the agent's, so on different agents, each pinned to the
# other model. Neither touches the agents the shift's routing claims rest on.
ROLLOUTS = (
    RolloutPlan(
        claim="worse",
        agent_id="EXPRESS_DISPATCH_AGENT",
        decision_type="assignment_failure",
        baseline=STRONG_MODEL,
        candidate=WEAK_MODEL,
        expected="halted",
    ),
    RolloutPlan(
        claim="better",
        agent_id="CUSTOMER_AGENT",
        decision_type="stall_response",
        baseline=WEAK_MODEL,
        candidate=STRONG_MODEL,
        expected="completed",
    ),
)


@dataclass(frozen=True)
class DemoTarget:
    gateway_url: str
    decisions_addr: str
    registry_addr: str
    nats_url: str
    internal_key: str
    console_token: str
    # The engines' NATS credential: the demo publishes as an engine does.
    nats_user: str | None = None
    nats_password: str | None = None
    nats_tls_ca: Path | None = None


@dataclass
class DemoReport:
    decisions_recorded: int = 0
    facts_sent: int = 0
    task_runs: int = 0
    model_calls: int = 0
    conversations: int = 0
    judged: int = 0
    pending: int = 0
    by_outcome: dict[str, int] = field(default_factory=dict)
    precedents: list[dict[str, Any]] = field(default_factory=list)
    precedent_summary: dict[str, Any] = field(default_factory=dict)
    routing: dict[str, Any] = field(default_factory=dict)
    conversation_routing: dict[str, Any] = field(default_factory=dict)
    insights: dict[str, Any] = field(default_factory=dict)
    recorder: dict[str, Any] = field(default_factory=dict)
    rollouts: list[RolloutReport] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failures


class Progress:
    """A one-line progress bar on a terminal, plain lines elsewhere."""

    def __init__(self, out: Callable[[str], None], total: int, *, tty: bool) -> None:
        self.out, self.total, self.tty, self.done = out, total, tty, 0
        self.started = time.monotonic()

    def step(self, label: str, count: int = 1) -> None:
        self.done = min(self.total, self.done + count)
        width = 28
        filled = int(width * self.done / self.total)
        line = f"[{'#' * filled}{'.' * (width - filled)}] {self.done:>4}/{self.total} {label:<42}"
        if self.tty:
            sys.stdout.write("\r" + line)
            sys.stdout.flush()
        else:
            self.out(line)

    def finish(self) -> None:
        if self.tty:
            sys.stdout.write("\n")
        self.out(f"simulated shift done in {time.monotonic() - self.started:.1f}s")


def _stall_context(rng: random.Random) -> dict[str, Any]:
    return {
        "stall_minutes": rng.randrange(6, 45),
        "distance_to_drop_km": round(rng.uniform(0.3, 9.0), 1),
        "rider_rating": round(rng.uniform(3.2, 5.0), 1),
        "zone": rng.choice(ZONES),
        "sla_minutes_left": rng.randrange(-20, 120),
        "nearby_riders": rng.randrange(0, 6),
    }


def _failure_context(rng: random.Random) -> dict[str, Any]:
    return {
        "zone": rng.choice(ZONES),
        "riders_in_radius": rng.randrange(0, 4),
        "radius_km": rng.choice((2, 3, 5)),
        "hour_of_day": rng.randrange(7, 23),
        "weight_kg": round(rng.uniform(0.2, 14.0), 1),
    }


def _conversation(rng: random.Random, model: str, index: int) -> dict[str, Any]:
    """A console chat: one request, maybe a correction, then thanks or abandonment."""
    ref = f"demo-conv-{index}"
    turns = [
        {"role": "user", "text": "show me bookings stuck in Koramangala for over twenty minutes", "ref": f"{ref}-u1"},
        {
            "role": "assistant",
            "text": "here are the stalled bookings",
            "ref": f"{ref}-a1",
            "model": model,
            "trace_id": f"{ref}-t1",
        },
    ]
    if rng.random() < FIRST_TURN_RATE[model]:
        turns.append({"role": "user", "text": "thanks, now draft a note to the riders", "ref": f"{ref}-u2"})
        turns.append(
            {"role": "assistant", "text": "drafted", "ref": f"{ref}-a2", "model": model, "trace_id": f"{ref}-t2"}
        )
        return {"conversation_id": ref, "skill": "order_intake_auto_schedule", "turns": turns}
    turns.append(
        {
            "role": "user",
            "text": "no, that's not what i asked, i said stuck bookings in Koramangala",
            "ref": f"{ref}-u2",
        }
    )
    turns.append(
        {"role": "assistant", "text": "second attempt", "ref": f"{ref}-a2", "model": model, "trace_id": f"{ref}-t2"}
    )
    if rng.random() < SUCCESS_RATE[model]:
        turns.append({"role": "user", "text": "thanks, that's right", "ref": f"{ref}-u3"})
    else:
        turns.append({"role": "user", "text": "forget it, this is useless", "ref": f"{ref}-u3"})
    return {"conversation_id": ref, "skill": "order_intake_auto_schedule", "turns": turns}


class Fleet:
    def __init__(self, target: DemoTarget, *, scale: int, seed: int, out: Callable[[str], None]) -> None:
        self.target, self.scale, self.seed, self.out = target, scale, seed, out
        # Models, actions and outcomes follow the seed alone, so a seed's
        # claims hold on every run; contexts are drawn apart (see run()).
        self.rng = random.Random(seed)
        self.contexts = random.Random(seed)
        # The model calls' own draws, so adding them moved no seed's claims.
        self.calls = random.Random(f"{seed}:model-calls")
        self.runs_before = 0
        self.run_id = uuid.uuid4().hex[:8]
        self.now = datetime.now(UTC)
        self.report = DemoReport()
        self.http = httpx.AsyncClient(base_url=target.gateway_url, timeout=30)
        self.internal = {"X-Internal-Key": target.internal_key}
        self.console = {"Authorization": f"Bearer {target.console_token}"}

    async def run(self) -> DemoReport:
        target = self.target
        registry = RegistryClient(target.registry_addr, target.internal_key)
        await registry.start()
        # Given the registry client, the recorder stamps each decision with
        # its subject's rollout arm, as an engine's does.
        recorder = DecisionRecorder(target.decisions_addr, target.internal_key, registry=registry)
        precedents = PrecedentClient(target.decisions_addr, target.internal_key, timeout_s=5.0)
        publisher = await TelemetryPublisher.connect(
            target.nats_url,
            name="outrider-demo",
            user=target.nats_user,
            password=target.nats_password,
            tls_ca=target.nats_tls_ca,
        )
        steps = self.scale * 4 + 5
        progress = Progress(self.out, steps, tty=sys.stdout.isatty())
        try:
            # A second demo against the same platform must not record the
            # first one's contexts again: precedents would come back in
            # identical pairs. What is already there salts the contexts, and
            # the runs already counted are what insights must grow past.
            self.runs_before = await self._runs_landed()
            self.contexts = random.Random(f"{self.seed}:{self.runs_before}")
            for _ in range(self.scale):
                await self._booking_round(recorder, publisher)
                progress.step("stalls, failures, facts, runs", 3)
                await self._conversation_round()
                progress.step("console conversations")
            await publisher.heartbeat(agent_id="EXCEPTION_AGENT", state="watching stalls")
            await publisher.heartbeat(agent_id="DISPATCH_AGENT", state="idle")
            await recorder.flush(60)
            progress.step("decisions flushed")
            await self._sweep()
            progress.step("sweeper judged")
            await self._rollouts(recorder, registry, publisher)
            await self._judge_the_rest()
            await self._count_judged()
            progress.step("guarded rollouts ended")
            await self._ask(precedents)
            progress.step("precedents and routing")
            await self._insights()
            progress.step("insights")
        finally:
            progress.finish()
            await recorder.close()
            await registry.close()
            await precedents.close()
            await publisher.close()
            await self.http.aclose()
        self.report.recorder = {
            "sent": recorder.counters.sent,
            "retried": recorder.counters.retried,
            "dropped": dict(recorder.counters.dropped),
        }
        self._check()
        return self.report

    def _instant(self, rng: random.Random | None = None) -> datetime:
        # Somewhere in the shift, but at least 40 minutes ago: old enough to judge.
        back = (rng or self.rng).uniform(40 * 60, SHIFT.total_seconds())
        return self.now - timedelta(seconds=back)

    async def _rollouts(
        self, recorder: DecisionRecorder, registry: RegistryClient, publisher: TelemetryPublisher
    ) -> None:
        # Drawn apart from the shift, so adding rollouts left every claim
        # a seed made about the shift as it was.
        rng = random.Random(f"{self.seed}:rollouts")

        def context(decision_type: str) -> dict[str, Any]:
            if decision_type == "stall_response":
                return _stall_context(self.contexts)
            return _failure_context(self.contexts)

        async def observe(decision_type: str, subject: str, decided_at: datetime, works: bool) -> None:
            # Published as a backend publishes them, and acknowledged together:
            # one call per fact through the gateway would take several times
            # as long as everything else the rollouts do.
            event = self._fact_event(decision_type, subject, decided_at, works, rng)
            await publisher.booking_facts(event, msg_id=f"{subject}:{event['at']}")
            self.report.facts_sent += 1

        rollouts = GuardedRollouts(
            self,
            observe=observe,
            plans=ROLLOUTS,
            recorder=recorder,
            registry=registry,
            success_rate=SUCCESS_RATE,
            rng=rng,
            contexts=context,
            instant=lambda: self._instant(rng),
            subject_prefix=f"demo-{self.run_id}-rollout",
            failures=self.report.failures,
        )
        self.report.rollouts = await rollouts.run()
        self.report.decisions_recorded += sum(r.decisions for r in self.report.rollouts)

    async def _booking_round(self, recorder: DecisionRecorder, publisher: TelemetryPublisher) -> None:
        for decision_type, agent, action_choices in (
            ("stall_response", "EXCEPTION_AGENT", ("reassign", "wait", "notify_customer")),
            ("assignment_failure", "DISPATCH_AGENT", ("widen_radius", "escalate", "retry_later")),
        ):
            model = self.rng.choice((STRONG_MODEL, WEAK_MODEL))
            decided_at = self._instant()
            subject = f"demo-{self.run_id}-{decision_type}-{self.report.decisions_recorded}"
            context = (
                _stall_context(self.contexts) if decision_type == "stall_response" else _failure_context(self.contexts)
            )
            recorder.record(
                decision_type=decision_type,
                agent_id=agent,
                subject_id=subject,
                action=self.rng.choice(action_choices),
                confidence=round(self.rng.uniform(0.55, 0.95), 2),
                context=context,
                model=model,
                reasoning="simulated",
                decided_at=decided_at,
            )
            self.report.decisions_recorded += 1
            await self._facts(decision_type, subject, decided_at, self.rng.random() < SUCCESS_RATE[model])
        spans = []
        for agent in AGENTS_REPORTING:
            started = self._instant()
            failed = self.rng.random() < 0.08
            finished = started + timedelta(milliseconds=self.rng.randrange(40, 4000))
            await publisher.task_run(
                agent_id=agent,
                task_id=f"{self.run_id}-{self.report.task_runs}",
                task_type="tick",
                status="failed" if failed else "succeeded",
                started_at=started,
                finished_at=finished,
                error="upstream timeout" if failed else None,
            )
            self.report.task_runs += 1
            spans.append(self._model_call_span(agent, started, finished, failed))
        await self._export_spans(spans)

    def _model_call_span(self, agent: str, started: datetime, finished: datetime, failed: bool) -> dict[str, Any]:
        """The model call a run made, as an OpenTelemetry-instrumented engine exports it (OTLP/JSON).

        The span has a parent, the engine's span for the whole run, which is
        not sent: so the platform keeps it as a model call only, and the run
        it belongs to is the one published on the stream, matched to it by
        agent and time (Runs' drill-down, Insights' tokens and cost).
        """
        rng = self.calls
        model = rng.choice((STRONG_MODEL, WEAK_MODEL))
        span = finished - started
        attributes: list[dict[str, Any]] = [
            {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
            {"key": "gen_ai.provider.name", "value": {"stringValue": "anthropic"}},
            {"key": "gen_ai.agent.name", "value": {"stringValue": agent}},
            {"key": "gen_ai.request.model", "value": {"stringValue": model}},
            {"key": "gen_ai.response.model", "value": {"stringValue": model}},
            {"key": "gen_ai.usage.input_tokens", "value": {"intValue": str(rng.randrange(600, 4000))}},
            {"key": "gen_ai.usage.output_tokens", "value": {"intValue": str(rng.randrange(40, 600))}},
        ]
        if failed:
            attributes.append({"key": "error.type", "value": {"stringValue": "timeout"}})
        return {
            "traceId": rng.randbytes(16).hex(),
            "spanId": rng.randbytes(8).hex(),
            "parentSpanId": rng.randbytes(8).hex(),
            "name": f"chat {model}",
            "kind": 3,
            "startTimeUnixNano": str(_nanos(started + span * 0.1)),
            "endTimeUnixNano": str(_nanos(started + span * 0.9)),
            "attributes": attributes,
            "status": {"code": 2, "message": "timeout"} if failed else {"code": 1},
        }

    async def _export_spans(self, spans: list[dict[str, Any]]) -> None:
        body = {
            "resourceSpans": [
                {
                    "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "outrider-demo"}}]},
                    "scopeSpans": [{"scope": {"name": "outrider-demo"}, "spans": spans}],
                }
            ]
        }
        reply = await self.http.post("/v1/traces", json=body, headers=self.internal)
        reply.raise_for_status()
        # OTLP/JSON writes the count as a string, as it writes every int64.
        refused = int((reply.json().get("partialSuccess") or {}).get("rejectedSpans") or 0)
        if refused:
            self.report.failures.append(f"the OTLP intake refused {refused} of {len(spans)} model-call spans")
        self.report.model_calls += len(spans) - refused

    async def _facts(self, decision_type: str, subject: str, decided_at: datetime, works: bool) -> None:
        event = self._fact_event(decision_type, subject, decided_at, works, self.rng)
        reply = await self.http.post("/internal/facts", json=event, headers=self.internal)
        reply.raise_for_status()
        self.report.facts_sent += 1

    def _fact_event(
        self, decision_type: str, subject: str, decided_at: datetime, works: bool, rng: random.Random
    ) -> dict[str, str | bool]:
        """What the backend observed of the subject afterwards: the decision worked out, or it did not."""
        later = decided_at + timedelta(minutes=rng.randrange(5, 35))
        event: dict[str, str | bool]
        if decision_type == "stall_response":
            sla = decided_at + timedelta(minutes=30)
            delivered = later if works else sla + timedelta(minutes=rng.randrange(5, 60))
            event = {
                "subject_id": subject,
                "at": min(delivered, self.now).isoformat(),
                "status": "delivered",
                "delivered_at": min(delivered, self.now).isoformat(),
                "sla_due_at": sla.isoformat(),
            }
        elif works:
            event = {
                "subject_id": subject,
                "at": later.isoformat(),
                "status": "assigned",
                "assigned_at": later.isoformat(),
            }
        else:
            event = {"subject_id": subject, "at": later.isoformat(), "status": "cancelled", "cancelled": True}
        return event

    async def _conversation_round(self) -> None:
        model = self.rng.choice((STRONG_MODEL, WEAK_MODEL))
        body = _conversation(self.rng, model, self.report.conversations)
        body["conversation_id"] = f"{self.run_id}-{body['conversation_id']}"
        reply = await self.http.post("/internal/conversations", json=body, headers=self.internal)
        reply.raise_for_status()
        self.report.conversations += 1

    async def _sweep(self) -> None:
        # The sweep judges 500 at a time per call; repeat until nothing is left.
        for _ in range(50):
            if await self._sweep_once() == 0:
                return

    async def _judge_the_rest(self, patience_s: float = 30.0) -> None:
        """Sweep until no decision of the shift is pending, within reason.

        A rollout ends as soon as the guard has seen enough, while the facts
        of its last batch may still be on their way through the stream: a
        sweep before they land leaves those decisions pending, and the report
        would count fewer judged than recorded.
        """
        deadline = time.monotonic() + patience_s
        while True:
            await self._sweep()
            if not await self._pending_in_shift() or time.monotonic() > deadline:
                return
            await asyncio.sleep(0.2)

    async def _pending_in_shift(self) -> bool:
        query = {"outcome": "pending", "decided_from": (self.now - SHIFT).isoformat(), "limit": "1"}
        reply = await self.http.get("/admin/ai/decisions", params=query, headers=self.console)
        reply.raise_for_status()
        return bool(reply.json()["items"])

    async def _sweep_once(self) -> int:
        """One sweep (which wakes the rollout guard); how many decisions it judged."""
        reply = await self.http.post("/internal/outcomes/sweep", headers=self.internal)
        reply.raise_for_status()
        judged: int = reply.json()["judged"]
        return judged

    async def _count_judged(self) -> None:
        """What the platform holds of this demo's decisions, by outcome.

        Read from the decisions themselves, not summed from the demo's own
        sweeps: the platform's timer sweeps as well, and what it judged
        between two of the demo's sweeps would be missing from their sum.
        """
        mine = f"demo-{self.run_id}-"
        counts: dict[str, int] = {}
        query = {"format": "jsonl", "decided_from": (self.now - SHIFT).isoformat()}
        async with self.http.stream("GET", "/admin/ai/decisions/export", params=query, headers=self.console) as reply:
            reply.raise_for_status()
            async for line in reply.aiter_lines():
                decision = json.loads(line) if line.strip() else None
                if decision and decision["subject_id"].startswith(mine):
                    outcome = decision["outcome"] or "pending"
                    counts[outcome] = counts.get(outcome, 0) + 1
        self.report.pending = counts.pop("pending", 0)
        self.report.by_outcome = dict(sorted(counts.items()))
        self.report.judged = sum(counts.values())

    async def _ask(self, client: PrecedentClient) -> None:
        answer = await client.precedents("stall_response", _stall_context(self.contexts), k=10)
        self.report.precedents = [
            {"action": p.action, "outcome": p.outcome, "similarity": p.similarity, "model": p.model}
            for p in answer.items
        ]
        self.report.precedent_summary = {
            "successes": answer.successes,
            "failures": answer.failures,
            "success_rate": answer.success_rate,
            "available": answer.available,
        }
        routing_queries: tuple[tuple[str, dict[str, str | int]], ...] = (
            ("routing", {"decision_type": "stall_response", "seed": 7}),
            ("conversation_routing", {"skill": "order_intake_auto_schedule", "seed": 7}),
        )
        for key, query in routing_queries:
            reply = await self.http.get("/admin/ai/routing", params=query, headers=self.console)
            reply.raise_for_status()
            setattr(self.report, key, reply.json())

    async def _insights_now(self) -> dict[str, Any]:
        reply = await self.http.get("/admin/ai/insights", params={"days": 1}, headers=self.console)
        reply.raise_for_status()
        insights: dict[str, Any] = reply.json()
        return insights

    async def _runs_landed(self) -> int:
        return sum(agent.get("runs", 0) for agent in (await self._insights_now()).get("agents", []))

    async def _insights(self, patience_s: float = 30.0) -> None:
        # Runs travel through the stream and land in batches, so the last
        # ones may still be on their way: wait for them, within reason. A
        # platform that already held runs holds this demo's on top of them.
        deadline = time.monotonic() + patience_s
        while True:
            self.report.insights = await self._insights_now()
            landed = sum(agent.get("runs", 0) for agent in self.report.insights.get("agents", []))
            if landed >= self.runs_before + self.report.task_runs or time.monotonic() > deadline:
                return
            await asyncio.sleep(0.5)

    def _check(self) -> None:
        report = self.report
        if report.judged == 0:
            report.failures.append("the sweeper judged nothing")
        held = report.judged + report.pending
        if held != report.decisions_recorded:
            report.failures.append(f"the platform holds {held} of the {report.decisions_recorded} decisions recorded")
        if not report.precedents:
            report.failures.append("no precedent came back")
        if any(p["outcome"] not in ("success", "failure") for p in report.precedents):
            report.failures.append("a precedent came back unjudged")
        for key in ("routing", "conversation_routing"):
            arms = {arm["model"]: arm["posterior_mean"] for arm in getattr(report, key).get("arms", [])}
            if arms.get(STRONG_MODEL, 0) <= arms.get(WEAK_MODEL, 1):
                report.failures.append(f"{key} does not prefer {STRONG_MODEL}: {arms}")
        runs = sum(agent.get("runs", 0) for agent in report.insights.get("agents", []))
        if runs == 0:
            report.failures.append("insights show no runs")
        for rollout in report.rollouts:
            plan = rollout.plan
            if rollout.state != plan.expected:
                report.failures.append(
                    f"the rollout of the {plan.claim} model {plan.candidate} to {plan.agent_id}/{plan.decision_type}"
                    f" ended {rollout.state or 'unstarted'}, not {plan.expected}"
                )


def _nanos(moment: datetime) -> int:
    return int(moment.timestamp() * 1_000_000) * 1000


def render(report: DemoReport) -> str:
    lines = [
        "",
        "── Outrider demo report ──────────────────────────────────────────",
        f"decisions recorded   {report.decisions_recorded}  (recorder: {report.recorder})",
        f"facts sent           {report.facts_sent}",
        f"task runs published  {report.task_runs}",
        f"model calls (OTLP)   {report.model_calls}",
        f"conversations        {report.conversations}",
        f"judged               {report.judged}  {report.by_outcome}  (pending {report.pending})",
        f"precedents (judged only, nearest first): {report.precedent_summary}",
    ]
    lines += [
        f"    {p['similarity']:.3f}  {p['outcome']:<7}  {p['action']:<16} {p['model']}" for p in report.precedents[:5]
    ]
    for key, title in (("routing", "routing for stall_response"), ("conversation_routing", "routing for console chat")):
        data = getattr(report, key)
        lines.append(f"{title}: pick {data.get('pick')}")
        lines += [
            f"    {arm['model']:<20} mean {arm['posterior_mean']:.3f}  pick probability {arm['pick_probability']:.2f}"
            for arm in data.get("arms", [])
        ]
    insights = report.insights
    lines.append(f"insights: receiving={insights.get('receiving')}")
    lines += [
        f"    {a['agent_id']:<24} runs {a['runs']:>4}  failures {a['failures']:>3}  state {a.get('state')}"
        for a in insights.get("agents", [])
        if a.get("runs") or a.get("state") not in (None, "silent")
    ]
    lines += _rollout_lines(report.rollouts)
    lines.append("all claims hold" if report.ok else "CLAIMS FAILED: " + "; ".join(report.failures))
    return "\n".join(lines)


def _rollout_lines(rollouts: list[RolloutReport]) -> list[str]:
    if not rollouts:
        return []
    lines = [f"guarded rollouts (steps {' → '.join(map(str, STEPS))} %, {MIN_JUDGED} judged per arm before a step):"]
    for rollout in rollouts:
        plan = rollout.plan
        arms = rollout.arms
        walked = " → ".join(f"{percent} %" for percent in rollout.walked)
        lines.append(
            f"    {plan.claim} model on {plan.agent_id}/{plan.decision_type}: {plan.baseline} → {plan.candidate}"
            f"  {rollout.state or 'not started'} after {walked or 'no step'}"
        )
        if not arms:
            continue
        p_harm = "none" if rollout.p_harm is None else f"{rollout.p_harm:.3f}"
        exposed = "exposed before the halt" if rollout.state == "halted" else "made"
        lines.append(
            "        "
            + "  ".join(f"{arm} {arms[arm]['successes']:.0f}/{arms[arm]['judged']:.0f} succeeded" for arm in arms)
            + f"  p_harm {p_harm}  candidate decisions {exposed}: {rollout.candidate_decisions}"
        )
        if rollout.aborted_stale:
            lines.append(f"        aborted {rollout.aborted_stale}, left running by an earlier run")
        lines.append(f"        guard: {rollout.reason}")
    return lines


async def run_fleet(
    target: DemoTarget, *, scale: int = 120, seed: int = 11, out: Callable[[str], None] = print
) -> DemoReport:
    out(
        f"simulating {scale} booking rounds with {STRONG_MODEL} and {WEAK_MODEL}, then a guarded rollout of each,"
        f" against {target.gateway_url}"
    )
    report = await Fleet(target, scale=scale, seed=seed, out=out).run()
    out(render(report))
    return report
