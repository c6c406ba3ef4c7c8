"""Playground request and response bodies (DESIGN.md §4, Playground)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator
from pydantic_core import PydanticCustomError

from gateway.contracts.common import FILLED, Contract, Page, Reply, text
from services.playground.rules import PROMPT_MAX_CHARS


class RunIn(Contract):
    agent_id: text(min_length=1, max_length=128, pattern=FILLED)
    skill_id: text(max_length=128) = Field(None, description="optional when the agent has exactly one skill")
    prompt: text(min_length=1, pattern=FILLED) = Field(
        json_schema_extra={"maxLength": PROMPT_MAX_CHARS},
        description=f"at most {PROMPT_MAX_CHARS} characters; longer answers 422 PROMPT_TOO_LONG",
    )

    @field_validator("prompt")
    @classmethod
    def _short_enough(cls, prompt: str) -> str:
        # Its own code (the console shows the limit), with the length and
        # the limit as details; refused here, before any other check.
        if len(prompt) > PROMPT_MAX_CHARS:
            raise PydanticCustomError(
                "PROMPT_TOO_LONG",
                "is {length} characters; the playground takes at most {max}",
                {"length": len(prompt), "max": PROMPT_MAX_CHARS},
            )
        return prompt


class TraceStep(Reply):
    turn: int
    tool: str
    input: dict[str, Any]
    outcome: Literal["executed", "unavailable", "proposed", "rejected"] = Field(
        description="proposed: a write tool's call, described and never executed"
    )
    reason: str
    result: str = Field(description="exactly what the model received as the tool result, redacted")
    error: str | None
    proposal: dict[str, Any] | None
    ms: int


class PlaygroundStatus(Reply):
    configured: bool = Field(description="false while runs are refused with 503 PLAYGROUND_NOT_CONFIGURED")
    reason: str = Field(description="why runs are refused, in words; empty while configured")
    default_model: str = Field(description="the model a run uses for an agent without a pin")


class RunSummary(Reply):
    id: str
    agent_id: str
    skill_id: str
    model: str
    prompt: str = Field(description="the prompt as the model received it, after redaction")
    turns: int
    input_tokens: int
    output_tokens: int
    total_ms: int
    final_text: str
    status: Literal["running", "finished", "interrupted"] = Field(
        description="running: steps so far are stored; finished: ended, stop_reason says how;"
        " interrupted: the playground stopped before the run ended"
    )
    stop_reason: str = Field(
        description="the model's own (end_turn, …), or turn_limit, deadline, error, cancelled (the caller went"
        " away), interrupted; empty while running"
    )
    error: str | None
    step_count: int
    created_by: str
    created_by_email: str
    created_at: str | None = Field(json_schema_extra={"format": "date-time"})
    redactions: dict[str, int] = Field(description="how many values of each kind were redacted (counts only)")


class RunTrace(RunSummary):
    steps: list[TraceStep]


class RunPage(Page[RunSummary]):
    pass
