"""OUTRIDER_ENGINE_KEYS in each of its forms, the agents an engine may be held
to, the names that can be subject tokens, and what the verified caller may
act for."""

from __future__ import annotations

import json

import pytest

from outrider.engine_identity import public_nkey
from services.common.callers import EVERY_AGENT, agent_scope
from services.common.nats import engine_nkeys
from services.common.settings import SettingsError, load

KEY, PREVIOUS, OTHER = "k" * 40, "p" * 40, "o" * 40
SECRETS = {"OUTRIDER_JWT_SECRET": "j" * 40, "OUTRIDER_SERVICE_KEY": "v" * 40}


def _load(tmp_path, engines: object, **env: str):
    return load({**SECRETS, "OUTRIDER_DATA_DIR": str(tmp_path), "OUTRIDER_ENGINE_KEYS": json.dumps(engines), **env})


@pytest.mark.parametrize(
    ("given", "keys", "agents"),
    [
        (KEY, (KEY,), None),
        ([KEY, PREVIOUS], (KEY, PREVIOUS), None),
        ({"keys": KEY}, (KEY,), None),
        ({"keys": [KEY, PREVIOUS]}, (KEY, PREVIOUS), None),
        ({"keys": [KEY], "agents": ["DISPATCH_AGENT"]}, (KEY,), frozenset({"DISPATCH_AGENT"})),
        (
            {"agents": ["DISPATCH_AGENT", "ROUTE_AGENT"], "keys": [KEY, PREVIOUS]},
            (KEY, PREVIOUS),
            frozenset({"DISPATCH_AGENT", "ROUTE_AGENT"}),
        ),
    ],
    ids=["key", "key and previous", "object", "object with previous", "one agent", "two agents"],
)
def test_every_form_of_an_engine_entry(tmp_path, given, keys, agents) -> None:
    settings = _load(tmp_path, {"dispatch": given})
    assert settings.engine_keys["dispatch"] == keys
    assert settings.engine_agents.get("dispatch") == agents


def test_an_engine_without_a_list_may_act_for_every_agent_and_default_is_unlimited(tmp_path) -> None:
    settings = _load(
        tmp_path,
        {"dispatch": {"keys": KEY, "agents": ["DISPATCH_AGENT"]}, "support": OTHER},
        OUTRIDER_INTERNAL_KEY=PREVIOUS,
    )
    assert settings.engine_agents == {"dispatch": frozenset({"DISPATCH_AGENT"})}
    assert list(settings.engine_keys) == ["dispatch", "support", "default"]
    dispatch = agent_scope("dispatch", settings.engine_agents)
    assert dispatch.permits("DISPATCH_AGENT") and not dispatch.permits("EXCEPTION_AGENT")
    assert "EXCEPTION_AGENT" in dispatch.refusal("EXCEPTION_AGENT") and "dispatch" in dispatch.refusal("X")
    for unlimited in ("support", "default"):
        assert agent_scope(unlimited, settings.engine_agents).permits("EXCEPTION_AGENT")
    # The platform acting for itself, with no engine behind it.
    assert agent_scope(None, settings.engine_agents) is EVERY_AGENT


@pytest.mark.parametrize(
    ("given", "says"),
    [
        ({"keys": KEY, "agents": []}, "non-empty list"),
        ({"keys": KEY, "agents": "DISPATCH_AGENT"}, "non-empty list"),
        ({"keys": KEY, "agents": ["DISPATCH AGENT"]}, "agent ids"),
        ({"keys": KEY, "agents": [7]}, "agent ids"),
        ({"agents": ["DISPATCH_AGENT"]}, '"keys"'),
        ({"keys": KEY, "agent": ["DISPATCH_AGENT"]}, "fields"),
        ({"keys": [KEY, PREVIOUS, OTHER]}, "previous key"),
        ({"keys": []}, "previous key"),
        ({"keys": "short"}, "at least 32 characters"),
        (12, "previous key"),
    ],
)
def test_a_malformed_entry_is_refused_naming_the_variable_never_a_key(tmp_path, given, says) -> None:
    with pytest.raises(SettingsError) as refused:
        _load(tmp_path, {"dispatch": given})
    assert "OUTRIDER_ENGINE_KEYS" in str(refused.value) and says in str(refused.value)
    assert KEY not in str(refused.value) and PREVIOUS not in str(refused.value)


@pytest.mark.parametrize("name", ["dis.patch", "dis patch", "*", ">", "x" * 65, "", "dïspatch"])
def test_an_engine_name_that_is_not_a_subject_token_is_refused_at_load(tmp_path, name) -> None:
    with pytest.raises(SettingsError, match=r"OUTRIDER_ENGINE_KEYS.*subject token"):
        _load(tmp_path, {name: KEY})


def test_every_key_of_a_rollover_is_a_credential_and_a_shared_key_is_listed_once(tmp_path) -> None:
    settings = _load(tmp_path, {"dispatch": [KEY, PREVIOUS], "support": KEY}, OUTRIDER_INTERNAL_KEY=OTHER)
    assert [(nkey.engine, nkey.public_key) for nkey in engine_nkeys(settings)] == [
        ("dispatch", public_nkey(KEY)),
        ("dispatch", public_nkey(PREVIOUS)),
        ("default", public_nkey(OTHER)),
    ]
