"""No Docker engine runs here, so compose.yaml is checked against the code: every
command is a real subcommand, every variable one the settings read, every port
the one the settings derive."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
import yaml

from launcher.cli import parser
from services.common.embedded import nats_server_binary
from services.common.nats import NatsUser, authorization
from services.common.settings import CONTEXTS, ENV_PREFIXES, ENV_VARS, Settings, load

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = yaml.safe_load((ROOT / "compose.yaml").read_text())
SERVICES = COMPOSE["services"]
OUTRIDER_SERVICES = {name: spec for name, spec in SERVICES.items() if spec.get("build") == "."}
NATS_SERVERS = {name: spec for name, spec in SERVICES.items() if name.startswith("nats-")}


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
    assert "postgres" in SERVICES and len(NATS_SERVERS) == 3
    assert "pgvector" in SERVICES["postgres"]["image"]
    for spec in NATS_SERVERS.values():
        assert "-js" in spec["command"]


def flag(command: list[str], name: str) -> str:
    return command[command.index(name) + 1]


def test_nats_servers_form_one_cluster_the_parts_know_whole():
    for name, spec in NATS_SERVERS.items():
        command = spec["command"]
        assert flag(command, "-n") == name
        assert flag(command, "--cluster_name") == "outrider"
        route_port = flag(command, "--cluster").rsplit(":", 1)[1]
        assert set(flag(command, "--routes").split(",")) == {
            f"nats://{other}:{route_port}" for other in NATS_SERVERS if other != name
        }
    for name, spec in OUTRIDER_SERVICES.items():
        settings = load(resolved_env(spec))
        assert settings.nats_url.split(",") == [f"nats://{server}:4222" for server in NATS_SERVERS]
        assert settings.nats_replicas == len(NATS_SERVERS)
        # A replica of each part, beside the one a server's loss leaves.
        assert spec["deploy"]["replicas"] >= 2, name
        assert set(NATS_SERVERS) <= set(spec["depends_on"]) or name == "gateway"


@pytest.mark.parametrize("server", ["nats-0", "nats-1", "nats-2"])
def test_nats_admits_the_users_the_code_admits_with_the_same_permissions(server):
    nats = NATS_SERVERS[server]
    command = nats["command"]
    mounted = {mount["target"]: mount["source"] for mount in nats["configs"]}
    config = json.loads(COMPOSE["configs"][mounted[command[command.index("-c") + 1]]]["content"])
    service_password = "${OUTRIDER_NATS_PASSWORD:?set OUTRIDER_NATS_PASSWORD}"
    engine_password = "${OUTRIDER_NATS_ENGINE_PASSWORD:?set OUTRIDER_NATS_ENGINE_PASSWORD}"
    defaults = Settings()
    assert config == {
        "authorization": authorization(
            NatsUser(defaults.nats_user, service_password), NatsUser(defaults.nats_engine_user, engine_password)
        )
    }
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


def test_the_real_nats_server_accepts_each_servers_command(tmp_path):
    content = COMPOSE["configs"]["nats-users"]["content"]
    config = tmp_path / "outrider.conf"
    config.write_text(re.sub(r"\$\{[A-Z_]+:\?[^}]*\}", "p" * 40, content))
    for name, spec in NATS_SERVERS.items():
        command = list(spec["command"])
        command[command.index("-c") + 1] = str(config)
        command[command.index("-sd") + 1] = str(tmp_path / name)
        checked = subprocess.run(
            [nats_server_binary(), *command, "-t"], check=False, capture_output=True, text=True, timeout=30
        )
        # An unknown flag prints the usage and still exits 0; only a check
        # that ran says the configuration is valid.
        assert checked.returncode == 0 and "is valid" in checked.stderr + checked.stdout, (name, checked.stderr)
