"""What the playground does when the model asks for a tool.

The playground runs against production, so the rule is simple and strict:
reads it can serve itself execute, writes only ever become proposals, and
anything it cannot serve says so plainly rather than pretending.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any


class ToolKind(StrEnum):
    READ = "read"
    WRITE = "write"
    NOTIFY = "notify"
    EVENT = "event"


class ToolExecutor(StrEnum):
    # Served by Outrider's own read executors.
    OUTRIDER = "outrider"
    # A GET against a configured base URL.
    HTTP = "http"
    # Lives inside an agent process; the playground cannot reach it.
    ENGINE = "engine"
    # A model call of its own.
    LLM = "llm"
    # Proposal verbs and console reads run in the operator's console.
    CONSOLE = "console"


class ToolOutcome(StrEnum):
    EXECUTED = "executed"
    UNAVAILABLE = "unavailable"
    PROPOSED = "proposed"
    REJECTED = "rejected"


@dataclass(frozen=True, slots=True)
class PlaygroundTool:
    name: str
    kind: ToolKind
    executor: ToolExecutor
    # For HTTP tools: the name of the setting that holds the base URL.
    base_url_key: str | None = None
    http_method: str = "GET"


@dataclass(frozen=True, slots=True)
class ToolDecision:
    outcome: ToolOutcome
    reason: str


def decide_tool_outcome(
    tool: PlaygroundTool | None,
    skill_tool_names: Collection[str],
    configured_base_urls: Mapping[str, str],
) -> ToolDecision:
    """Decide what happens to one tool call.

    `tool` is the registry's entry for the requested name, None when the
    registry has no such tool. `configured_base_urls` maps setting names to
    URLs; a blank URL counts as not configured, since an empty environment
    variable is the usual way a missing one shows up.
    """
    if tool is None:
        return ToolDecision(ToolOutcome.REJECTED, "no such tool in the registry")
    # The skill is the whole grant. A tool the registry knows but the skill
    # does not list is refused, or testing one skill would quietly test another.
    if tool.name not in skill_tool_names:
        return ToolDecision(ToolOutcome.REJECTED, f"{tool.name} is not a tool of the selected skill")
    if tool.kind is not ToolKind.READ:
        return ToolDecision(
            ToolOutcome.PROPOSED,
            f"{tool.kind} tools are never executed from the playground; returned as a proposal",
        )
    if tool.executor is ToolExecutor.OUTRIDER:
        return ToolDecision(ToolOutcome.EXECUTED, "read served by Outrider")
    if tool.executor is ToolExecutor.HTTP:
        return _http_read(tool, configured_base_urls)
    if tool.executor is ToolExecutor.ENGINE:
        return ToolDecision(
            ToolOutcome.UNAVAILABLE, f"{tool.name} runs inside the agent engine, out of the playground's reach"
        )
    if tool.executor is ToolExecutor.CONSOLE:
        return ToolDecision(
            ToolOutcome.UNAVAILABLE,
            f"{tool.name} runs in the operator's console, on the operator's session; the playground has neither",
        )
    # What remains is an LLM tool.
    return ToolDecision(
        ToolOutcome.UNAVAILABLE, f"{tool.name} is itself a model call; the playground does not nest models"
    )


def proposal_payload(tool: PlaygroundTool, tool_input: Mapping[str, Any]) -> dict[str, Any]:
    """What the model receives instead of a write's result.

    It says plainly that nothing happened, so the model reports an intended
    change rather than a done one.
    """
    if tool.kind is ToolKind.READ:
        raise ValueError(f"{tool.name} is a read tool; reads execute or are unavailable, never proposed")
    return {
        "executed": False,
        "proposal": {
            "tool": tool.name,
            "kind": str(tool.kind),
            "input": dict(tool_input),
            "requires_confirmation": True,
        },
    }


def _http_read(tool: PlaygroundTool, configured_base_urls: Mapping[str, str]) -> ToolDecision:
    # Only GET: a read tool declared with another method may change state on
    # the far side whatever its label says, and the playground must not.
    if tool.http_method.upper() != "GET":
        return ToolDecision(
            ToolOutcome.UNAVAILABLE,
            f"{tool.name} uses {tool.http_method.upper()}; the playground sends GET only",
        )
    if not tool.base_url_key:
        return ToolDecision(ToolOutcome.UNAVAILABLE, f"{tool.name} names no base URL setting")
    if not configured_base_urls.get(tool.base_url_key, "").strip():
        return ToolDecision(ToolOutcome.UNAVAILABLE, f"base URL {tool.base_url_key} is not configured")
    return ToolDecision(ToolOutcome.EXECUTED, f"GET against {tool.base_url_key}")
