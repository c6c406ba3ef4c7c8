"""The snapshot every engine parses is described in the OpenAPI document, field for field.

Issue 28, finding 12: `GET /internal/ai/registry` was published as
`{"type": "object"}`, and `/metrics` declared JSON beside its Prometheus text.
"""

from __future__ import annotations

import json
from typing import Any

import jsonschema_rs
import pytest

from gateway.app import create_app
from services.common.settings import load
from services.registry.inventory import load_inventory
from services.registry.snapshot import build_document, encode


@pytest.fixture(scope="module")
def document(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    settings = load(
        {
            "OUTRIDER_DATA_DIR": str(tmp_path_factory.mktemp("snapshot")),
            "OUTRIDER_JWT_SECRET": "j" * 40,
            "OUTRIDER_INTERNAL_KEY": "k" * 40,
        }
    )
    return create_app(settings).openapi()


def _validator(document: dict[str, Any]) -> Any:
    answer = document["paths"]["/internal/ai/registry"]["get"]["responses"]["200"]
    schema = answer["content"]["application/json"]["schema"]
    return jsonschema_rs.Draft202012Validator({**schema, "components": document["components"]})


def _seeded_snapshot() -> dict[str, Any]:
    inventory = load_inventory()
    encoded = encode(build_document(inventory.agents, inventory.skills, inventory.tools))
    return json.loads(encoded.document)


def test_the_real_snapshot_validates_against_the_published_schema(document) -> None:
    snapshot = _seeded_snapshot()
    assert snapshot["agents"] and snapshot["skills"] and snapshot["tools"]
    errors = [error.message for error in _validator(document).iter_errors(snapshot)]
    assert errors == []


def test_the_schema_describes_every_part_and_refuses_a_wrong_one(document) -> None:
    validator = _validator(document)
    snapshot = _seeded_snapshot()
    agent = next(iter(snapshot["agents"]))
    skill = next(iter(snapshot["skills"]))
    tool = next(iter(snapshot["tools"]))
    wrong = [
        {**snapshot, "agents": {agent: {**snapshot["agents"][agent], "autonomous": "yes"}}},
        {**snapshot, "skills": {skill: {**snapshot["skills"][skill], "thresholds": {"late": "5"}}}},
        {**snapshot, "tools": {tool: {**snapshot["tools"][tool], "kind": "delete"}}},
        {key: value for key, value in snapshot.items() if key != "tools"},
    ]
    assert [validator.is_valid(case) for case in wrong] == [False] * len(wrong)


def test_the_rollouts_it_gains_are_described(document) -> None:
    validator = _validator(document)
    rollout = {"id": "r-1", "agent_id": "EXCEPTION_AGENT", "decision_type": "stall_response", "percent": 5}
    with_rollouts = {**_seeded_snapshot(), "rollouts": [{**rollout, "change": {"model": "claude-sonnet-4-5"}}]}
    assert validator.is_valid(with_rollouts)
    assert not validator.is_valid({**with_rollouts, "rollouts": [rollout]})
    assert not validator.is_valid({**with_rollouts, "rollouts": [{**rollout, "change": {}, "percent": 101}]})


def test_metrics_are_published_as_prometheus_text_only(document) -> None:
    answer = document["paths"]["/metrics"]["get"]["responses"]["200"]
    assert list(answer["content"]) == ["text/plain"]
