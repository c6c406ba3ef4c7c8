"""Registry SQL. Functions take an open connection so callers compose them into
one transaction (a write and its audit rows commit together or not at all)."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection


@dataclass(frozen=True, slots=True)
class AgentRow:
    id: str
    name: str
    class_ref: str
    runtime: str
    purpose: str
    wake_on: str
    status: str
    has_autonomy_gate: bool
    autonomous: bool
    model: str | None
    skill_count: int
    tool_count: int


_AGENT_COLUMNS = """
    a.id, a.name, a.class_ref, a.runtime, a.purpose, a.wake_on, a.status,
    a.has_autonomy_gate, a.autonomous, a.model,
    (select count(*) from skills s where s.agent_id = a.id) as skill_count,
    (select count(distinct st.tool_name) from skills s join skill_tools st on st.skill_id = s.id
      where s.agent_id = a.id) as tool_count
"""


async def list_agents(conn: AsyncConnection) -> list[AgentRow]:
    rows = await conn.execute(text(f"select {_AGENT_COLUMNS} from agents a order by a.id"))
    return [AgentRow(**row._mapping) for row in rows]
