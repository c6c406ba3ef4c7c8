import pytest

from services.playground.tool_policy import (
    PlaygroundTool,
    ToolDecision,
    ToolExecutor,
    ToolKind,
    ToolOutcome,
    decide_tool_outcome,
    proposal_payload,
)

READ, WRITE, NOTIFY, EVENT = ToolKind.READ, ToolKind.WRITE, ToolKind.NOTIFY, ToolKind.EVENT
OUTRIDER, HTTP, ENGINE, LLM = ToolExecutor.OUTRIDER, ToolExecutor.HTTP, ToolExecutor.ENGINE, ToolExecutor.LLM
CONSOLE = ToolExecutor.CONSOLE

CONFIGURED = {"ROUTES_BASE_URL": "https://routes.example.in", "BLANK_BASE_URL": "  "}


def tool(kind, executor, *, name="the_tool", base_url_key=None, http_method="GET"):
    return PlaygroundTool(name=name, kind=kind, executor=executor, base_url_key=base_url_key, http_method=http_method)


@pytest.mark.parametrize(
    ("candidate", "outcome", "reason_part"),
    [
        # reads Outrider serves itself
        (tool(READ, OUTRIDER), ToolOutcome.EXECUTED, "served by Outrider"),
        # reads over HTTP: only GET, only with a configured base URL
        (tool(READ, HTTP, base_url_key="ROUTES_BASE_URL"), ToolOutcome.EXECUTED, "GET against ROUTES_BASE_URL"),
        (tool(READ, HTTP, base_url_key="ROUTES_BASE_URL", http_method="get"), ToolOutcome.EXECUTED, "GET"),
        (
            tool(READ, HTTP, base_url_key="PRICING_BASE_URL"),
            ToolOutcome.UNAVAILABLE,
            "PRICING_BASE_URL is not configured",
        ),
        (tool(READ, HTTP, base_url_key="BLANK_BASE_URL"), ToolOutcome.UNAVAILABLE, "BLANK_BASE_URL is not configured"),
        (tool(READ, HTTP), ToolOutcome.UNAVAILABLE, "names no base URL setting"),
        (tool(READ, HTTP, base_url_key=""), ToolOutcome.UNAVAILABLE, "names no base URL setting"),
        (
            tool(READ, HTTP, base_url_key="ROUTES_BASE_URL", http_method="POST"),
            ToolOutcome.UNAVAILABLE,
            "uses POST; the playground sends GET only",
        ),
        # reads the playground cannot reach
        (tool(READ, ENGINE), ToolOutcome.UNAVAILABLE, "runs inside the agent engine"),
        (tool(READ, LLM), ToolOutcome.UNAVAILABLE, "itself a model call"),
        (tool(READ, CONSOLE), ToolOutcome.UNAVAILABLE, "runs in the operator's console"),
        # anything that changes the world is proposed, whoever would run it
        (tool(WRITE, OUTRIDER), ToolOutcome.PROPOSED, "write tools are never executed"),
        (tool(WRITE, HTTP, base_url_key="ROUTES_BASE_URL"), ToolOutcome.PROPOSED, "write tools are never executed"),
        (tool(WRITE, ENGINE), ToolOutcome.PROPOSED, "returned as a proposal"),
        (tool(NOTIFY, ENGINE), ToolOutcome.PROPOSED, "notify tools are never executed"),
        (tool(NOTIFY, HTTP), ToolOutcome.PROPOSED, "notify tools are never executed"),
        (tool(EVENT, ENGINE), ToolOutcome.PROPOSED, "event tools are never executed"),
        (tool(EVENT, LLM), ToolOutcome.PROPOSED, "event tools are never executed"),
        (tool(WRITE, CONSOLE), ToolOutcome.PROPOSED, "write tools are never executed"),
        (tool(NOTIFY, CONSOLE), ToolOutcome.PROPOSED, "notify tools are never executed"),
    ],
)
def test_tool_in_the_skill(candidate, outcome, reason_part):
    decision = decide_tool_outcome(candidate, {"the_tool", "other_tool"}, CONFIGURED)

    assert decision.outcome is outcome
    assert reason_part in decision.reason


@pytest.mark.parametrize("kind", list(ToolKind))
@pytest.mark.parametrize("executor", list(ToolExecutor))
def test_tool_outside_the_selected_skill_is_rejected_whatever_it_is(kind, executor):
    candidate = tool(kind, executor, name="reassign_booking", base_url_key="ROUTES_BASE_URL")

    decision = decide_tool_outcome(candidate, ["nearby_milers", "notify_customer"], CONFIGURED)

    assert decision == ToolDecision(ToolOutcome.REJECTED, "reassign_booking is not a tool of the selected skill")


def test_unknown_tool_is_rejected():
    assert decide_tool_outcome(None, ["nearby_milers"], CONFIGURED) == ToolDecision(
        ToolOutcome.REJECTED, "no such tool in the registry"
    )


def test_empty_skill_rejects_everything():
    assert decide_tool_outcome(tool(READ, OUTRIDER), frozenset(), CONFIGURED).outcome is ToolOutcome.REJECTED


def test_http_read_without_any_configuration_is_unavailable():
    decision = decide_tool_outcome(tool(READ, HTTP, base_url_key="ROUTES_BASE_URL"), ["the_tool"], {})

    assert decision == ToolDecision(ToolOutcome.UNAVAILABLE, "base URL ROUTES_BASE_URL is not configured")


def test_vocabularies_match_the_registry_words():
    assert [k.value for k in ToolKind] == ["read", "write", "notify", "event"]
    assert [e.value for e in ToolExecutor] == ["outrider", "http", "engine", "llm", "console"]
    assert [o.value for o in ToolOutcome] == ["executed", "unavailable", "proposed", "rejected"]


@pytest.mark.parametrize("kind", [WRITE, NOTIFY, EVENT])
def test_proposal_payload_says_nothing_was_executed(kind):
    reassign = tool(kind, ENGINE, name="reassign_booking")
    model_input = {"booking_id": "BK-1001", "miler_id": "M-77"}

    payload = proposal_payload(reassign, model_input)

    assert payload == {
        "executed": False,
        "proposal": {
            "tool": "reassign_booking",
            "kind": kind.value,
            "input": {"booking_id": "BK-1001", "miler_id": "M-77"},
            "requires_confirmation": True,
        },
    }


def test_proposal_payload_copies_the_input():
    model_input = {"booking_id": "BK-1001"}

    payload = proposal_payload(tool(WRITE, OUTRIDER), model_input)
    model_input["booking_id"] = "BK-2002"

    assert payload["proposal"]["input"] == {"booking_id": "BK-1001"}


def test_read_tools_are_never_proposed():
    with pytest.raises(ValueError, match="nearby_milers is a read tool"):
        proposal_payload(tool(READ, OUTRIDER, name="nearby_milers"), {})
