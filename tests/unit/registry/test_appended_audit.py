"""Audit rows other contexts append: only for entities the registry does not change itself."""

from __future__ import annotations

import uuid

import pytest

from services.registry.rules import FieldChange, InvalidRegistryChange, appended_change, check_audit_entity

REQUEST_ID = "3f0b0c55-8a43-4b7e-9d55-2b1f6d0f3a11"


def appended(**changes: str):
    fields = {
        "request_id": REQUEST_ID,
        "entity": "subject",
        "entity_id": "BK-1042",
        "field": "personal_data",
        **changes,
    }
    return appended_change(**fields, old=None, new={"erased": {"decisions": 2}})


def test_a_subject_change_becomes_one_row_under_its_request_id():
    change = appended()
    assert change.request_id == uuid.UUID(REQUEST_ID)
    assert (change.entity, change.entity_id) == ("subject", "BK-1042")
    assert change.change == FieldChange(field="personal_data", old=None, new={"erased": {"decisions": 2}})


@pytest.mark.parametrize("entity", ["agent", "skill", "rollout", ""])
def test_agents_and_skills_are_audited_only_with_their_own_changes(entity):
    # Their rows commit in the transaction of the change; one appended from
    # outside would claim a change the registry never made.
    with pytest.raises(InvalidRegistryChange) as refused:
        appended(entity=entity)
    assert set(refused.value.fields) == {"entity"}


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("request_id", ""),
        ("request_id", "not-a-uuid"),
        ("entity_id", ""),
        ("entity_id", " BK-1042"),
        ("entity_id", "x" * 257),
        ("field", ""),
        ("field", "a\x00b"),
    ],
)
def test_each_key_is_checked_by_name(name, value):
    with pytest.raises(InvalidRegistryChange) as refused:
        appended(**{name: value})
    assert set(refused.value.fields) == {name}


def test_the_audit_listing_filters_on_subjects_too():
    check_audit_entity("subject")
    with pytest.raises(InvalidRegistryChange):
        check_audit_entity("tenant")
