"""Registry records to and from protobuf: the only module that sees wire types."""

from __future__ import annotations

from outrider.v1 import registry_pb2

from services.registry.store import AgentRow


def agent_to_proto(row: AgentRow) -> registry_pb2.Agent:
    return registry_pb2.Agent(
        id=row.id,
        name=row.name,
        class_ref=row.class_ref,
        runtime=row.runtime,
        purpose=row.purpose,
        wake_on=row.wake_on,
        status=row.status,
        has_autonomy_gate=row.has_autonomy_gate,
        autonomous=row.autonomous,
        model=row.model or "",
        skill_count=row.skill_count,
        tool_count=row.tool_count,
    )
