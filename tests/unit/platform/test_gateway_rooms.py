"""The gateway's rooms keep their roles: a route module holds endpoints and
imports no other route module, and leaves building and reading a context's
messages to that context's codec."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import gateway

GATEWAY = Path(gateway.__file__).parent
ROUTES = sorted((GATEWAY / "routes").glob("[!_]*.py"))
CODECS = sorted((GATEWAY / "codec").glob("[!_]*.py"))


def _imported(path: Path) -> set[str]:
    """Every module a file imports, `from a import b` counted as both `a` and `a.b`."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def test_there_are_rooms_to_check() -> None:
    assert len(ROUTES) >= 7 and len(CODECS) >= 7


@pytest.mark.parametrize("path", ROUTES, ids=lambda path: path.stem)
def test_a_route_module_imports_no_other_route_module(path: Path) -> None:
    assert sorted(name for name in _imported(path) if name.startswith("gateway.routes.")) == []


@pytest.mark.parametrize("path", ROUTES, ids=lambda path: path.stem)
def test_a_route_module_builds_and_reads_no_message_itself(path: Path) -> None:
    # A stub (`*_pb2_grpc`) is how a route calls a context; the messages it
    # sends and gets are its codec's to make and read.
    messages = [name for name in _imported(path) if name.startswith("outrider.v1.") and name.endswith("_pb2")]
    assert messages == []


@pytest.mark.parametrize("path", CODECS, ids=lambda path: path.stem)
def test_a_codec_imports_no_route(path: Path) -> None:
    assert sorted(name for name in _imported(path) if name.startswith(("gateway.routes", "gateway.app"))) == []
