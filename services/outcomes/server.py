"""Wires the outcomes context into a gRPC server, with its background jobs:
the `facts.booking` consumer, the sweep timer, the rollout guard and retention."""

from __future__ import annotations

from datetime import timedelta

import grpc

from outrider.v1 import decisions_pb2_grpc, outcomes_pb2, outcomes_pb2_grpc, registry_pb2_grpc, telemetry_pb2_grpc
from services.common import retention
from services.common.callers import Access
from services.common.runtime import Runtime
from services.outcomes.alerting.service import start_alerting
from services.outcomes.clients import DecisionsClient
from services.outcomes.consumer import FactsConsumer
from services.outcomes.guard.clients import CreditLedger, RegistryClient
from services.outcomes.guard.flow import Guard
from services.outcomes.retention import lifetimes
from services.outcomes.router import Router
from services.outcomes.service import OutcomesService
from services.outcomes.sweeper import Sweeper, run_on_timer

SERVICE_NAMES = (outcomes_pb2.DESCRIPTOR.services_by_name["Outcomes"].full_name, retention.SERVICE_NAME)
# The largest request this context takes. A sweep's verdicts (up to 1,000) or one conversation's turns.
MAX_REQUEST_BYTES = 4 * 1024 * 1024
# Who may call what (services.common.callers).
ACCESS = {
    "RecordFacts": Access.ENGINE,
    "SubmitConversation": Access.ENGINE,
    "RecommendModel": Access.ENGINE,
    "Sweep": Access.ENGINE,
    "GetConversationMetrics": Access.READ,
    "GetRouting": Access.READ,
    # Part of the decisions context's erasure of a subject, for a role-1 person.
    "EraseSubject": Access.WRITE,
    "GetRetention": Access.SERVICE,
    # Staff reads (DESIGN §10).
    "Evaluate": Access.READ,
    "GetAutonomyEvidence": Access.READ,
    "ListAlerts": Access.READ,
    # Scraped by the gateway's /metrics.
    "GetAlertDelivery": Access.SERVICE,
}
USES_NATS = True
MIN_SWEEP_INTERVAL_S = 1.0


async def attach(server: grpc.aio.Server, runtime: Runtime) -> None:
    decisions = DecisionsClient(runtime.clients.stub("decisions", decisions_pb2_grpc.DecisionsStub))
    registry = RegistryClient(runtime.clients.stub("registry", registry_pb2_grpc.RegistryStub))
    guard = Guard(
        registry,
        decisions,
        CreditLedger(runtime.engine),
        interval_s=max(runtime.settings.rollout_guard_interval_s, MIN_SWEEP_INTERVAL_S),
        autonomy=(registry, decisions),
    )
    # Alerts are evaluated after every sweep, like the guard, and on their own timer.
    alerts_due = start_alerting(
        runtime,
        decisions=runtime.clients.stub("decisions", decisions_pb2_grpc.DecisionsStub),
        telemetry=runtime.clients.stub("telemetry", telemetry_pb2_grpc.TelemetryStub),
        registry=runtime.clients.stub("registry", registry_pb2_grpc.RegistryStub),
    )

    def after_sweep() -> None:
        guard.wake()
        alerts_due.set()

    sweeper = Sweeper(
        engine=runtime.engine,
        decisions=decisions,
        window=timedelta(hours=runtime.settings.outcome_window_hours),
        after_sweep=after_sweep,
    )
    router = Router(runtime.engine, decisions=decisions)
    service = OutcomesService(runtime.engine, sweeper=sweeper, router=router, decisions=decisions)
    outcomes_pb2_grpc.add_OutcomesServicer_to_server(service, server)
    if runtime.js is None:
        raise RuntimeError("the outcomes context needs JetStream; USES_NATS makes the runtime connect it")
    consumer = FactsConsumer(runtime.js, runtime.engine, max_deliver=runtime.settings.max_deliver)
    # Subscribing before serving: a durable created here is in place before
    # the first event could matter, and a broker refusing it fails the start.
    subscription = await consumer.subscribe()
    runtime.spawn(consumer.consume(subscription), name="facts-consumer")
    # Closing the pull inbox before the connection drains: a drain otherwise
    # waits out its whole timeout on the expired fetch requests it still holds.
    runtime.on_close(subscription.unsubscribe)
    # A zero or negative interval would spin the timer; a second is the floor.
    interval = max(runtime.settings.sweep_interval_s, MIN_SWEEP_INTERVAL_S)
    runtime.spawn(run_on_timer(sweeper.sweep, interval_s=interval), name="sweep-timer")
    runtime.spawn(guard.run(), name="rollout-guard")
    retention.start(server, runtime, lifetimes(runtime.settings))
