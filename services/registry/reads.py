"""Registry reads that take more than one query: an agent's whole entry, the
skill listing of a named agent, and tools with who must confirm them.

Each runs on the caller's connection; simple listings go to the store directly.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncConnection

from services.registry import rules, store
from services.registry.inventory import Surface
from services.registry.snapshot import confirmation_by_agent, tool_requires_confirmation


@dataclass(frozen=True, slots=True)
class ConfirmedTool:
    """A tool and whether it waits for a human: per agent whose skills use it, and as one flag."""

    tool: rules.Tool
    requires_confirmation: bool
    by_agent: Mapping[str, bool]


@dataclass(frozen=True, slots=True)
class AgentDetail:
    agent: store.AgentRow
    skills: list[store.SkillRow]
    # The tools of the agent's skills.
    tools: list[ConfirmedTool]
    surfaces: list[Surface]


async def agent_detail(conn: AsyncConnection, agent_id: str) -> AgentDetail:
    row = await store.get_agent_row(conn, agent_id=agent_id)
    if row is None:
        raise rules.agent_not_found(agent_id, "id")
    skills = await store.list_skills(conn, agent_id=agent_id)
    names = sorted({name for skill in skills for name in skill.skill.tool_names})
    tools = await _confirmed(conn, await store.list_tools(conn, names=names))
    surfaces = await store.list_surfaces(conn, agent_id=agent_id)
    return AgentDetail(agent=row, skills=skills, tools=tools, surfaces=surfaces)


async def skills(conn: AsyncConnection, agent_id: str | None) -> list[store.SkillRow]:
    """Every skill, or one agent's; an agent that does not exist is refused."""
    if agent_id is not None and await store.get_agent(conn, agent_id=agent_id) is None:
        # An unknown agent is a typo, not an agent without skills; an empty
        # list would hide it.
        raise rules.agent_not_found(agent_id, "agent")
    return await store.list_skills(conn, agent_id=agent_id)


async def tools(conn: AsyncConnection, kind: str | None) -> list[ConfirmedTool]:
    """Every tool, or those of one kind."""
    return await _confirmed(conn, await store.list_tools(conn, kind=kind))


async def _confirmed(conn: AsyncConnection, tools: list[rules.Tool]) -> list[ConfirmedTool]:
    agents = await store.agents_by_id(conn)
    users = await store.tool_users(conn)
    confirmed = []
    for tool in tools:
        by_agent = confirmation_by_agent(tool, users.get(tool.name, ()), agents)
        confirmed.append(ConfirmedTool(tool, tool_requires_confirmation(tool, by_agent), by_agent))
    return confirmed
