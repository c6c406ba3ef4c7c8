"""The gateway's registry edge: the contracts refuse what cannot be carried,
bodies become requests with exactly the fields sent, and If-None-Match is
read the way HTTP clients send it."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from gateway.codec.registry import (
    agent_update,
    etag_matches,
    skill_draft,
    skill_json,
    skill_update,
)
from gateway.contracts.registry import AgentPatch, SkillDraft, SkillPatch
from gateway.errors import validation_fields
from outrider.v1 import registry_pb2
from outrider.wire import json_value


def test_a_skill_patch_carries_exactly_the_fields_sent() -> None:
    body = SkillPatch.model_validate({"enabled": False, "thresholds": {"stallMinutes": 9, "ratio": 0.5}, "version": 4})
    request = skill_update("stall_response", body)
    assert request.id == "stall_response"
    assert request.enabled is False and request.expected_version == 4
    # 9 stays an integer on the wire, so the registry checks it as one.
    assert json_value(request.thresholds_json) == {"stallMinutes": 9, "ratio": 0.5}
    assert isinstance(json_value(request.thresholds_json)["stallMinutes"], int)
    bare = skill_update("s", SkillPatch.model_validate({"enabled": True}))
    assert not bare.HasField("expected_version") and bare.thresholds_json == b""


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ([], "body"),
        ({"enabled": 1}, "enabled"),
        ({"enabled": None}, "enabled"),
        ({"thresholds": 5}, "thresholds"),
        ({"thresholds": {"stallMinutes": "9"}}, "thresholds.stallMinutes"),
        ({"thresholds": {"9lives": 9}}, "thresholds.9lives"),
        ({"version": True}, "version"),
        ({"version": 2**31}, "version"),
        ({"title": "x"}, "title"),
    ],
)
def test_a_skill_patch_the_contract_refuses_names_the_field(body: object, field: str) -> None:
    with pytest.raises(ValidationError) as caught:
        SkillPatch.model_validate(body)
    assert field in validation_fields(caught.value.errors())


def test_an_agent_patch_carries_a_null_model_as_a_cleared_pin() -> None:
    request = agent_update("DISPATCH_AGENT", AgentPatch.model_validate({"model": None, "confirm": "DISPATCH_AGENT"}))
    assert request.HasField("model") and request.model == ""
    assert not request.HasField("autonomous")
    assert request.confirm == "DISPATCH_AGENT"
    with pytest.raises(ValidationError):
        AgentPatch.model_validate({"status": "live"})


def test_a_skill_draft_keeps_schemas_as_json() -> None:
    draft = SkillDraft.model_validate(
        {
            "id": "n",
            "agent_id": "A",
            "title": "T",
            "tool_names": ["a", "b"],
            "thresholds_schema": {"k": {"type": "integer", "min": 1, "max": 5, "step": 1, "default": 2}},
        }
    )
    request = skill_draft(draft)
    assert list(request.tool_names) == ["a", "b"]
    assert json_value(request.thresholds_schema_json) == {
        "k": {"type": "integer", "min": 1, "max": 5, "step": 1, "default": 2}
    }
    with pytest.raises(ValidationError) as caught:
        SkillDraft.model_validate({"id": "n", "agent_id": "A", "title": "T", "tool_names": "scan_bookings"})
    assert "tool_names" in validation_fields(caught.value.errors())


def test_integer_thresholds_render_as_integers() -> None:
    skill = registry_pb2.Skill(
        id="s",
        thresholds={"stallMinutes": 10.0, "reassignConfidence": 0.7},
        thresholds_schema={
            "stallMinutes": registry_pb2.ThresholdSpec(type="integer", min=3, max=60, step=1, default=10),
            "reassignConfidence": registry_pb2.ThresholdSpec(type="number", min=0.5, max=1, step=0.05, default=0.7),
        },
    )
    shaped = skill_json(skill)
    assert shaped["thresholds"] == {"reassignConfidence": 0.7, "stallMinutes": 10}
    assert isinstance(shaped["thresholds"]["stallMinutes"], int)
    assert shaped["thresholds_schema"]["stallMinutes"] == {
        "type": "integer",
        "min": 3,
        "max": 60,
        "step": 1,
        "default": 10,
    }


@pytest.mark.parametrize(
    ("header", "matches"),
    [
        ('"abc"', True),
        ('W/"abc"', True),
        ('"x", "abc"', True),
        ("*", True),
        ('"abd"', False),
        ("abc", False),
        ("", False),
        (None, False),
    ],
)
def test_if_none_match(header: str | None, matches: bool) -> None:
    assert etag_matches(header, "abc") is matches
