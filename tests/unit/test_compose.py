"""No Docker engine runs here, so compose.yaml is checked against the code: every
command is a real subcommand, every variable one the settings read, every port
the one the settings derive."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from outrider.cli import parser
from services.common.nats import NatsUser, authorization
from services.common.settings import CONTEXTS, ENV_PREFIXES, ENV_VARS, Settings, load

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = yaml.safe_load((ROOT / "compose.yaml").read_text())
SERVICES = COMPOSE["services"]
OUTRIDER_SERVICES = {name: spec for name, spec in SERVICES.items() if spec.get("build") == "."}


def resolved_env(spec: dict) -> dict[str, str]:
    env = {}
    for key, value in spec["environment"].items():
        text = str(value)
        # ${VAR:?msg} and ${VAR:-default}: stand in a value the way compose would.
        if text.startswith("${"):
            text = "x" * 32 if ":?" in text else text.split(":-", 1)[1].rstrip("}")
        env[key] = text
    return env


def test_every_part_has_a_container():
    assert set(OUTRIDER_SERVICES) == {*CONTEXTS, "gateway"}
    assert {"postgres", "nats"} <= set(SERVICES)
    assert "pgvector" in SERVICES["postgres"]["image"]
    assert "-js" in SERVICES["nats"]["command"]


def test_nats_admits_the_users_the_code_admits_with_the_same_permissions():
    nats = SERVICES["nats"]
    command = nats["command"]
    mounted = {mount["target"]: mount["source"] for mount in nats["configs"]}
    config = json.loads(COMPOSE["configs"][mounted[command[command.index("-c") + 1]]]["content"])
    service_password = "${OUTRIDER_NATS_PASSWORD:?set OUTRIDER_NATS_PASSWORD}"
    engine_password = "${OUTRIDER_NATS_ENGINE_PASSWORD:?set OUTRIDER_NATS_ENGINE_PASSWORD}"
    defaults = Settings()
    assert config == {"authorization": authorization(NatsUser(defaults.nats_user, service_password),
                                                     NatsUser(defaults.nats_engine_user, engine_password))}
    # The contexts log in with the password the server was given.
    for spec in OUTRIDER_SERVICES.values():
        assert spec["environment"]["OUTRIDER_NATS_PASSWORD"] == service_password


@pytest.mark.parametrize("name", sorted(OUTRIDER_SERVICES))
def test_commands_are_real_subcommands(name):
    spec = OUTRIDER_SERVICES[name]
    args = parser().parse_args(spec["command"])
    if args.command == "serve":
        assert args.context == name
    else:
        assert (name, args.command) == ("gateway", "gateway")
    probe = spec["healthcheck"]["test"]
    assert probe[:2] == ["CMD", "outrider"]
    assert parser().parse_args(probe[2:]).target == name


@pytest.mark.parametrize("name", sorted(OUTRIDER_SERVICES))
def test_environment_is_what_the_settings_read(name):
    env = resolved_env(OUTRIDER_SERVICES[name])
    unknown = [k for k in env if k not in ENV_VARS and not k.startswith(ENV_PREFIXES)]
    assert unknown == []
    settings = load(env)
    assert settings.production
    for context in CONTEXTS:
        assert settings.addr(context).split(":")[0] == context


@pytest.mark.parametrize("name", sorted(CONTEXTS))
def test_context_ports_match_the_addresses(name):
    spec = OUTRIDER_SERVICES[name]
    settings = load(resolved_env(spec))
    assert [str(settings.port(name))] == [str(p) for p in spec["expose"]]
    assert settings.grpc_host == "0.0.0.0"


def test_gateway_port_matches_the_http_setting():
    spec = OUTRIDER_SERVICES["gateway"]
    settings = load(resolved_env(spec))
    published = [str(p).split(":")[-1] for p in spec["ports"]]
    assert published == [str(settings.http_port)]
    assert settings.http_host == "0.0.0.0"
    assert set(spec["depends_on"]) == set(CONTEXTS)
