"""`outrider` help and version: every option says what it does and its default,
and the long-running commands name their ports and the settings that move them."""

from __future__ import annotations

import importlib.metadata

import pytest

from launcher.cli import parser


def help_of(*command: str, capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as leaving:
        parser().parse_args([*command, "--help"])
    assert leaving.value.code == 0
    return " ".join(capsys.readouterr().out.split())


def test_version_prints_the_installed_version(capsys):
    with pytest.raises(SystemExit) as leaving:
        parser().parse_args(["--version"])
    assert leaving.value.code == 0
    assert capsys.readouterr().out.strip() == f"outrider {importlib.metadata.version('outrider')}"


def test_seed_and_timeout_say_what_they_do_with_their_defaults(capsys):
    demo = help_of("demo", capsys=capsys)
    assert "--seed SEED the simulation's random seed: same seed, same fleet (default: 11)" in demo
    assert "--backend-port BACKEND_PORT port of the demo logistics backend (default: 8099)" in demo
    assert "--scale SCALE booking rounds to simulate (default: 120)" in demo
    health = help_of("health", capsys=capsys)
    assert "--timeout TIMEOUT seconds to wait for the answer (default: 3.0)" in health


def test_every_option_of_every_command_has_help(capsys):
    root = parser()
    commands = next(action for action in root._actions if action.dest == "command").choices
    bare = [
        f"{name} {'/'.join(action.option_strings) or action.dest}"
        for name, command in commands.items()
        for action in command._actions
        if action.dest != "help" and not action.help
    ]
    assert bare == []


@pytest.mark.parametrize(
    ("command", "named"),
    [
        (("up",), ["OUTRIDER_HTTP_PORT", "8080", "OUTRIDER_GRPC_PORT", "50051", "OUTRIDER_NATS_PORT", "4222"]),
        (("gateway",), ["OUTRIDER_HTTP_HOST", "OUTRIDER_HTTP_PORT", "127.0.0.1:8080"]),
        (("serve",), ["OUTRIDER_<CONTEXT>_ADDR", "OUTRIDER_GRPC_PORT", "50051", "telemetry +4"]),
    ],
)
def test_long_running_commands_name_their_ports_and_settings(command, named, capsys):
    text = help_of(*command, capsys=capsys)
    assert [word for word in named if word not in text] == []
