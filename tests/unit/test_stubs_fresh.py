"""The committed stubs in outrider/v1 must be exactly what the .proto files generate."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_committed_stubs_match_the_protos(tmp_path):
    subprocess.run([sys.executable, str(ROOT / "scripts" / "codegen.py"), "--out", str(tmp_path)], check=True)
    generated = {p.name: p.read_text() for p in (tmp_path / "outrider" / "v1").glob("*_pb2*.py*")}
    committed = {p.name: p.read_text() for p in (ROOT / "outrider" / "v1").glob("*_pb2*.py*")}
    assert sorted(generated) == sorted(committed), "a stub is missing or extra: run scripts/codegen.py"
    stale = [name for name in generated if generated[name] != committed[name]]
    assert stale == [], f"stale stubs {stale}: run scripts/codegen.py"
    protos = sorted(p.stem for p in (ROOT / "proto" / "outrider" / "v1").glob("*.proto"))
    assert protos == ["common", "decisions", "outcomes", "playground", "registry", "telemetry"]
