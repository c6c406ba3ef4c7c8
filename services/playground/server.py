"""Wires the playground context into a gRPC server, with its retention job."""

from __future__ import annotations

import grpc
import httpx

from outrider.v1 import decisions_pb2_grpc, playground_pb2, playground_pb2_grpc, registry_pb2_grpc
from services.common import retention
from services.common.callers import Access
from services.common.runtime import Runtime
from services.playground.clients import DecisionsClient, RegistryClient
from services.playground.executors import ToolExecutors
from services.playground.model import model_client
from services.playground.retention import lifetimes
from services.playground.rules import TOOL_TIMEOUT_S, RunLimits
from services.playground.runs import Runs
from services.playground.service import PlaygroundService

SERVICE_NAMES = (playground_pb2.DESCRIPTOR.services_by_name["Playground"].full_name, retention.SERVICE_NAME)
# The largest request this context takes. A run request is an agent, a skill and a 2,000-character prompt.
MAX_REQUEST_BYTES = 1024 * 1024
# Who may call what (services.common.callers): a run costs model calls, so
# only a signed-in role-1 person may start one, never an engine key.
ACCESS = {
    "Run": Access.WRITE,
    "RunStream": Access.WRITE,
    "ListRuns": Access.READ,
    "GetRun": Access.READ,
    "GetStatus": Access.READ,
    "GetRetention": Access.SERVICE,
}
USES_NATS = False


async def attach(server: grpc.aio.Server, runtime: Runtime) -> None:
    settings = runtime.settings
    http = httpx.AsyncClient(timeout=TOOL_TIMEOUT_S)
    runtime.on_close(http.aclose)
    model = model_client(settings)
    if model is not None:
        runtime.on_close(model.close)
    executors = ToolExecutors(
        http=http,
        base_urls=settings.tool_base_urls,
        decisions=DecisionsClient(runtime.clients.stub("decisions", decisions_pb2_grpc.DecisionsStub)),
        max_body_bytes=settings.playground_http_read_bytes,
    )
    runs = Runs(
        settings=settings,
        db=runtime.engine,
        registry=RegistryClient(runtime.clients.stub("registry", registry_pb2_grpc.RegistryStub)),
        model=model,
        execute=executors,
        limits=RunLimits(
            deadline_s=float(settings.playground_run_deadline_s),
            tool_calls_per_turn=settings.playground_tool_calls_per_turn,
            result_bytes_per_run=settings.playground_result_bytes_per_run,
        ),
    )
    # Registered last, so it runs first at shutdown: ends of cancelled runs
    # are written before the HTTP client and the engine close.
    runtime.on_close(runs.close)
    playground_pb2_grpc.add_PlaygroundServicer_to_server(PlaygroundService(runs), server)
    retention.start(server, runtime, lifetimes(settings))
