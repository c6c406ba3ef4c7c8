"""The snapshot: the whole registry as the engine reads it, as one JSON document.

Pure: records in, canonical bytes and an etag out. The etag is a hash of the
bytes, so it changes exactly when the content does, and every replica that
reads the same rows names them with the same etag. A counter or a build time
would differ between replicas, and an engine switching between them would
download the same document again and again.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from services.registry.rollouts.rules import ACTIVE_STATES, Rollout
from services.registry.rules import Agent, Skill, Tool, ToolKind, requires_confirmation

# Bumped when the document's shape changes in a way old engines cannot read.
DOCUMENT_FORMAT: Final = 1


@dataclass(frozen=True, slots=True)
class EncodedSnapshot:
    etag: str
    document: bytes


def confirmation_by_agent(tool: Tool, users: Iterable[str], agents: Mapping[str, Agent]) -> dict[str, bool]:
    """For each agent whose skills use the tool: must that agent ask a human before using it?"""
    return {
        agent_id: requires_confirmation(tool.kind, agents[agent_id].autonomous if agent_id in agents else False)
        for agent_id in sorted(users)
    }


def tool_requires_confirmation(tool: Tool, by_agent: Mapping[str, bool]) -> bool:
    """One flag for a shared tool: it waits for a human when any agent using it must ask.

    Showing "no confirmation" because one of two users is autonomous would
    tell the operator the other one acts alone too.
    """
    if not by_agent:
        return tool.kind is not ToolKind.READ
    return any(by_agent.values())


def build_document(
    agents: Iterable[Agent], skills: Iterable[Skill], tools: Iterable[Tool], rollouts: Iterable[Rollout] = ()
) -> dict[str, Any]:
    """What the engine obeys: switches, thresholds, autonomy, models, which
    tools wait for a human, and the rollouts whose candidates some subjects get.

    A halted, aborted or completed rollout is left out: every subject is on
    the baseline again (or the change is the baseline now), and an engine
    that still saw it would keep assigning subjects to a candidate that ended.
    """
    agents_by_id = {agent.id: agent for agent in agents}
    skill_list = sorted(skills, key=lambda skill: skill.id)
    users: dict[str, set[str]] = {}
    for skill in skill_list:
        for name in skill.tool_names:
            users.setdefault(name, set()).add(skill.agent_id)
    tool_entries: dict[str, Any] = {}
    for tool in sorted(tools, key=lambda tool: tool.name):
        by_agent = confirmation_by_agent(tool, users.get(tool.name, ()), agents_by_id)
        tool_entries[tool.name] = {
            "kind": tool.kind.value,
            "executor": tool.executor.value,
            "owner_agents": sorted(tool.owner_agents),
            "requires_confirmation": tool_requires_confirmation(tool, by_agent),
            "requires_confirmation_by_agent": by_agent,
        }
    document: dict[str, Any] = {
        "format": DOCUMENT_FORMAT,
        "agents": {
            agent.id: {
                "runtime": agent.runtime.value,
                "status": agent.status.value,
                "has_autonomy_gate": agent.has_autonomy_gate,
                "autonomous": agent.autonomous,
                "model": agent.model,
            }
            for agent in sorted(agents_by_id.values(), key=lambda agent: agent.id)
        },
        "skills": {
            skill.id: {
                "agent_id": skill.agent_id,
                "source": skill.source.value,
                "enabled": skill.enabled,
                "thresholds": dict(sorted(skill.thresholds.items())),
                "tool_names": list(skill.tool_names),
                "version": skill.version,
            }
            for skill in skill_list
        },
        "tools": tool_entries,
    }
    in_progress = [
        {
            "id": rollout.id,
            "agent_id": rollout.agent_id,
            "decision_type": rollout.decision_type,
            "percent": rollout.percent,
            "change": dict(rollout.change),
        }
        for rollout in sorted(rollouts, key=lambda rollout: rollout.id)
        if rollout.state in ACTIVE_STATES
    ]
    # Absent rather than empty: a registry with no rollout keeps the very
    # document (and etag) it had before rollouts existed, so an upgrade does
    # not send every engine the whole snapshot again for nothing.
    if in_progress:
        document["rollouts"] = in_progress
    return document


def encode(document: Mapping[str, Any]) -> EncodedSnapshot:
    """Canonical bytes (sorted keys, no spaces) and the etag that names them."""
    body = json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    return EncodedSnapshot(etag=hashlib.sha256(body).hexdigest()[:32], document=body)
