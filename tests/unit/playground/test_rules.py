import pytest

from services.playground import rules
from services.playground.rules import (
    PlaygroundInputError,
    SkillChoice,
    ToolInputError,
    http_request_parts,
)

STALL = SkillChoice("stall_response", "Stall response", "Respond to a stalled rider.", ("nearby_milers",))
TRIAGE = SkillChoice("assignment_failure_triage", "Triage", "", ("nearby_milers", "find_precedents"))


def test_the_limits_are_the_specified_ones():
    limits = rules.RunLimits()
    assert (limits.max_turns, limits.max_tokens, limits.deadline_s, limits.tool_timeout_s) == (6, 4096, 120.0, 5.0)
    assert (rules.RUNS_PER_WINDOW, rules.RATE_WINDOW_S, rules.PROMPT_MAX_CHARS) == (10, 600, 2000)


def test_a_prompt_of_exactly_2000_characters_is_taken():
    prompt = "é" * 2000

    assert rules.check_prompt(prompt) == prompt


def test_a_longer_prompt_is_refused_with_its_own_code():
    with pytest.raises(PlaygroundInputError) as caught:
        rules.check_prompt("x" * 2001)

    error = caught.value
    assert (error.field, error.code) == ("prompt", "PROMPT_TOO_LONG")
    assert error.details == {"length": 2001, "max": 2000, "fields": {"prompt": error.message}}
    assert "2001 characters" in error.message


@pytest.mark.parametrize("prompt", ["", "   \n\t"])
def test_a_blank_prompt_is_refused(prompt):
    with pytest.raises(PlaygroundInputError) as caught:
        rules.check_prompt(prompt)

    assert (caught.value.field, caught.value.code) == ("prompt", "INVALID_ARGUMENT")


def test_a_named_skill_is_chosen():
    assert rules.choose_skill("DISPATCH_AGENT", [STALL, TRIAGE], "assignment_failure_triage") is TRIAGE


def test_the_only_skill_is_chosen_when_none_is_named():
    assert rules.choose_skill("EXCEPTION_AGENT", [STALL], "") is STALL


def test_several_skills_and_none_named_is_refused_listing_them():
    with pytest.raises(PlaygroundInputError) as caught:
        rules.choose_skill("DISPATCH_AGENT", [STALL, TRIAGE], "")

    assert caught.value.field == "skill_id"
    assert caught.value.details["skills"] == ["stall_response", "assignment_failure_triage"]


def test_a_skill_of_another_agent_is_refused():
    with pytest.raises(PlaygroundInputError) as caught:
        rules.choose_skill("EXCEPTION_AGENT", [STALL], "assignment_failure_triage")

    assert (caught.value.field, caught.value.code) == ("skill_id", "UNKNOWN_SKILL")
    assert caught.value.message == "agent EXCEPTION_AGENT has no skill assignment_failure_triage"


def test_an_agent_without_skills_has_nothing_to_try():
    with pytest.raises(PlaygroundInputError) as caught:
        rules.choose_skill("HUB_AGENT", [], "")

    assert (caught.value.field, caught.value.code) == ("agent_id", "NO_SKILLS")


@pytest.mark.parametrize(
    ("pinned", "model"),
    [("claude-opus-4-1", "claude-opus-4-1"), ("", "claude-sonnet-4-5"), ("  ", "claude-sonnet-4-5")],
)
def test_the_agent_pin_wins_over_the_default_model(pinned, model):
    assert rules.model_for(pinned, "claude-sonnet-4-5") == model


def test_the_system_prompt_names_the_skill_and_says_nothing_takes_effect():
    text = rules.system_prompt("EXCEPTION_AGENT", STALL)

    assert "EXCEPTION_AGENT" in text and "stall_response" in text and "Respond to a stalled rider." in text
    assert "proposal" in text


def test_path_values_fill_the_template_and_the_rest_becomes_the_query():
    path, query = http_request_parts("/bookings/cache/{booking_id}", {"booking_id": 1001, "fields": "status"})

    assert path == "/bookings/cache/1001"
    assert query == [("fields", "status")]


@pytest.mark.parametrize(
    ("value", "quoted"),
    [
        ("../../admin", "..%2F..%2Fadmin"),
        ("a b?c=1#x", "a%20b%3Fc%3D1%23x"),
        ("BK/7", "BK%2F7"),
        ("ग्राहक", "%E0%A4%97%E0%A5%8D%E0%A4%B0%E0%A4%BE%E0%A4%B9%E0%A4%95"),
    ],
)
def test_a_path_value_is_quoted_whole_so_it_cannot_escape_its_segment(value, quoted):
    path, _ = http_request_parts("/bookings/cache/{booking_id}", {"booking_id": value})

    assert path == f"/bookings/cache/{quoted}"


@pytest.mark.parametrize("value", ["..", ".", ""])
def test_a_path_value_of_dots_or_nothing_is_refused(value):
    with pytest.raises(ToolInputError, match="booking_id must not be empty or dots only"):
        http_request_parts("/bookings/cache/{booking_id}", {"booking_id": value})


def test_a_missing_path_value_is_named():
    with pytest.raises(ToolInputError, match="booking_id is required"):
        http_request_parts("/bookings/cache/{booking_id}", {"other": 1})


def test_query_values_are_scalars_lists_repeat_and_none_is_left_out():
    _, query = http_request_parts(
        "/admin/bookings", {"status": "waiting", "limit": 20, "urgent": True, "ids": [1, 2], "zone": None}
    )

    assert query == [("status", "waiting"), ("limit", "20"), ("urgent", "true"), ("ids", "1"), ("ids", "2")]


@pytest.mark.parametrize("value", [{"a": 1}, [{"a": 1}]])
def test_an_object_cannot_go_into_a_get(value):
    with pytest.raises(ToolInputError, match="filter must be a string, number or boolean"):
        http_request_parts("/admin/bookings", {"filter": value})


def test_a_template_must_be_a_path():
    with pytest.raises(ToolInputError, match="must start with /"):
        http_request_parts("https://elsewhere.example/{x}", {"x": 1})
