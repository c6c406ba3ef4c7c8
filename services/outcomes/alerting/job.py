"""One alert pass: read the signals, evaluate the rules, and store the
transitions with their outbox rows in one transaction."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import uuid
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any, Protocol

from sqlalchemy.ext.asyncio import AsyncEngine

from services.outcomes import store
from services.outcomes.alerting.signals import Reading
from services.outcomes.rules import alerts
from services.outcomes.rules.alerts import AlertKey, Thresholds

_log = logging.getLogger(__name__)


class Sources(Protocol):
    async def read(self) -> Reading:
        """The signals of this pass, and the rules they let be evaluated."""


def alert_document(alert: store.StoredAlert) -> dict[str, Any]:
    """The alert as DESIGN §10 shows it, in the webhook and the listing alike."""
    return {
        "id": alert.id,
        "rule": alert.rule,
        "agent_id": alert.agent_id or None,
        "decision_type": alert.decision_type or None,
        "rollout_id": alert.subject if alert.rule == alerts.ROLLOUT_HALTED else None,
        "state": alert.state,
        "summary": alert.summary,
        "value": alert.value,
        "threshold": alert.threshold,
        "started_at": alert.started_at.isoformat(),
        "resolved_at": alert.resolved_at.isoformat() if alert.resolved_at else None,
    }


def delivery_body(transition: alerts.Transition, alert: store.StoredAlert) -> str:
    """Fixed when the transition is stored: every retry sends the same bytes
    under the same signature."""
    document = {
        "transition": transition,
        "alert": alert_document(alert),
        "text": alerts.slack_text(transition, alert.rule, alert.summary),
    }
    return json.dumps(document, separators=(",", ":"), sort_keys=True)


def _key(alert: store.StoredAlert) -> AlertKey:
    return AlertKey(alert.rule, alert.agent_id, alert.decision_type, alert.subject)


class Alerter:
    def __init__(
        self,
        *,
        engine: AsyncEngine,
        sources: Sources,
        thresholds: Thresholds,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self._engine = engine
        self._sources = sources
        self._thresholds = thresholds
        self._clock = clock
        self.delivered = asyncio.Event()  # set when a pass queued something to deliver

    async def evaluate(self) -> list[alerts.AlertTransition]:
        reading = await self._sources.read()
        now = self._clock()
        should_fire = alerts.evaluate(reading.signals, now=now, thresholds=self._thresholds)
        async with self._engine.begin() as conn:
            stored = {_key(a): a for a in await store.firing_alerts(conn)}
            moves = alerts.transitions(stored, should_fire, known_rules=reading.known_rules)
            opened = await store.open_alerts(
                conn,
                [
                    store.NewAlert(
                        id=str(uuid.uuid4()),
                        rule=m.key.rule,
                        agent_id=m.key.agent_id,
                        decision_type=m.key.decision_type,
                        subject=m.key.subject,
                        summary=m.alert.summary,
                        value=m.alert.value,
                        threshold=m.alert.threshold,
                    )
                    for m in moves
                    if m.transition == "firing" and m.alert is not None
                ],
                now=now,
            )
            resolved = await store.resolve_alerts(
                conn, alert_ids=[stored[m.key].id for m in moves if m.transition == "resolved"], now=now
            )
            await store.enqueue_deliveries(
                conn,
                [store.Delivery(str(uuid.uuid4()), row.id, "firing", delivery_body("firing", row)) for row in opened]
                + [
                    store.Delivery(str(uuid.uuid4()), row.id, "resolved", delivery_body("resolved", row))
                    for row in resolved
                ],
            )
        if moves:
            _log.info("alerts moved", extra={"transitions": [(m.transition, m.key.rule) for m in moves]})
            self.delivered.set()
        return moves


async def run_on_timer(evaluate: Callable[[], Awaitable[object]], *, interval_s: float, wake: asyncio.Event) -> None:
    """Evaluate every interval, or sooner when a sweep finished (`wake`);
    a failed pass is logged and the next one retries."""
    while True:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(wake.wait(), timeout=interval_s)
        wake.clear()
        try:
            await evaluate()
        except asyncio.CancelledError:
            raise
        except Exception:  # noqa: BLE001 - the next pass retries; the job must outlive one bad pass
            _log.exception("alert evaluation failed; retrying at the next interval")
