"""`pip install outrider` with no extra is what an engine installs: the client
works, and the `outrider` command explains in one line what it lacks instead
of failing with an ImportError traceback.

The import-level check in tests/unit/client makes server packages
unimportable inside this environment; this one builds a real base-only venv,
so a dependency that only the server extra happens to pull in cannot hide.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def base_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("base-install")
    # Built from a copy: pip builds a local project in place, and its build/
    # and egg-info must not land in the working tree under test.
    source = home / "source"
    shutil.copytree(
        ROOT,
        source,
        ignore=shutil.ignore_patterns(
            ".git", ".venv", ".outrider", "build", "*.egg-info", "node_modules", "__pycache__", "tests", "bench"
        ),
    )
    venv.EnvBuilder(with_pip=True).create(home / "env")
    python = home / "env" / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", str(source)], check=True, timeout=600)
    return home / "env"


def run(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(home / "bin" / "outrider"), *args], capture_output=True, text=True, timeout=60, cwd=home, check=False
    )


def test_the_base_install_has_no_server_package(base_venv: Path) -> None:
    listed = subprocess.run(
        [str(base_venv / "bin" / "python"), "-m", "pip", "list", "--format=freeze"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.lower()
    installed = {line.split("==")[0] for line in listed.splitlines()}
    assert {"grpcio", "protobuf", "nats-py", "outrider"} <= installed
    assert not installed & {"sqlalchemy", "fastapi", "asyncpg", "pgserver", "uvicorn", "anthropic", "pydantic"}


def test_the_client_imports_and_builds_a_request(base_venv: Path) -> None:
    probe = (
        "from outrider.client import DecisionRecorder, TelemetryPublisher, keyed_channel\n"
        "from outrider.wire import json_bytes, json_object\n"
        "assert json_object(json_bytes({'stall_minutes': 18})) == {'stall_minutes': 18}\n"
        "print('ok')\n"
    )
    result = subprocess.run(
        [str(base_venv / "bin" / "python"), "-c", probe], capture_output=True, text=True, cwd=base_venv, check=False
    )
    assert (result.returncode, result.stdout.strip()) == (0, "ok"), result.stderr


def test_help_works(base_venv: Path) -> None:
    result = run(base_venv, "--help")
    assert result.returncode == 0 and "outrider" in result.stdout


@pytest.mark.parametrize("command", [["up"], ["token", "--role", "1"], ["serve", "registry"], ["migrate"]])
def test_a_server_command_says_what_to_install_in_one_line(base_venv: Path, command: list[str]) -> None:
    result = run(base_venv, *command)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "pip install 'outrider[server]'" in lines[0] and "Traceback" not in result.stderr


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


@pytest.mark.parametrize("side", ["services", "gateway"])
def test_the_server_side_never_imports_the_engine_sdk(side: str) -> None:
    offenders = sorted(
        str(path.relative_to(ROOT))
        for path in (ROOT / side).rglob("*.py")
        if any(name == "outrider.client" or name.startswith("outrider.client.") for name in imported_modules(path))
    )
    assert offenders == []


def test_the_engine_sdk_never_imports_server_code() -> None:
    offenders = sorted(
        str(path.relative_to(ROOT))
        for path in (ROOT / "outrider").rglob("*.py")
        if any(name.partition(".")[0] in ("services", "gateway", "launcher") for name in imported_modules(path))
    )
    assert offenders == []
