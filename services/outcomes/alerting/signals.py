"""The signals the alert rules read, gathered only through other contexts'
APIs: decisions' judged windows, telemetry's insights and ingest state,
registry's halted rollouts. A source that fails leaves its rules unknown
for this pass, so their firing alerts neither fire anew nor resolve on a
missing reading."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime

from outrider.v1 import (
    common_pb2,
    decisions_pb2,
    decisions_pb2_grpc,
    registry_pb2,
    registry_pb2_grpc,
    telemetry_pb2,
    telemetry_pb2_grpc,
)
from services.common.clients import ContextCallError
from services.outcomes.rules import alerts
from services.outcomes.rules.alerts import JudgedWindow, Signals, StreamLoad

_log = logging.getLogger(__name__)

# Rollouts listed per page while collecting halted ones.
ROLLOUT_PAGE = 200


@dataclass(frozen=True)
class Reading:
    signals: Signals
    known_rules: frozenset[str]


@dataclass(frozen=True)
class IngestSignals:
    # The worst consumer's seconds behind, and that consumer (`STREAM/consumer`).
    lag_s: float
    lagging: str
    # Each stream, then each of its consumers, with how near it is to its limit.
    loads: list[StreamLoad]


def ingest_signals(reply: telemetry_pb2.IngestState) -> IngestSignals:
    """Telemetry's ingest state as the rules read it. A consumer's limit is
    the backlog past which it counts as too far behind (OUTRIDER_INGEST_LAG_MAX,
    the bound `/readyz` applies too)."""
    lag_s, lagging = 0.0, ""
    loads: list[StreamLoad] = []
    for stream in reply.streams:
        loads.append(StreamLoad(stream.name, stream.fullness, stream.measure))
        for consumer in stream.consumers:
            name = f"{stream.name}/{consumer.name}"
            if consumer.seconds_behind > lag_s:
                lag_s, lagging = consumer.seconds_behind, name
            if reply.pending_limit > 0:
                loads.append(
                    StreamLoad(
                        name,
                        consumer.pending / reply.pending_limit,
                        f"{consumer.pending:,} messages not yet delivered, of {reply.pending_limit:,}"
                        " (OUTRIDER_INGEST_LAG_MAX)",
                    )
                )
    return IngestSignals(lag_s=lag_s, lagging=lagging, loads=loads)


class SignalSources:
    def __init__(
        self,
        *,
        decisions: decisions_pb2_grpc.DecisionsStub,
        telemetry: telemetry_pb2_grpc.TelemetryStub,
        registry: registry_pb2_grpc.RegistryStub,
        window: int,
    ) -> None:
        self._decisions = decisions
        self._telemetry = telemetry
        self._registry = registry
        self._window = window

    async def read(self) -> Reading:
        known: set[str] = set()
        windows: list[JudgedWindow] = []
        last_runs: dict[str, datetime] = {}
        halted: list[tuple[str, str]] = []
        try:
            windows = await self._judged_windows()
            known.add(alerts.JUDGED_SUCCESS_DROP)
        except ContextCallError as error:
            _log.warning("judged windows unavailable; drops not evaluated", extra={"grpc_code": error.status.name})
        try:
            last_runs = await self._last_runs()
            known.add(alerts.AGENT_SILENT)
        except ContextCallError as error:
            _log.warning("insights unavailable; silence not evaluated", extra={"grpc_code": error.status.name})
        try:
            halted = await self._halted_rollouts()
            known.add(alerts.ROLLOUT_HALTED)
        except ContextCallError as error:
            _log.warning("rollouts unavailable; halts not evaluated", extra={"grpc_code": error.status.name})
        ingest: IngestSignals | None = None
        try:
            ingest = ingest_signals(await self._telemetry.GetIngestState(telemetry_pb2.GetIngestStateRequest()))
            known |= {alerts.INGEST_LAG, alerts.STREAM_FULL}
        except ContextCallError as error:
            _log.warning(
                "ingest state unavailable; ingest lag and stream fullness not evaluated",
                extra={"grpc_code": error.status.name},
            )
        signals = Signals(
            windows=windows,
            last_runs=last_runs,
            halted_rollouts=halted,
            ingest_lag_s=ingest.lag_s if ingest else None,
            lagging=ingest.lagging if ingest else "",
            streams=ingest.loads if ingest else (),
        )
        return Reading(signals, frozenset(known))

    async def _judged_windows(self) -> list[JudgedWindow]:
        reply: decisions_pb2.CountJudgedWindowsResponse = await self._decisions.CountJudgedWindows(
            decisions_pb2.CountJudgedWindowsRequest(window=self._window)
        )
        return [
            JudgedWindow(
                agent_id=item.agent_id,
                decision_type=item.decision_type,
                latest_judged=item.latest_judged,
                latest_successes=item.latest_successes,
                previous_judged=item.previous_judged,
                previous_successes=item.previous_successes,
            )
            for item in reply.items
        ]

    async def _last_runs(self) -> dict[str, datetime]:
        # The widest window insights answer: an agent that ran in it and then
        # stopped is the one that went silent.
        reply: telemetry_pb2.Insights = await self._telemetry.GetInsights(telemetry_pb2.GetInsightsRequest(days=30))
        return {
            agent.agent_id: agent.last_run_at.ToDatetime(tzinfo=UTC)
            for agent in reply.agents
            if agent.runs > 0 and agent.HasField("last_run_at")
        }

    async def _halted_rollouts(self) -> list[tuple[str, str]]:
        halted: list[tuple[str, str]] = []
        cursor = ""
        while True:
            page = common_pb2.PageRequest(limit=ROLLOUT_PAGE, cursor=cursor)
            reply: registry_pb2.ListRolloutsResponse = await self._registry.ListRollouts(
                registry_pb2.ListRolloutsRequest(state="halted", page=page)
            )
            halted += [(rollout.id, rollout.agent_id) for rollout in reply.items]
            cursor = reply.next_cursor
            if not cursor:
                return halted
