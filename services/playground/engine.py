"""The run loop: one prompt through the model's tool use, within the limits.

Every tool call the model makes is decided by the tool policy. One Redactor
per run sees everything on its way to the model or the trace: the prompt,
the system text, every tool result and every error, then the model's own
tool inputs and answer as the trace keeps them. Results are redacted first
and capped after: each to its own cap and to what is left of the run's
result budget; calls past the per-turn limit are not carried out. The loop
never raises for what the model API or a tool does: an error or a passed
deadline ends the run, or the tool call, with the error written into the
trace, since a trace of what happened up to the failure is what the
operator came for. What it cannot foresee (a cancelled call, a bug) the
caller ends with `RunLoop.stop`, from the steps taken so far.
"""

from __future__ import annotations

import asyncio
import logging
import time
import traceback
from collections.abc import Awaitable, Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Any, cast

import anthropic
from anthropic.types import Message, MessageParam, ToolParam

from services.common.redaction.redactor import DEFAULT_RULES, JsonValue, RedactionRules, Redactor
from services.playground.redaction import DEFAULT_RESULT_LIMIT, cap_result
from services.playground.rules import RunLimits, result_allowance, storable
from services.playground.tool_policy import (
    PlaygroundTool,
    ToolDecision,
    ToolOutcome,
    decide_tool_outcome,
    proposal_payload,
)

_log = logging.getLogger(__name__)


class ToolFailure(Exception):
    """An executed read failed; the message goes to the model and the trace."""


class _UnreadableAnswer(Exception):
    pass


@dataclass(frozen=True, slots=True)
class ToolSpec:
    policy: PlaygroundTool
    description: str
    input_schema: Mapping[str, Any]
    # For HTTP reads: the path template filled from the model's input.
    http_path: str = ""

    def for_model(self) -> dict[str, Any]:
        return {"name": self.policy.name, "description": self.description, "input_schema": dict(self.input_schema)}


@dataclass(frozen=True, slots=True)
class RunPlan:
    agent_id: str
    skill_id: str
    model: str
    system: str
    prompt: str
    # The selected skill's tools: the only ones offered, the only ones granted.
    tools: tuple[ToolSpec, ...]
    # Every tool the registry described for the agent, so a call outside the
    # skill can be named for what it is.
    catalog: Mapping[str, ToolSpec]
    base_urls: Mapping[str, str] = field(default_factory=dict)

    @property
    def skill_tool_names(self) -> frozenset[str]:
        return frozenset(spec.policy.name for spec in self.tools)


@dataclass(frozen=True, slots=True)
class Step:
    turn: int
    tool: str
    input: Mapping[str, Any]
    outcome: str
    reason: str
    result: str
    ms: int
    error: str = ""
    proposal: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class Trace:
    model: str
    # The prompt as the model received it.
    prompt: str
    turns: int
    input_tokens: int
    output_tokens: int
    total_ms: int
    final_text: str
    stop_reason: str
    error: str
    steps: tuple[Step, ...]
    # How many values of each kind were replaced: counts only.
    redactions: Mapping[str, int]


Executor = Callable[[ToolSpec, Mapping[str, Any]], Awaitable[Any]]
StepSink = Callable[[Step], Awaitable[None]]

# Stop reasons the loop itself writes, next to the model's own.
TURN_LIMIT = "turn_limit"
DEADLINE = "deadline"
ERROR = "error"
# The caller went away (or the playground shut down) before the run ended.
CANCELLED = "cancelled"

# A read whose share of the run's result budget would be smaller than this
# is not carried out: a result cut to a few bytes tells the model nothing.
SMALLEST_RESULT = 256


@dataclass(frozen=True, slots=True)
class Progress:
    """What a run has used so far, for the stored row between its steps."""

    turns: int
    input_tokens: int
    output_tokens: int
    redactions: Mapping[str, int]


def failure_fields(error: BaseException, redactor: Redactor) -> dict[str, Any]:
    """What a log may say about an unexpected exception.

    Its text can hold whatever data it failed on, so the text is redacted.
    The traceback goes as frames only (file, line, code), which name no
    value but the literals in the code, and those are redacted too.
    """
    return {
        "error_type": type(error).__name__,
        "detail": redactor.text(str(error)),
        "frames": [redactor.text(frame) for frame in traceback.format_tb(error.__traceback__)],
    }


async def run(
    plan: RunPlan,
    *,
    client: anthropic.AsyncAnthropic,
    execute: Executor,
    limits: RunLimits = RunLimits(),
    on_step: StepSink | None = None,
    redaction: RedactionRules = DEFAULT_RULES,
) -> Trace:
    loop = RunLoop(plan, client=client, execute=execute, limits=limits, redactor=Redactor(redaction))
    return await loop.run(on_step=on_step)


class RunLoop:
    """One run: its conversation with the model, and the trace it has so far."""

    def __init__(
        self,
        plan: RunPlan,
        *,
        client: anthropic.AsyncAnthropic,
        execute: Executor,
        limits: RunLimits = RunLimits(),
        redactor: Redactor | None = None,
    ) -> None:
        self.plan, self.client, self.execute, self.limits = plan, client, execute, limits
        self.redactor = redactor or Redactor()
        self.prompt = storable(self.redactor.text(plan.prompt))
        self.turns = 0
        self.input_tokens = 0
        self.output_tokens = 0
        self.final_text = ""
        self.stop_reason = ""
        self.error = ""
        self.steps: list[Step] = []
        # UTF-8 bytes of executed reads' results handed to the model so far.
        self.result_bytes = 0
        self._started = time.monotonic()
        self._ended: Trace | None = None

    def progress(self) -> Progress:
        return Progress(self.turns, self.input_tokens, self.output_tokens, self.redactor.report())

    async def run(self, *, on_step: StepSink | None = None) -> Trace:
        self._started = time.monotonic()
        try:
            async with asyncio.timeout(self.limits.deadline_s):
                await self._converse(on_step)
        except TimeoutError:
            self.stop_reason = DEADLINE
            self.error = f"the run passed its {self.limits.deadline_s:g} s deadline"
        except anthropic.APITimeoutError:
            self.stop_reason, self.error = ERROR, "the model API did not answer in time"
        except anthropic.APIConnectionError as exc:
            self.stop_reason, self.error = ERROR, f"the model API could not be reached: {exc.message}"
        except anthropic.APIStatusError as exc:
            self.stop_reason = ERROR
            self.error = f"the model API answered {exc.status_code}: {exc.api_message or exc.message}"
        except (anthropic.APIError, _UnreadableAnswer) as exc:
            self.stop_reason, self.error = ERROR, f"the model API's answer could not be read: {exc}"
        return self.stop(self.stop_reason, self.error)

    def stop(self, stop_reason: str, error: str = "") -> Trace:
        """The run's trace, ended for this reason with the steps taken so far.

        The first call decides: a run ends once, and its answer and error
        are redacted once, so the redaction counts stay true.
        """
        if self._ended is None:
            # An API error can quote the request back; the model's answer is
            # redacted too, so the trace never holds what the model never saw.
            self._ended = Trace(
                model=self.plan.model,
                prompt=self.prompt,
                turns=self.turns,
                input_tokens=self.input_tokens,
                output_tokens=self.output_tokens,
                total_ms=_ms_since(self._started),
                final_text=storable(self.redactor.text(self.final_text)),
                stop_reason=stop_reason,
                error=storable(self.redactor.text(error)),
                steps=tuple(self.steps),
                redactions=self.redactor.report(),
            )
        return self._ended

    async def _converse(self, on_step: StepSink | None) -> None:
        plan = self.plan
        messages: list[dict[str, Any]] = [{"role": "user", "content": self.prompt}]
        # The system text and tool descriptions come from the registry, where
        # an operator may have written a name or a number into them. Input
        # schemas are left alone: their property names are not personal data.
        system = self.redactor.text(plan.system)
        tools = [
            cast("ToolParam", {**spec.for_model(), "description": self.redactor.text(spec.description)})
            for spec in plan.tools
        ]
        while True:
            if self.turns == self.limits.max_turns:
                # The model still wants tools after its last allowed turn.
                self.stop_reason = TURN_LIMIT
                return
            self.turns += 1
            try:
                reply: Message = await self.client.messages.create(
                    model=plan.model,
                    max_tokens=self.limits.max_tokens,
                    system=system,
                    # Built as plain dicts: the SDK checks their shape at run time.
                    messages=cast("list[MessageParam]", messages),
                    tools=tools,
                )
            except ValueError as exc:
                # A success status with a body that is not a message: the
                # SDK's parsing fails with a plain ValueError.
                raise _UnreadableAnswer(str(exc)) from exc
            self.input_tokens += reply.usage.input_tokens
            self.output_tokens += reply.usage.output_tokens
            self.stop_reason = reply.stop_reason or ""
            text = "".join(block.text for block in reply.content if block.type == "text")
            if text:
                self.final_text = text
            calls = [block for block in reply.content if block.type == "tool_use"]
            if reply.stop_reason != "tool_use" or not calls:
                return
            messages.append({"role": "assistant", "content": [_as_param(block) for block in reply.content]})
            results = []
            for index, call in enumerate(calls):
                # Every call gets its result, as the API requires; past the
                # limit that result says the call was not carried out.
                over = index >= self.limits.tool_calls_per_turn
                step, is_error = await self._call(call.name, call.input, over_turn_limit=over)
                self.steps.append(step)
                if on_step is not None:
                    await on_step(step)
                results.append(
                    {"type": "tool_result", "tool_use_id": call.id, "content": step.result, "is_error": is_error}
                )
            messages.append({"role": "user", "content": results})

    async def _call(self, name: str, raw_input: Any, *, over_turn_limit: bool = False) -> tuple[Step, bool]:
        started = time.monotonic()
        tool_input: dict[str, Any] = dict(raw_input) if isinstance(raw_input, Mapping) else {}
        spec = self.plan.catalog.get(name)
        name = storable(name)
        limits = self.limits
        allowance = result_allowance(
            self.result_bytes, limits.result_bytes_per_run, DEFAULT_RESULT_LIMIT, SMALLEST_RESULT
        )
        if over_turn_limit:
            decision = ToolDecision(
                ToolOutcome.REJECTED,
                f"over the limit of {limits.tool_calls_per_turn} tool calls per turn; not carried out",
            )
        else:
            decision = _decide(name, spec, self.plan.skill_tool_names, self.plan.base_urls)
        if decision.outcome is ToolOutcome.EXECUTED and allowance == 0:
            decision = ToolDecision(
                ToolOutcome.REJECTED,
                f"this run's {limits.result_bytes_per_run:,} bytes of tool results are spent; "
                "answer with what you have",
            )
        error = ""
        if decision.outcome is ToolOutcome.EXECUTED and spec is not None:
            try:
                async with asyncio.timeout(limits.tool_timeout_s):
                    payload = await self.execute(spec, tool_input)
            except TimeoutError:
                error = f"{name} did not answer within {limits.tool_timeout_s:g} s"
            except ToolFailure as failure:
                error = storable(self.redactor.text(str(failure)))
            except Exception as failure:  # noqa: BLE001 - a broken read is the model's to hear about
                fields = failure_fields(failure, self.redactor)
                _log.warning("playground tool failed", extra={"tool": name, **fields})
                detail = storable(fields["detail"])
                error = f"{name} failed: {fields['error_type']}" + (f": {detail}" if detail else "")
            if error:
                payload = {"error": error}
        elif decision.outcome is ToolOutcome.PROPOSED and spec is not None:
            payload = proposal_payload(spec.policy, tool_input)
        else:
            payload = {"executed": False, "outcome": str(decision.outcome), "detail": decision.reason}
        limit = allowance if decision.outcome is ToolOutcome.EXECUTED else DEFAULT_RESULT_LIMIT
        shown, result, unreadable = self._result(name, payload, limit)
        if decision.outcome is ToolOutcome.EXECUTED:
            self.result_bytes += len(result.encode("utf-8"))
        error = error or unreadable
        proposed = (
            shown.get("proposal") if decision.outcome is ToolOutcome.PROPOSED and isinstance(shown, dict) else None
        )
        proposal = proposed if isinstance(proposed, dict) else None
        step = Step(
            turn=self.turns,
            tool=name,
            input=self._input(tool_input),
            outcome=str(decision.outcome),
            reason=decision.reason,
            result=result,
            ms=_ms_since(started),
            error=error,
            proposal=proposal,
        )
        is_error = bool(error) or decision.outcome in (ToolOutcome.UNAVAILABLE, ToolOutcome.REJECTED)
        return step, is_error

    def _result(self, name: str, payload: Any, limit: int) -> tuple[JsonValue, str, str]:
        """The result redacted and capped: (redacted value, text for the model, error).

        An executor may answer anything (a value nested past the
        interpreter's depth, a type no JSON has); the model then hears that
        the result could not be read, and the run goes on.
        """
        try:
            shown = self.redactor.value(storable(payload))
            return shown, cap_result(shown, limit), ""
        except (TypeError, ValueError, RecursionError) as failure:
            error = f"{name} answered a result that could not be read ({type(failure).__name__})"
            shown = {"error": error}
            return shown, cap_result(shown, limit), error

    def _input(self, tool_input: Mapping[str, Any]) -> Mapping[str, Any]:
        try:
            shown = self.redactor.value(storable(tool_input))
        except (TypeError, ValueError, RecursionError):
            # Only a model's input nested past the interpreter's depth gets
            # here; no part of it is kept, since no part of it was redacted.
            return {"unreadable": "the input was nested too deeply to keep"}
        return shown if isinstance(shown, dict) else {}


def _decide(
    name: str, spec: ToolSpec | None, skill_tool_names: Collection[str], base_urls: Mapping[str, str]
) -> ToolDecision:
    if spec is None and name not in skill_tool_names:
        # Unknown to this agent's registry entry as well as outside the
        # skill: the skill is what grants, so that is the reason given.
        return ToolDecision(ToolOutcome.REJECTED, f"{name} is not a tool of the selected skill")
    return decide_tool_outcome(spec.policy if spec else None, skill_tool_names, base_urls)


def _as_param(block: Any) -> dict[str, Any]:
    if block.type == "tool_use":
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
    if block.type == "text":
        return {"type": "text", "text": block.text}
    return block.model_dump(mode="json", exclude_none=True)


def _ms_since(started: float) -> int:
    return int((time.monotonic() - started) * 1000)
