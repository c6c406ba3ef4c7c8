"""Wires the telemetry context into a gRPC server: the servicer, the JetStream
ingests (task runs and OTLP spans), the heartbeat sink and the retention job."""

from __future__ import annotations

import grpc

from outrider.v1 import decisions_pb2_grpc, registry_pb2_grpc, telemetry_pb2, telemetry_pb2_grpc
from services.common import retention
from services.common.callers import Access
from services.common.runtime import Runtime
from services.common.settings import DEFAULT_MODEL_PRICES
from services.telemetry import rules
from services.telemetry.clients import DecisionsClient, RegistryClient
from services.telemetry.counters import Counters
from services.telemetry.heartbeats import HeartbeatSink
from services.telemetry.ingest import Ingest, IngestConfig
from services.telemetry.otlp.ingest import OtlpIngest
from services.telemetry.retention import lifetimes
from services.telemetry.service import TelemetryService

SERVICE_NAMES = (telemetry_pb2.DESCRIPTOR.services_by_name["Telemetry"].full_name, retention.SERVICE_NAME)
# The largest request this context takes. Queries only; runs arrive over JetStream, not gRPC.
MAX_REQUEST_BYTES = 1024 * 1024
# Who may call what (services.common.callers).
ACCESS = {
    "GetInsights": Access.READ,
    "GetRunSeries": Access.READ,
    "ListRuns": Access.READ,
    "ListRunFacets": Access.READ,
    "GetRun": Access.READ,
    "GetCounters": Access.SERVICE,
    "GetIngestState": Access.SERVICE,
    "GetRetention": Access.SERVICE,
}
USES_NATS = True


async def attach(server: grpc.aio.Server, runtime: Runtime) -> None:
    assert runtime.nats is not None and runtime.js is not None, "USES_NATS gives every context a connection"
    counters = Counters()
    config = IngestConfig.from_settings(runtime.settings)
    ingest = Ingest(runtime.nats, runtime.js, runtime.engine, counters, config)
    otlp_ingest = OtlpIngest(runtime.nats, runtime.js, runtime.engine, counters, config)
    # The consumers exist before the server says SERVING, so a health check
    # that passes means runs and spans are being taken from the stream.
    await ingest.start()
    await otlp_ingest.start()
    runtime.spawn(ingest.run(), name="ingest")
    runtime.spawn(otlp_ingest.run(), name="otlp-ingest")
    sink = await HeartbeatSink.start(runtime.nats, runtime.js, counters, runtime.settings.engine_agents)
    runtime.on_close(sink.stop)
    retention.start(server, runtime, lifetimes(runtime.settings))
    service = TelemetryService(
        runtime.engine,
        runtime.js,
        registry=RegistryClient(runtime.clients.stub("registry", registry_pb2_grpc.RegistryStub)),
        decisions=DecisionsClient(runtime.clients.stub("decisions", decisions_pb2_grpc.DecisionsStub)),
        counters=counters,
        prices=rules.price_table(runtime.settings.model_prices),
        price_source=rules.price_source(runtime.settings.model_prices, DEFAULT_MODEL_PRICES),
        pending_limit=runtime.settings.ingest_lag_max,
    )
    telemetry_pb2_grpc.add_TelemetryServicer_to_server(service, server)
