"""Recording decisions and asking for precedents, without ever slowing the engine.

An engine records a decision on its hot path. `DecisionRecorder.record()`
therefore only enqueues: a background task sends, retrying with the decision's
own id so a retry can never record it twice. What has queued up while a call
was in flight goes out together in one RecordDecisions call, so a busy engine
pays one round trip per batch rather than per decision, and a quiet one still
sends each decision alone, at once. When Outrider is down the queue fills to
its bound and further decisions are dropped and counted, rather than growing
memory until the engine dies.

Given the engine's RegistryClient, the recorder stamps each decision with
the rollout arm its subject is in (DESIGN §9) from the snapshot in memory,
so the rollout guard counts it for the right arm without the engine author
doing anything.
"""

from __future__ import annotations

import asyncio
import logging
import random
import uuid
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import grpc

from outrider.client.registry import RegistryClient
from outrider.client.rollouts import Assignment
from outrider.client.routing import ModelChoice
from outrider.errors import refusal
from outrider.precedent_stream import PrecedentSearches, SearchStreamBroken
from outrider.rpc import PERMANENT_CODES, TlsFiles, keyed_channel
from outrider.v1 import common_pb2, decisions_pb2, decisions_pb2_grpc
from outrider.wire import json_bytes, timestamp, timestamp_datetime

_log = logging.getLogger(__name__)

# The most decisions one RecordDecisions call may carry (decisions.proto).
MAX_BATCH = 500


@dataclass
class RecorderCounters:
    """What happened to every decision handed to record()."""

    sent: int = 0
    # Sends repeated after a failed call, counted per decision.
    retried: int = 0
    dropped: Counter[str] = field(default_factory=Counter)


class DecisionRecorder:
    """Fire-and-forget decision recording.

    >>> recorder = DecisionRecorder("127.0.0.1:50052", internal_key)
    >>> decision_id = recorder.record(decision_type="stall_response", agent_id="EXCEPTION_AGENT",
    ...                               subject_id="BK-1042", context={"stall_minutes": 14},
    ...                               action="reassign", confidence=0.82)
    >>> await recorder.close()   # drains what is queued, within the timeout

    With `registry` (the engine's RegistryClient), a decision whose agent
    and type have a running or paused rollout carries its subject's arm.
    """

    def __init__(
        self,
        address: str,
        internal_key: str,
        *,
        max_queue: int = 10_000,
        call_timeout_s: float = 2.0,
        max_attempts: int = 8,
        backoff_s: tuple[float, float] = (0.2, 10.0),
        max_batch: int = MAX_BATCH,
        channel: grpc.aio.Channel | None = None,
        tls: TlsFiles | None = None,
        registry: RegistryClient | None = None,
    ) -> None:
        if not 1 <= max_batch <= MAX_BATCH:
            raise ValueError(f"max_batch must be between 1 and {MAX_BATCH}, got {max_batch}")
        self._channel = channel or keyed_channel(address, internal_key, tls=tls)
        self._stub = decisions_pb2_grpc.DecisionsStub(self._channel)
        self._queue: asyncio.Queue[decisions_pb2.RecordDecisionRequest] | None = None
        self._max_queue = max_queue
        self._call_timeout_s = call_timeout_s
        self._max_attempts = max_attempts
        self._backoff_s = backoff_s
        self._max_batch = max_batch
        self._registry = registry
        # Cleared when the server predates RecordDecisions: one call at a time then.
        self._batches = True
        self._worker: asyncio.Task[None] | None = None
        self._closed = False
        self.counters = RecorderCounters()

    def record(
        self,
        *,
        decision_type: str,
        agent_id: str,
        subject_id: str,
        action: str,
        confidence: float,
        context: Mapping[str, Any] | None = None,
        reasoning: str = "",
        model: str = "",
        embedding: Sequence[float] | None = None,
        decided_at: datetime | None = None,
        decision_id: str | None = None,
        rollout: Assignment | None = None,
        model_propensity: float | None = None,
        execution: str = "",
        route: ModelChoice | None = None,
    ) -> str:
        """Queue one decision and return its id at once. Never raises.

        `rollout` is the arm the engine decided under (SubjectSettings.assignment
        of the settings it obeyed); left out, the registry client's snapshot
        says, as it stands when the decision is recorded.

        `model_propensity` is the probability RecommendModel gave `model`
        (its answer's `propensity`), and `execution` how the action was
        carried out: autonomous, confirmed, overridden or proposed (DESIGN
        §10). A value out of range is refused by Outrider and dropped here,
        counted, like any other refused decision. `route`, the choice
        ModelRouter.choose() answered, sets both `model` and
        `model_propensity` from it.
        """
        decision_id = decision_id or str(uuid.uuid4())
        if route is not None:
            model, model_propensity = route.model, route.propensity
        if rollout is None and self._registry is not None:
            rollout = self._registry.assignment(agent_id, decision_type, subject_id)
        try:
            request = decisions_pb2.RecordDecisionRequest(
                id=decision_id,
                decision_type=decision_type,
                agent_id=agent_id,
                subject_id=subject_id,
                action=action,
                confidence=confidence,
                context_json=json_bytes(dict(context or {})),
                reasoning=reasoning,
                model=model,
                embedding=list(embedding or ()),
                decided_at=timestamp(decided_at or datetime.now(UTC)),
                rollout=common_pb2.RolloutArm(id=rollout.rollout_id, arm=rollout.arm) if rollout else None,
                model_propensity=model_propensity,
                execution=execution,
            )
        except (TypeError, ValueError) as error:
            self._drop("unencodable", decision_id, error)
            return decision_id
        if self._closed:
            self._drop("closed", decision_id)
            return decision_id
        try:
            queue = self._ensure_worker()
            queue.put_nowait(request)
        except RuntimeError as error:  # no running event loop
            self._drop("no_event_loop", decision_id, error)
        except asyncio.QueueFull:
            self._drop("queue_full", decision_id)
        return decision_id

    async def flush(self, timeout_s: float | None = None) -> bool:
        """Wait until everything queued so far is sent or dropped; False on timeout."""
        if self._queue is None:
            return True
        try:
            await asyncio.wait_for(self._queue.join(), timeout_s)
        except TimeoutError:
            return False
        return True

    async def close(self, timeout_s: float = 5.0) -> None:
        """Stop taking decisions, drain within the timeout, count what is left."""
        self._closed = True
        await self.flush(timeout_s)
        if self._worker is not None:
            self._worker.cancel()
            await asyncio.gather(self._worker, return_exceptions=True)
        while self._queue is not None and not self._queue.empty():
            request = self._queue.get_nowait()
            self._drop("shutdown", request.id)
        await self._channel.close(None)

    def _ensure_worker(self) -> asyncio.Queue[decisions_pb2.RecordDecisionRequest]:
        asyncio.get_running_loop()
        if self._queue is None:
            self._queue = asyncio.Queue(self._max_queue)
        if self._worker is None or self._worker.done():
            self._worker = asyncio.get_running_loop().create_task(self._send_forever(), name="outrider-recorder")
        return self._queue

    async def _send_forever(self) -> None:
        assert self._queue is not None
        while True:
            batch = [await self._queue.get()]
            limit = self._max_batch if self._batches else 1
            while len(batch) < limit and not self._queue.empty():
                batch.append(self._queue.get_nowait())
            try:
                if len(batch) == 1:
                    await self._send(batch[0])
                else:
                    await self._send_batch(batch)
            finally:
                for _ in batch:
                    self._queue.task_done()

    async def _send(self, request: decisions_pb2.RecordDecisionRequest) -> None:
        low, high = self._backoff_s
        for attempt in range(1, self._max_attempts + 1):
            try:
                await self._stub.RecordDecision(request, timeout=self._call_timeout_s)
            except grpc.aio.AioRpcError as error:
                refused = refusal(error)
                if error.code() in PERMANENT_CODES:
                    self._drop("rejected", request.id, f"{refused.code}: {refused.message}")
                    return
                if attempt == self._max_attempts:
                    self._drop("retries_exhausted", request.id, refused.code)
                    return
                self.counters.retried += 1
                # Full jitter: a fleet of engines reconnecting must not retry in step.
                await asyncio.sleep(random.uniform(0, min(high, low * 2**attempt)))
            else:
                self.counters.sent += 1
                return

    async def _send_batch(self, batch: list[decisions_pb2.RecordDecisionRequest]) -> None:
        low, high = self._backoff_s
        request = decisions_pb2.RecordDecisionsRequest(decisions=batch)
        for attempt in range(1, self._max_attempts + 1):
            try:
                reply = await self._stub.RecordDecisions(request, timeout=self._call_timeout_s)
            except grpc.aio.AioRpcError as error:
                if error.code() == grpc.StatusCode.UNIMPLEMENTED:
                    # An Outrider older than the batch call: the same
                    # decisions one by one, and no batches from now on.
                    self._batches = False
                    for single in batch:
                        await self._send(single)
                    return
                refused = refusal(error)
                if error.code() in PERMANENT_CODES:
                    for single in batch:
                        self._drop("rejected", single.id, f"{refused.code}: {refused.message}")
                    return
                if attempt == self._max_attempts:
                    for single in batch:
                        self._drop("retries_exhausted", single.id, refused.code)
                    return
                # Every decision carries its id, so resending the whole batch
                # records none of them twice.
                self.counters.retried += len(batch)
                await asyncio.sleep(random.uniform(0, min(high, low * 2**attempt)))
            else:
                for result in reply.results:
                    if result.error_code:
                        self._drop("rejected", result.id, f"{result.error_code}: {result.error_message}")
                    else:
                        self.counters.sent += 1
                return

    def _drop(self, reason: str, decision_id: str, detail: object = None) -> None:
        self.counters.dropped[reason] += 1
        _log.warning("decision dropped", extra={"reason": reason, "decision_id": decision_id, "detail": str(detail)})


@dataclass(frozen=True, slots=True)
class Precedent:
    id: str
    action: str
    outcome: str
    similarity: float
    confidence: float
    model: str
    decided_at: datetime | None


@dataclass(frozen=True, slots=True)
class Precedents:
    """Judged precedents, nearest first. `available` is False when Outrider did
    not answer in time: an empty list then means "unknown", not "no precedent"."""

    items: tuple[Precedent, ...]
    successes: int
    failures: int
    success_rate: float | None
    available: bool


class PrecedentClient:
    """Similar judged decisions, with a short timeout and a safe empty answer,
    over one stream (PrecedentSearches)."""

    def __init__(
        self,
        address: str,
        internal_key: str,
        *,
        timeout_s: float = 0.5,
        channel: grpc.aio.Channel | None = None,
        tls: TlsFiles | None = None,
    ) -> None:
        self._channel = channel or keyed_channel(address, internal_key, tls=tls)
        self._searches = PrecedentSearches(self._channel)
        self._timeout_s = timeout_s
        self.unavailable = 0

    async def precedents(
        self,
        decision_type: str,
        context: Mapping[str, Any] | None = None,
        k: int = 10,
        *,
        embedding: Sequence[float] | None = None,
    ) -> Precedents:
        """Judged precedents for a context (embedded by Outrider) or an embedding of the engine's own."""
        search = decisions_pb2.FindSimilarRequest(
            decision_type=decision_type,
            k=k,
            embedding=embedding or (),
            context_json=json_bytes(dict(context)) if context is not None else b"",
        )
        try:
            # A deadline on this task, not a task per search as wait_for makes.
            async with asyncio.timeout(self._timeout_s):
                answer = await self._searches.search(search)
        except TimeoutError:
            return self._unavailable(grpc.StatusCode.DEADLINE_EXCEEDED.name)
        except SearchStreamBroken as broken:
            return self._unavailable(broken.code.name if broken.code else "CLOSED")
        if answer.HasField("refused"):
            return self._unavailable(answer.refused.code or answer.refused.status)
        found = answer.found
        items = tuple(
            Precedent(
                id=d.id,
                action=d.action,
                outcome=d.outcome,
                similarity=d.similarity,
                confidence=d.confidence,
                model=d.model,
                decided_at=timestamp_datetime(d.decided_at, d.HasField("decided_at")),
            )
            for d in found.items
        )
        summary = found.summary
        rate = summary.success_rate if summary.HasField("success_rate") else None
        return Precedents(items, summary.successes, summary.failures, rate, available=True)

    def _unavailable(self, code: str) -> Precedents:
        self.unavailable += 1
        _log.warning("precedents unavailable", extra={"code": code})
        return Precedents((), 0, 0, None, available=False)

    async def close(self) -> None:
        await self._searches.close()
        await self._channel.close(None)
