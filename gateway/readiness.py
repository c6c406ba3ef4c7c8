"""Whether the platform is ready: every context serving, the gateway's NATS
connection not lost, the streams with room and their consumers keeping up.

One reckoning, answered two ways: /readyz as JSON, and /metrics as
`outrider_ready` and `outrider_context_serving`, so an alert on the gauge
fires exactly when the probe is red.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from gateway import intake
from gateway.codec import telemetry as telemetry_codec
from gateway.intake import Intake
from services.common.clients import ContextClients
from services.common.health import DEPENDENCIES, dependency_service
from services.common.settings import CONTEXTS
from services.common.stream_state import StreamState

READINESS_TIMEOUT_S = 2.0
SERVING = "serving"


@dataclass(frozen=True)
class Readiness:
    contexts: dict[str, str]  # each context's health, in /readyz's words
    gateway: dict[str, str]  # the gateway's own dependencies
    streams: dict[str, Any]  # the streams' entry of /readyz
    stream_states: Sequence[StreamState] | None  # as read, None when NATS did not give them

    @property
    def ready(self) -> bool:
        return (
            all(state == SERVING for state in self.contexts.values())
            and self.gateway.get("nats") != "lost"
            and bool(self.streams["ready"])
        )

    def json(self) -> dict[str, Any]:
        return {"ready": self.ready, "contexts": self.contexts, "gateway": self.gateway, "streams": self.streams}


async def lost_dependencies(channel: grpc.aio.Channel) -> list[str]:
    """The dependencies a context says it cannot reach, each under a health
    service of its own; one it does not use is not found, and not lost."""

    async def lost(dependency: str) -> bool:
        try:
            reply = await health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(service=dependency_service(dependency)), timeout=READINESS_TIMEOUT_S
            )
        except grpc.aio.AioRpcError:
            return False
        return reply.status == health_pb2.HealthCheckResponse.NOT_SERVING

    answers = await asyncio.gather(*(lost(dependency) for dependency in DEPENDENCIES))
    return [dependency for dependency, gone in zip(DEPENDENCIES, answers, strict=True) if gone]


async def context_health(clients: ContextClients, context: str) -> str:
    """`serving`, `not_serving` (`not_serving: lost nats, postgres` naming what
    it cannot reach) or `unavailable: …`."""
    # First through the channel calls take, which reaches only replicas that
    # say SERVING: one answering means the context serves. When none does,
    # ask any replica what it says, so the answer tells NOT_SERVING from
    # unreachable.
    failure = ""
    for channel in (clients.channel(context), clients.probe_channel(context)):
        try:
            reply = await health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(), timeout=READINESS_TIMEOUT_S
            )
        except Exception as exc:  # noqa: BLE001 - any failure is "not ready"
            failure = f"unavailable: {type(exc).__name__}"
            continue
        state = health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status).lower()
        lost = await lost_dependencies(channel) if reply.status != health_pb2.HealthCheckResponse.SERVING else []
        return f"{state}: lost {', '.join(lost)}" if lost else state
    return failure


async def readiness(clients: ContextClients, otlp: Intake | None, *, lag_max: int) -> Readiness:
    async def streams() -> tuple[dict[str, Any], list[StreamState] | None]:
        try:
            states = await intake.read_streams(otlp)
        except Exception as exc:  # noqa: BLE001 - any failure is "not ready"
            return telemetry_codec.streams_unreadable_json(intake.unreadable(exc)), None
        return telemetry_codec.streams_readiness_json(states, lag_max=lag_max), states

    health, (streams_entry, states) = await asyncio.gather(
        asyncio.gather(*(context_health(clients, context) for context in CONTEXTS)), streams()
    )
    nats_state = otlp.nats_state() if otlp is not None else None
    return Readiness(
        contexts=dict(zip(CONTEXTS, health, strict=True)),
        gateway={"nats": nats_state} if nats_state is not None else {},
        streams=streams_entry,
        stream_states=states,
    )


def exposition(state: Readiness) -> str:
    """Prometheus text format 0.0.4."""
    ready, serving = "outrider_ready", "outrider_context_serving"
    lines = [
        f"# HELP {ready} Whether /readyz answers ready (1) or not (0) at this scrape.",
        f"# TYPE {ready} gauge",
        f"{ready} {int(state.ready)}",
        f"# HELP {serving} Whether the context answers its health check serving (1) or not (0) at this scrape.",
        f"# TYPE {serving} gauge",
        *(f'{serving}{{context="{context}"}} {int(health == SERVING)}' for context, health in state.contexts.items()),
    ]
    return "\n".join(lines) + "\n"
