"""Wires the registry context into a gRPC server."""

from __future__ import annotations

import logging

import grpc

from outrider.v1 import registry_pb2, registry_pb2_grpc
from services.common.callers import Access
from services.common.runtime import Runtime
from services.registry.inventory import load_inventory
from services.registry.live import SnapshotHub
from services.registry.seeding import seed_if_empty
from services.registry.service import RegistryService

SERVICE_NAMES = (registry_pb2.DESCRIPTOR.services_by_name["Registry"].full_name,)
# The largest request this context takes. A registry write is a few fields; the snapshot goes the other way.
MAX_REQUEST_BYTES = 1024 * 1024
# Who may call what (services.common.callers): engines read the snapshot;
# the console reads and changes the rest through the gateway.
ACCESS = {
    "GetSnapshot": Access.ENGINE,
    "WatchSnapshot": Access.ENGINE,
    "ListAgents": Access.READ,
    "GetAgent": Access.READ,
    "ListSkills": Access.READ,
    "ListTools": Access.READ,
    "ListAudit": Access.READ,
    # A person's change; the autonomy guard (the platform, acting for nobody)
    # may only switch a guarded agent's autonomy off.
    "UpdateAgent": Access.WRITE_OR_PLATFORM,
    "CreateSkill": Access.WRITE,
    "UpdateSkill": Access.WRITE,
    # Another context's change, audited here for the person it acts for.
    "AppendAudit": Access.WRITE,
    # Rollouts: a person starts, pauses, resumes and aborts them; the rollout
    # guard (the platform itself, acting for nobody) gives the verdicts and
    # reads them with the same credential.
    "CreateRollout": Access.WRITE,
    "ListRollouts": Access.READ,
    "GetRollout": Access.READ,
    "PauseRollout": Access.WRITE,
    "ResumeRollout": Access.WRITE,
    "AbortRollout": Access.WRITE,
    "JudgeRollout": Access.SERVICE,
}
USES_NATS = False

_log = logging.getLogger(__name__)


async def attach(server: grpc.aio.Server, runtime: Runtime) -> None:
    try:
        async with runtime.engine.begin() as conn:
            await seed_if_empty(conn, load_inventory())
    except Exception:  # noqa: BLE001 - see below
        # A registry that cannot seed still serves what it holds: refusing to
        # start would take the engines' snapshot away over example data. The
        # transaction left nothing half-written.
        _log.exception("the registry could not be seeded at start; serving it as it is")
    hub = SnapshotHub(runtime.engine)
    await hub.start(runtime.spawn)
    runtime.on_close(hub.close)
    service = RegistryService(runtime.engine, runtime.settings, hub)
    registry_pb2_grpc.add_RegistryServicer_to_server(service, server)
