"""The snapshot document: what the engine reads, and an etag that names its content."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from services.registry.inventory import Inventory, load_inventory
from services.registry.rollouts.rules import GuardSettings, Rollout, RolloutState
from services.registry.snapshot import (
    DOCUMENT_FORMAT,
    build_document,
    confirmation_by_agent,
    encode,
    tool_requires_confirmation,
)


@pytest.fixture(scope="module")
def inventory() -> Inventory:
    return load_inventory()


def document_of(inventory: Inventory) -> dict:
    return build_document(inventory.agents, inventory.skills, inventory.tools)


def test_the_document_holds_what_the_engine_obeys(inventory: Inventory) -> None:
    document = document_of(inventory)
    assert document["format"] == DOCUMENT_FORMAT
    assert set(document) == {"format", "agents", "skills", "tools"}
    assert len(document["agents"]) == 11 and len(document["skills"]) == 15 and len(document["tools"]) == 24
    exception = document["agents"]["EXCEPTION_AGENT"]
    assert exception == {
        "runtime": "engine",
        "status": "live",
        "has_autonomy_gate": True,
        "autonomous": False,
        "model": None,
    }
    stall = document["skills"]["stall_response"]
    assert stall["enabled"] is True and stall["version"] == 1
    assert stall["thresholds"] == {"reassignConfidence": 0.7, "stallMinutes": 10}
    assert stall["tool_names"][0] == "nearby_milers"
    assert document["skills"]["dispatch_rebalance"]["enabled"] is False


def test_the_etag_is_the_same_for_the_same_content_in_any_order(inventory: Inventory) -> None:
    forward = encode(document_of(inventory))
    backward = encode(build_document(reversed(inventory.agents), reversed(inventory.skills), reversed(inventory.tools)))
    assert forward == backward
    assert len(forward.etag) == 32
    assert json.loads(forward.document) == document_of(inventory)


def test_the_etag_changes_with_any_operator_change(inventory: Inventory) -> None:
    base = encode(document_of(inventory)).etag
    agents = tuple(replace(a, model="claude-opus-4-8") if a.id == "DISPATCH_AGENT" else a for a in inventory.agents)
    skills = tuple(
        replace(s, thresholds={**s.thresholds, "stallMinutes": 11}) if s.id == "stall_response" else s
        for s in inventory.skills
    )
    assert encode(build_document(agents, inventory.skills, inventory.tools)).etag != base
    assert encode(build_document(inventory.agents, skills, inventory.tools)).etag != base


def test_write_tools_wait_for_a_human_unless_the_agent_using_them_is_autonomous(inventory: Inventory) -> None:
    agents = {a.id: a for a in inventory.agents}
    tools = {t.name: t for t in inventory.tools}
    notify = tools["notify_customer"]
    users = ("EXCEPTION_AGENT", "CUSTOMER_AGENT")
    assert confirmation_by_agent(notify, users, agents) == {"CUSTOMER_AGENT": True, "EXCEPTION_AGENT": True}
    agents["EXCEPTION_AGENT"] = replace(agents["EXCEPTION_AGENT"], autonomous=True)
    by_agent = confirmation_by_agent(notify, users, agents)
    assert by_agent == {"CUSTOMER_AGENT": True, "EXCEPTION_AGENT": False}
    assert tool_requires_confirmation(notify, by_agent) is True
    assert tool_requires_confirmation(notify, {"EXCEPTION_AGENT": False}) is False
    assert confirmation_by_agent(tools["nearby_milers"], ("EXCEPTION_AGENT",), agents) == {"EXCEPTION_AGENT": False}


def test_a_tool_no_skill_uses_still_says_whether_it_writes(inventory: Inventory) -> None:
    tools = {t.name: t for t in inventory.tools}
    assert tool_requires_confirmation(tools["reassign_booking"], {}) is True
    assert tool_requires_confirmation(tools["nearby_milers"], {}) is False


def test_the_document_reflects_autonomy_per_agent(inventory: Inventory) -> None:
    agents = tuple(replace(a, autonomous=True) if a.id == "EXCEPTION_AGENT" else a for a in inventory.agents)
    tools = build_document(agents, inventory.skills, inventory.tools)["tools"]
    assert tools["reassign_booking"]["requires_confirmation"] is False
    assert tools["notify_customer"]["requires_confirmation_by_agent"] == {
        "CUSTOMER_AGENT": True,
        "EXCEPTION_AGENT": False,
    }
    assert tools["notify_customer"]["requires_confirmation"] is True


def _rollout(rollout_id: str, state: str, percent: int = 25) -> Rollout:
    return Rollout(
        id=rollout_id,
        agent_id="EXCEPTION_AGENT",
        decision_type="stall_response",
        change={"model": "claude-opus-5-5"},
        baseline={"model": None},
        steps=(5, 25, 50, 100),
        step=1,
        percent=percent,
        state=RolloutState(state),
        guard=GuardSettings(),
    )


def test_the_document_carries_running_and_paused_rollouts_only(inventory: Inventory) -> None:
    rollouts = [_rollout(f"r-{state}", state) for state in ("running", "paused", "halted", "aborted", "completed")]
    document = build_document(inventory.agents, inventory.skills, inventory.tools, reversed(rollouts))
    assert document["rollouts"] == [
        {
            "id": rollout_id,
            "agent_id": "EXCEPTION_AGENT",
            "decision_type": "stall_response",
            "percent": 25,
            "change": {"model": "claude-opus-5-5"},
        }
        for rollout_id in ("r-paused", "r-running")
    ]
    ended = [rollout for rollout in rollouts if rollout.state.value not in ("running", "paused")]
    assert build_document(inventory.agents, inventory.skills, inventory.tools, ended) == document_of(inventory)


def test_the_etag_changes_when_a_rollout_moves(inventory: Inventory) -> None:
    def etag(*rollouts) -> str:
        return encode(build_document(inventory.agents, inventory.skills, inventory.tools, rollouts)).etag

    assert len({etag(), etag(_rollout("r-1", "running")), etag(_rollout("r-1", "running", percent=50))}) == 3
