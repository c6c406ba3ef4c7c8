"""The gateway's registry edge: JSON bodies become requests without judging them,
and If-None-Match is read the way HTTP clients send it."""

from __future__ import annotations

import pytest

from gateway.auth import Principal
from gateway.errors import ApiError
from gateway.routes.registry import agent_update, etag_matches, skill_draft, skill_json, skill_update
from outrider.v1 import registry_pb2

WHO = Principal(sub="u-7", email="lead@example.com", role=1, tenant_id=0)


def test_a_skill_patch_keeps_every_field_and_passes_unknown_ones_on() -> None:
    request = skill_update("stall_response", {"enabled": False, "thresholds": {"stallMinutes": "9"}, "version": 4,
                                              "title": "x"}, WHO)
    assert request.id == "stall_response"
    assert request.enabled is False and request.expected_version == 4
    assert dict(request.thresholds) == {"stallMinutes": "9"}  # judged by the service, not here
    assert list(request.unknown_fields) == ["title"]
    assert (request.actor.sub, request.actor.email) == ("u-7", "lead@example.com")


@pytest.mark.parametrize(
    "body,field",
    [
        ([], "body"),
        ({"enabled": 1}, "enabled"),
        ({"thresholds": 5}, "thresholds"),
        ({"version": True}, "version"),
        ({"version": 2**31}, "version"),
    ],
)
def test_a_skill_patch_that_cannot_be_carried_is_refused_naming_the_field(body: object, field: str) -> None:
    with pytest.raises(ApiError) as caught:
        skill_update("s", body, WHO)
    assert caught.value.status == 422
    assert field in caught.value.details


def test_an_agent_patch_carries_a_null_model_as_a_cleared_pin() -> None:
    request = agent_update("DISPATCH_AGENT", {"model": None, "confirm": "DISPATCH_AGENT", "status": "live"}, WHO)
    assert request.HasField("model") and request.model == ""
    assert not request.HasField("autonomous")
    assert request.confirm == "DISPATCH_AGENT"
    assert list(request.unknown_fields) == ["status"]


def test_a_skill_draft_keeps_schemas_as_json() -> None:
    request = skill_draft(
        {"id": "n", "tool_names": ["a", "b"], "thresholds_schema": {"k": {"type": "integer"}}, "source": "engine"},
        WHO,
    )
    assert list(request.tool_names) == ["a", "b"]
    assert request.thresholds_schema["k"]["type"] == "integer"
    assert list(request.unknown_fields) == ["source"]
    with pytest.raises(ApiError) as caught:
        skill_draft({"tool_names": "scan_bookings"}, WHO)
    assert "tool_names" in caught.value.details


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
    assert shaped["thresholds_schema"]["stallMinutes"] == {"type": "integer", "min": 3, "max": 60, "step": 1,
                                                           "default": 10}


@pytest.mark.parametrize(
    "header,matches",
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
