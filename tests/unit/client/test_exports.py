"""What an engine author imports is a contract: pinned here, and kept free of
the server's dependencies."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import outrider.client

ROOT = Path(__file__).resolve().parents[3]
SERVER_ONLY = {
    "sqlalchemy",
    "asyncpg",
    "fastapi",
    "starlette",
    "alembic",
    "uvicorn",
    "anthropic",
    "pgserver",
    "services",
    "gateway",
}


def test_the_public_exports_are_pinned() -> None:
    assert sorted(outrider.client.__all__) == [
        "AgentSettings",
        "AlreadyExists",
        "Assignment",
        "Conflict",
        "CredentialRefused",
        "DatabaseUnavailable",
        "DecisionIdReused",
        "DecisionRecorder",
        "HumanDecision",
        "HumanSourceConflict",
        "HumanSourcesMisconfigured",
        "InvalidArgument",
        "Lease",
        "LeaseRefused",
        "LeaseUnavailable",
        "ModelChoice",
        "ModelRouter",
        "NotFound",
        "OutriderError",
        "PermissionDenied",
        "Precedent",
        "PrecedentClient",
        "Precedents",
        "RateLimited",
        "RecorderCounters",
        "RegistryClient",
        "RegistryDefaults",
        "RegistrySnapshot",
        "RolloutSettings",
        "SkillSettings",
        "SnapshotFormatError",
        "SubjectGate",
        "SubjectSettings",
        "TelemetryPublisher",
        "TlsFiles",
        "ToolSettings",
        "Unauthenticated",
        "Unavailable",
        "UnknownThreshold",
        "keyed_channel",
        "refusal",
    ]
    assert all(hasattr(outrider.client, name) for name in outrider.client.__all__)


def test_the_client_imports_no_server_dependencies() -> None:
    # Make every server-only package unimportable, then import the client.
    probe = (
        "import sys\n"
        f"for name in {sorted(SERVER_ONLY)!r}: sys.modules[name] = None\n"
        "import outrider.client\n"
        "print('ok')\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


def test_the_base_install_pulls_no_server_dependency() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    base = {
        dep.split(">")[0].split("<")[0].split("=")[0].split("[")[0].strip().lower() for dep in project["dependencies"]
    }
    # nkeys: the NATS credential an engine derives from its key (outrider.engine_identity).
    assert base == {"grpcio", "protobuf", "nats-py", "nkeys"}
    assert not base & SERVER_ONLY
