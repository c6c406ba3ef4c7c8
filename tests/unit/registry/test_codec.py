"""Registry wire translation: patches arrive exactly as sent, cursors round-trip, bad ones are refused."""

from __future__ import annotations

import pytest

from outrider.v1 import registry_pb2
from services.common import callers
from services.common.errors import InvalidArgument, PermissionDenied
from services.registry import codec


def test_a_skill_patch_carries_only_the_fields_sent() -> None:
    request = registry_pb2.UpdateSkillRequest(
        id="s", enabled=False, expected_version=3, thresholds_json=b'{"stallMinutes":12,"mode":"fast","on":true}'
    )
    request.unknown_fields.extend(["title"])
    assert codec.skill_patch(request) == {
        "enabled": False,
        "version": 3,
        "thresholds": {"stallMinutes": 12, "mode": "fast", "on": True},
        "title": None,
    }
    assert codec.skill_patch(registry_pb2.UpdateSkillRequest(id="s")) == {}


def test_an_empty_thresholds_object_is_still_a_thresholds_patch() -> None:
    request = registry_pb2.UpdateSkillRequest(id="s", thresholds_json=b"{}")
    assert codec.skill_patch(request) == {"thresholds": {}}


def test_thresholds_that_are_not_json_are_refused_naming_the_field() -> None:
    with pytest.raises(InvalidArgument) as caught:
        codec.skill_patch(registry_pb2.UpdateSkillRequest(id="s", thresholds_json=b"{nope"))
    assert list(caught.value.fields) == ["thresholds"]


def test_an_agent_patch_distinguishes_a_cleared_model_from_none_sent() -> None:
    assert codec.agent_patch(registry_pb2.UpdateAgentRequest(id="A", model="")) == {"model": ""}
    assert codec.agent_patch(registry_pb2.UpdateAgentRequest(id="A", autonomous=False)) == {"autonomous": False}
    assert codec.agent_patch(registry_pb2.UpdateAgentRequest(id="A")) == {}


def test_a_skill_draft_leaves_out_empty_text_so_the_rules_say_required() -> None:
    request = registry_pb2.CreateSkillRequest(
        agent_id="CONSOLE_OPS_AGENT",
        title="",
        tool_names=["scan_bookings"],
        thresholds_schema_json=b'{"k":{"type":"integer","min":1,"max":5,"step":1,"default":2}}',
    )
    request.unknown_fields.append("source")
    draft = codec.skill_draft(request)
    assert "title" not in draft and "id" not in draft
    assert draft["agent_id"] == "CONSOLE_OPS_AGENT"
    assert draft["tool_names"] == ["scan_bookings"]
    assert draft["thresholds_schema"]["k"]["max"] == 5
    assert draft["source"] is None


def test_every_write_names_the_verified_person_and_nobody_else() -> None:
    with pytest.raises(PermissionDenied):
        codec.actor()
    engine = callers.current.set(callers.Caller(kind="engine", engine="default"))
    try:
        with pytest.raises(PermissionDenied):
            codec.actor()
    finally:
        callers.current.reset(engine)
    person = callers.Principal(sub="u-1", email="a@example.com", role=1, tenant_id=0)
    acting = callers.current.set(callers.Caller(kind="service", principal=person))
    try:
        actor = codec.actor()
    finally:
        callers.current.reset(acting)
    assert (actor.sub, actor.email) == ("u-1", "a@example.com")
