"""The playground's rules: limits, which skill a run tests, and how an HTTP
read tool's request is built from the model's input. Pure: no I/O."""

from __future__ import annotations

import math
import re
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import quote

from services.common.errors import FieldError, InvalidArgument, NotFound, RateLimited

PROMPT_MAX_CHARS = 2000
MAX_TURNS = 6
MAX_TOKENS = 4096
RUN_DEADLINE_S = 120.0
TOOL_TIMEOUT_S = 5.0
TOOL_CALLS_PER_TURN = 8
RESULT_BYTES_PER_RUN = 128 * 1024
HTTP_READ_BYTES = 1024 * 1024
# Per user, counted over a sliding window and shared by every replica.
RUNS_PER_WINDOW = 10
RATE_WINDOW_S = 600

# A stored run is `running` from its admission until its end is written,
# then `finished`, its stop reason saying how it ended. One still running
# this long past its deadline was cut off by a playground that died (the
# deadline ends every live run, and its end is written within seconds):
# it is shown `interrupted`, with the steps written up to then.
RUNNING = "running"
FINISHED = "finished"
INTERRUPTED = "interrupted"
INTERRUPTED_AFTER_S = 60.0

_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


@dataclass(frozen=True, slots=True)
class RunLimits:
    max_turns: int = MAX_TURNS
    max_tokens: int = MAX_TOKENS
    deadline_s: float = RUN_DEADLINE_S
    tool_timeout_s: float = TOOL_TIMEOUT_S
    # Calls past this many in one model turn are not carried out; the model
    # is told so in each one's result.
    tool_calls_per_turn: int = TOOL_CALLS_PER_TURN
    # UTF-8 bytes of executed reads' results handed to the model in one run.
    result_bytes_per_run: int = RESULT_BYTES_PER_RUN


def run_status(stored: str, created_at: datetime, now: datetime, deadline_s: float) -> str:
    """What a stored run's status is, seen at `now`."""
    if stored == RUNNING and (now - created_at).total_seconds() > deadline_s + INTERRUPTED_AFTER_S:
        return INTERRUPTED
    return stored


def result_allowance(spent: int, per_run: int, per_result: int, smallest: int) -> int:
    """How many bytes the next executed read's result may take.

    At most a result's own cap, at most what is left of the run's budget;
    0 once what is left is smaller than `smallest`, since a result cut to a
    few bytes tells the model nothing but costs it a turn all the same.
    """
    left = per_run - spent
    return 0 if left < smallest else min(per_result, left)


def storable(value: Any) -> Any:
    """JSON-like data with every string fit to store and to send on.

    NUL and lone surrogates become U+FFFD. Postgres refuses NUL in text and
    jsonb, and neither UTF-8 (so protobuf, and the model API) nor jsonb has
    a lone surrogate: left in, one such character in a tool's answer or the
    model's text would fail the write of the whole run.
    """
    if isinstance(value, str):
        return _UNSTORABLE.sub("\ufffd", value)
    if isinstance(value, Mapping):
        return {storable(key) if isinstance(key, str) else key: storable(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [storable(item) for item in value]
    return value


class PlaygroundInputError(FieldError):
    """A run request the playground refuses; names the field at fault.

    Its message is the sentence given, already naming the field, as the
    console shows it.
    """

    def __init__(
        self, field: str, message: str, *, code: str | None = None, details: Mapping[str, Any] | None = None
    ) -> None:
        super().__init__(field, message, code=code, details=details, message=message)


class ToolInputError(Exception):
    """The model's input cannot be turned into a request; the model is told why."""


@dataclass(frozen=True, slots=True)
class SkillChoice:
    id: str
    title: str
    description: str
    tool_names: tuple[str, ...]


def check_agent_id(agent_id: str) -> str:
    if not agent_id:
        raise InvalidArgument("agent_id is required", field="agent_id")
    return agent_id


def check_prompt(prompt: str) -> str:
    if not prompt.strip():
        raise PlaygroundInputError("prompt", "prompt is required")
    if len(prompt) > PROMPT_MAX_CHARS:
        raise PlaygroundInputError(
            "prompt",
            f"prompt is {len(prompt)} characters; the playground takes at most {PROMPT_MAX_CHARS}",
            code="PROMPT_TOO_LONG",
            details={"length": len(prompt), "max": PROMPT_MAX_CHARS},
        )
    return prompt


def choose_skill(agent_id: str, skills: Sequence[SkillChoice], skill_id: str) -> SkillChoice:
    """The skill a run tests.

    Without a skill_id the agent's only skill is used. An agent with several
    must be told which: running with every skill's tools at once would test
    no skill in particular, and would grant tools across skills that the
    playground otherwise rejects as outside the selected one. A disabled
    skill may be tried, since the playground never acts and trying a skill
    is how an operator decides whether to enable it.
    """
    if skill_id:
        for skill in skills:
            if skill.id == skill_id:
                return skill
        raise PlaygroundInputError(
            "skill_id",
            f"agent {agent_id} has no skill {skill_id}",
            code="UNKNOWN_SKILL",
            details={"skills": [s.id for s in skills]},
        )
    if not skills:
        raise PlaygroundInputError("agent_id", f"agent {agent_id} has no skills to try", code="NO_SKILLS")
    if len(skills) > 1:
        raise PlaygroundInputError(
            "skill_id",
            f"agent {agent_id} has {len(skills)} skills; name the one to try",
            details={"skills": [s.id for s in skills]},
        )
    return skills[0]


def rate_limited(retry_after_s: float) -> RateLimited:
    """The refusal of a run past the user's limit, with the whole seconds until the next one fits."""
    wait = math.ceil(retry_after_s)
    return RateLimited(
        f"at most {RUNS_PER_WINDOW} playground runs per {RATE_WINDOW_S // 60} minutes; try again in {wait} s",
        details={"limit": RUNS_PER_WINDOW, "window_s": RATE_WINDOW_S, "retry_after_s": wait},
    )


def run_not_found(run_id: uuid.UUID) -> NotFound:
    return NotFound(f"playground run {run_id} does not exist", code="RUN_NOT_FOUND", details={"id": str(run_id)})


NOT_CONFIGURED = "the playground is not configured: set ANTHROPIC_API_KEY to let it call the model"


@dataclass(frozen=True, slots=True)
class Status:
    configured: bool
    reason: str
    default_model: str


def status(*, configured: bool, default_model: str) -> Status:
    """What the playground can do now; the reason is the refusal a run would get."""
    return Status(configured=configured, reason="" if configured else NOT_CONFIGURED, default_model=default_model)


def model_for(pinned: str, default: str) -> str:
    """The agent's registry pin wins; the configured default covers the rest."""
    return pinned.strip() or default


def system_prompt(agent_id: str, skill: SkillChoice) -> str:
    # The model is told plainly that nothing it does here takes effect, so
    # that a proposal comes back described as an intention, not as done.
    lines = [
        f"You are agent {agent_id}, running skill {skill.id} ({skill.title}) in a test playground.",
        "Tools that change anything are not carried out here: they return a proposal for a person to confirm.",
        "Some tools are unavailable in the playground; say so when one is, rather than guessing its result.",
        "Personal data in tool results is masked.",
    ]
    if skill.description:
        lines.append(f"What the skill is for: {skill.description}")
    return "\n".join(lines)


def http_request_parts(template: str, tool_input: Mapping[str, Any]) -> tuple[str, list[tuple[str, str]]]:
    """The path and query string for a GET built from the model's input.

    Each `{name}` in the template takes that input value, URL-quoted whole,
    so a value can never add a path segment or a query of its own; the other
    input values become query parameters.
    """
    if not template.startswith("/"):
        raise ToolInputError(f"the tool's path {template!r} must start with /")
    used: set[str] = set()

    def fill(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in tool_input or tool_input[name] is None:
            raise ToolInputError(f"{name} is required")
        text = _scalar(name, tool_input[name])
        # Quoting leaves dots alone, and a segment of only dots would walk
        # up the path once the URL is normalised.
        if not text or set(text) == {"."}:
            raise ToolInputError(f"{name} must not be empty or dots only")
        used.add(name)
        return quote(text, safe="")

    path = _PLACEHOLDER.sub(fill, template)
    query: list[tuple[str, str]] = []
    for name, value in tool_input.items():
        if name in used or value is None:
            continue
        if isinstance(value, list):
            query.extend((name, _scalar(name, item)) for item in value)
        else:
            query.append((name, _scalar(name, value)))
    return path, query


def _scalar(name: str, value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float | str):
        return str(value)
    raise ToolInputError(f"{name} must be a string, number or boolean, got {type(value).__name__}")
