"""A playground run as a unit of work: admitted, taken, and its end written.

Admission checks, in this order: a model API key (without one nothing else
is worth checking), the request's own fields, the agent and skill in the
registry, and last the rate limit, so a request refused for bad input
spends none of the caller's runs.

A run is stored in the same transaction that spends its admission, and each
step is stored as it is taken, before the caller sees it. However the run
ends (its own end, a cancelled call, an error no one foresaw) its end is
written, shielded from the cancellation and bounded by its own timeout; a
playground that dies mid-run leaves the row running, shown interrupted once
past the deadline. So every admission spent has a stored run to show for it.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime

import anthropic
from sqlalchemy.ext.asyncio import AsyncEngine

from services.common import callers, paging
from services.common.errors import DomainError, PermissionDenied, Unavailable
from services.common.redaction.redactor import RedactionRules, Redactor
from services.common.settings import Settings
from services.playground import codec, engine, rules, store
from services.playground.clients import RegistryClient
from services.playground.engine import Executor, RunLoop, RunPlan, Step, Trace
from services.playground.rules import RunLimits

_log = logging.getLogger(__name__)

# How long the write of a run's end may take. It runs even when the call is
# cancelled, so it must end by itself: a shutdown waits for it.
FINAL_WRITE_S = 5.0
# The earlier runs' audit rows one admission appends at most: a backlog
# from a registry that was away is worked off a few runs at a time.
AUDITS_PER_ADMISSION = 10
CANCELLED_ERROR = "the run was cancelled before it ended: its caller went away, or the playground shut down"


@dataclass(slots=True)
class Admitted:
    id: uuid.UUID
    plan: RunPlan
    created_by: str
    created_by_email: str
    created_at: datetime
    loop: RunLoop
    # Set once the run's end has been handed to the store.
    ended: bool = field(default=False)


class Runs:
    """This replica's runs: admitting them, taking them, and writing their ends."""

    def __init__(
        self,
        *,
        settings: Settings,
        db: AsyncEngine,
        registry: RegistryClient,
        model: anthropic.AsyncAnthropic | None,
        execute: Executor,
        limits: RunLimits = RunLimits(),
    ) -> None:
        self._settings = settings
        self._db = db
        self._registry = registry
        self._model = model
        self._execute = execute
        self._limits = limits
        self._redaction = RedactionRules.build(extra_keys=settings.redact_keys, extra_patterns=settings.redact_patterns)
        # Runs admitted whose end is not written yet, each with the event
        # its write sets; and the writes themselves, held so none is
        # collected while a cancelled call no longer awaits it.
        self._unended: dict[uuid.UUID, asyncio.Event] = {}
        self._ending: set[asyncio.Task[None]] = set()

    async def admit(self, asked: codec.RunRequest) -> Admitted:
        self._client()
        agent_id = rules.check_agent_id(asked.agent_id)
        person = callers.principal()
        if person is None:
            # server.ACCESS admits runs only for a signed-in role-1 person.
            raise PermissionDenied("a playground run must be asked for by a signed-in person")
        prompt = rules.check_prompt(asked.prompt)
        found = await self._registry.agent_tools(agent_id)
        skill = rules.choose_skill(agent_id, found.skills, asked.skill_id)
        plan = RunPlan(
            agent_id=agent_id,
            skill_id=skill.id,
            model=rules.model_for(found.pinned_model, self._settings.playground_model),
            system=rules.system_prompt(agent_id, skill),
            prompt=prompt,
            tools=tuple(found.catalog[name] for name in skill.tool_names if name in found.catalog),
            catalog=found.catalog,
            base_urls=self._settings.tool_base_urls,
        )
        loop = RunLoop(
            plan, client=self._client(), execute=self._execute, limits=self._limits, redactor=Redactor(self._redaction)
        )
        admitted = Admitted(
            id=uuid.uuid4(),
            plan=plan,
            created_by=person.sub,
            created_by_email=person.email,
            created_at=datetime.now(UTC),
            loop=loop,
        )
        # The admission and the run's row are one transaction: a spent run
        # always has its row, and a refused one has neither.
        try:
            async with self._db.begin() as conn:
                admission = await store.admit(
                    conn, user_sub=person.sub, limit=rules.RUNS_PER_WINDOW, window_s=rules.RATE_WINDOW_S
                )
                if admission.admitted:
                    await store.start_run(conn, row=_started_row(admitted))
        except Exception as exc:  # noqa: BLE001 - the driver's text quotes the row
            raise self._failed("playground run failed", admitted.id, exc) from None
        if not admission.admitted:
            raise rules.rate_limited(admission.retry_after_s)
        self._unended[admitted.id] = asyncio.Event()
        await self._audit_runs(person.sub)
        return admitted

    async def _audit_runs(self, created_by: str) -> None:
        """Have the registry keep the audit rows this person's runs still miss, this one among them.

        The run is stored before it is audited, and an audit that fails
        holds up no run: the admission is spent and the row is there to
        show for it. Its row waits, and the person's next run appends it.
        """
        try:
            async with self._db.connect() as conn:
                waiting = await store.unaudited_runs(conn, created_by=created_by, limit=AUDITS_PER_ADMISSION)
            for run in waiting:
                await self._registry.append_audit(run)
                async with self._db.begin() as conn:
                    await store.run_audited(conn, id=run.id)
        except Exception as exc:  # noqa: BLE001 - a run goes on without its audit row; the next one appends it
            _log.warning("playground run audit deferred", extra={"error": type(exc).__name__})

    async def run(self, admitted: Admitted, *, on_step: engine.StepSink | None) -> store.RunRow:
        """Take an admitted run to its end; the row as stored once it ended."""
        loop = admitted.loop

        async def record(step: Step) -> None:
            # Stored before the caller sees it: a step on the screen is a
            # step in the trace.
            progress = loop.progress()
            async with self._db.begin() as conn:
                await store.record_step(
                    conn,
                    id=admitted.id,
                    step=codec.step_to_json(step),
                    turns=progress.turns,
                    input_tokens=progress.input_tokens,
                    output_tokens=progress.output_tokens,
                    redactions=dict(progress.redactions),
                )
            if on_step is not None:
                await on_step(step)

        try:
            trace = await loop.run(on_step=record)
        except asyncio.CancelledError:
            await self._end_quietly(admitted, loop.stop(engine.CANCELLED, CANCELLED_ERROR))
            _log.info("playground run cancelled", extra={"run_id": str(admitted.id), "steps": len(loop.steps)})
            raise
        except Exception as exc:  # noqa: BLE001 - its text would reach the log unredacted
            # The trace says only what kind of failure ended the run.
            self._failed("playground run failed", admitted.id, exc)
            trace = loop.stop(engine.ERROR, f"the playground run failed ({type(exc).__name__})")
        try:
            row = await self._end(admitted, trace)
        except Exception as exc:  # noqa: BLE001 - the driver's text quotes the row
            raise self._failed("playground run not stored", admitted.id, exc) from None
        _log.info(
            "playground run",
            extra={
                "run_id": str(row.id),
                "agent_id": row.agent_id,
                "skill_id": row.skill_id,
                "model": row.model,
                "turns": row.turns,
                "steps": row.step_count,
                "stop_reason": row.stop_reason,
                "error": row.error,
                "total_ms": row.total_ms,
                "redactions": row.redactions,
            },
        )
        return row

    async def end_abandoned(self, admitted: Admitted) -> None:
        """End, as cancelled, a run whose caller went away before `run` began it.

        Such a run never got to write its own end; one that did is left alone.
        """
        if not admitted.ended:
            await self._end_quietly(admitted, admitted.loop.stop(engine.CANCELLED, CANCELLED_ERROR))

    async def page(self, *, limit: int, after: tuple[datetime, uuid.UUID] | None) -> tuple[list[store.RunRow], str]:
        """Newest first: one page of stored runs as seen now, and the cursor after it."""
        async with self._db.connect() as conn:
            rows = await store.list_runs(conn, after=after, limit=limit + 1)
        page, cursor = paging.one_page(rows, limit, lambda row: (row.created_at, row.id))
        now = datetime.now(UTC)
        return [self._as_seen(row, now) for row in page], cursor

    async def stored(self, run_id: uuid.UUID) -> store.RunRow:
        async with self._db.connect() as conn:
            row = await store.get_run(conn, id=run_id)
        if row is None:
            raise rules.run_not_found(run_id)
        return self._as_seen(row, datetime.now(UTC))

    async def close(self) -> None:
        """Wait, within a bound, for every admitted run's end to be written.

        Called once the server has stopped. Its stop cancels the calls in
        flight and returns at once, so their runs write their ends after it,
        as the cancellation reaches each; each write has its own timeout,
        and a run that never gets to write is shown interrupted later.
        """
        waits = [asyncio.create_task(event.wait()) for event in self._unended.values()]
        if not waits:
            return
        _, late = await asyncio.wait(waits, timeout=FINAL_WRITE_S + 1)
        for wait in late:
            wait.cancel()
        if late:
            _log.warning("playground runs not ended at shutdown", extra={"runs": len(late)})

    def _as_seen(self, row: store.RunRow, now: datetime) -> store.RunRow:
        status = rules.run_status(row.status, row.created_at, now, self._limits.deadline_s)
        if status != rules.INTERRUPTED:
            return row
        return replace(
            row,
            status=status,
            stop_reason=rules.INTERRUPTED,
            error="the playground stopped before this run ended; its steps up to then are kept",
        )

    def status(self) -> rules.Status:
        return rules.status(configured=self._model is not None, default_model=self._settings.playground_model)

    def _client(self) -> anthropic.AsyncAnthropic:
        if self._model is None:
            raise Unavailable(rules.NOT_CONFIGURED, code="PLAYGROUND_NOT_CONFIGURED")
        return self._model

    async def _end(self, admitted: Admitted, trace: Trace) -> store.RunRow:
        """Write the run's end, even from a call being cancelled.

        The write is its own task, shielded: a cancellation arriving while it
        runs stops the wait, never the write, which ends within its timeout.
        """
        admitted.ended = True
        row = _ended_row(admitted, trace)

        async def write() -> None:
            async with asyncio.timeout(FINAL_WRITE_S):
                async with self._db.begin() as conn:
                    await store.finish_run(conn, row=row)

        task = asyncio.create_task(write(), name=f"playground.end.{admitted.id}")
        self._ending.add(task)
        task.add_done_callback(lambda done: self._written(admitted.id, done))
        await asyncio.shield(task)
        return row

    def _written(self, run_id: uuid.UUID, task: asyncio.Task[None]) -> None:
        self._ending.discard(task)
        event = self._unended.pop(run_id, None)
        if event is not None:
            event.set()

    async def _end_quietly(self, admitted: Admitted, trace: Trace) -> None:
        # The call is being cancelled; its own cancellation is what must
        # travel on, so a failed write is logged, not raised.
        try:
            await self._end(admitted, trace)
        except Exception as exc:  # noqa: BLE001 - the driver's text quotes the row
            self._failed("playground run not stored", admitted.id, exc)

    def _failed(self, message: str, run_id: uuid.UUID, exc: Exception) -> DomainError:
        """Log an unforeseen failure redacted; what travels on names none of it.

        The error interceptor would log the exception's own text, which can
        quote the data the run failed on (a driver's error quotes the row).
        """
        _log.error(message, extra={"run_id": str(run_id), **engine.failure_fields(exc, Redactor(self._redaction))})
        return DomainError("the playground run failed")


def _started_row(admitted: Admitted) -> store.RunRow:
    plan, loop = admitted.plan, admitted.loop
    return store.RunRow(
        id=admitted.id,
        agent_id=plan.agent_id,
        skill_id=plan.skill_id,
        model=plan.model,
        prompt=loop.prompt,
        turns=0,
        input_tokens=0,
        output_tokens=0,
        total_ms=0,
        final_text="",
        stop_reason="",
        error="",
        steps=[],
        step_count=0,
        created_by=admitted.created_by,
        created_by_email=admitted.created_by_email,
        created_at=admitted.created_at,
        redactions=loop.redactor.report(),
        status=rules.RUNNING,
    )


def _ended_row(admitted: Admitted, trace: Trace) -> store.RunRow:
    steps = [codec.step_to_json(step) for step in trace.steps]
    return replace(
        _started_row(admitted),
        model=trace.model,
        prompt=trace.prompt,
        turns=trace.turns,
        input_tokens=trace.input_tokens,
        output_tokens=trace.output_tokens,
        total_ms=trace.total_ms,
        final_text=trace.final_text,
        stop_reason=trace.stop_reason,
        error=trace.error,
        steps=steps,
        step_count=len(steps),
        redactions=dict(trace.redactions),
        status=rules.FINISHED,
    )
