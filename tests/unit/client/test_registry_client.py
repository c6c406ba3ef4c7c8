"""The engine client's public surface and the pure parts behind its accessors."""

from __future__ import annotations

import json

import pytest

from outrider.client import (
    RegistryClient,
    RegistryDefaults,
    RegistrySnapshot,
    SnapshotFormatError,
    UnknownThreshold,
)
from services.registry.inventory import load_inventory
from services.registry.snapshot import build_document, encode


def seed_snapshot(**changes) -> RegistrySnapshot:
    inventory = load_inventory()
    document = build_document(inventory.agents, inventory.skills, inventory.tools)
    for path, value in changes.items():
        section, key, field = path.split("__")
        document[section][key][field] = value
    encoded = encode(document)
    return RegistrySnapshot.parse(encoded.etag, encoded.document)


def test_a_snapshot_answers_every_accessor() -> None:
    snapshot = seed_snapshot(agents__DISPATCH_AGENT__model="claude-opus-4-8")
    assert snapshot.skill_enabled("stall_response") is True
    assert snapshot.skill_enabled("dispatch_rebalance") is False
    assert snapshot.threshold("stall_response", "stallMinutes") == 10
    assert snapshot.autonomous("EXCEPTION_AGENT") is False
    assert snapshot.model("DISPATCH_AGENT") == "claude-opus-4-8"
    assert snapshot.model("EXCEPTION_AGENT") is None
    assert snapshot.requires_confirmation("EXCEPTION_AGENT", "reassign_booking") is True
    assert snapshot.requires_confirmation("EXCEPTION_AGENT", "nearby_milers") is False


def test_what_the_registry_does_not_list_is_off() -> None:
    snapshot = seed_snapshot()
    assert snapshot.skill_enabled("no_such_skill") is False
    assert snapshot.autonomous("NO_SUCH_AGENT") is False
    assert snapshot.model("NO_SUCH_AGENT") is None
    assert snapshot.requires_confirmation("EXCEPTION_AGENT", "no_such_tool") is True
    assert snapshot.requires_confirmation("HUB_AGENT", "nearby_milers") is False
    assert snapshot.requires_confirmation("HUB_AGENT", "reassign_booking") is True
    with pytest.raises(UnknownThreshold):
        snapshot.threshold("stall_response", "noSuchKey")


def test_defaults_answer_until_a_snapshot_loads() -> None:
    defaults = RegistryDefaults(
        skills_enabled={"stall_response": True},
        thresholds={"stall_response": {"stallMinutes": 8}},
        autonomy={"EXCEPTION_AGENT": True},
        models={"DISPATCH_AGENT": "claude-env"},
    )
    assert defaults.skill_enabled("stall_response") is True and defaults.skill_enabled("other") is False
    assert defaults.threshold("stall_response", "stallMinutes") == 8
    assert defaults.autonomous("EXCEPTION_AGENT") is True and defaults.autonomous("DISPATCH_AGENT") is False
    assert defaults.model("DISPATCH_AGENT") == "claude-env" and defaults.model("EXCEPTION_AGENT") is None
    assert defaults.requires_confirmation("EXCEPTION_AGENT", "nearby_milers") is True
    with pytest.raises(UnknownThreshold):
        defaults.threshold("stall_response", "reassignConfidence")


def test_a_client_before_its_first_snapshot_uses_its_defaults() -> None:
    client = RegistryClient("127.0.0.1:1", "key", defaults=RegistryDefaults(autonomy={"EXCEPTION_AGENT": True}))
    assert client.snapshot is None and client.source == "defaults"
    assert client.autonomous("EXCEPTION_AGENT") is True
    assert client.skill_enabled("stall_response") is False


@pytest.mark.parametrize(
    "document",
    [
        b"not json",
        b"[]",
        json.dumps({"format": 2, "agents": {}, "skills": {}, "tools": {}}).encode(),
        json.dumps({"format": 1, "agents": {}, "skills": {}}).encode(),
        json.dumps(
            {
                "format": 1,
                "agents": {
                    "A": {
                        "runtime": "engine",
                        "status": "live",
                        "has_autonomy_gate": True,
                        "autonomous": "yes",
                        "model": None,
                    }
                },
                "skills": {},
                "tools": {},
            }
        ).encode(),
        json.dumps(
            {
                "format": 1,
                "agents": {},
                "tools": {},
                "skills": {
                    "s": {
                        "agent_id": "A",
                        "source": "engine",
                        "enabled": True,
                        "version": 1,
                        "tool_names": [],
                        "thresholds": {"k": "10"},
                    }
                },
            }
        ).encode(),
    ],
)
def test_unreadable_documents_are_refused(document: bytes) -> None:
    with pytest.raises(SnapshotFormatError):
        RegistrySnapshot.parse("e", document)


@pytest.mark.parametrize(
    "options",
    [{"address": ""}, {"internal_key": ""}, {"retry_min_s": 0}, {"retry_min_s": 5, "retry_max_s": 1}],
)
def test_a_misconfigured_client_is_refused(options: dict) -> None:
    arguments = {"address": "registry:50051", "internal_key": "key", **options}
    with pytest.raises(ValueError):  # noqa: PT011 - each case refuses with its own message
        RegistryClient(**arguments)
