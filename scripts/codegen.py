"""Regenerate the Python stubs in outrider/v1 from proto/outrider/v1/*.proto.

Usage: python scripts/codegen.py [--out DIR]

The stubs are committed so that an engine can install the client without
grpcio-tools; tests/unit/test_stubs_fresh.py fails when they drift from the
.proto files.
"""

from __future__ import annotations

import argparse
import sys
from importlib import resources
from pathlib import Path

from grpc_tools import protoc

ROOT = Path(__file__).resolve().parent.parent
PROTO_ROOT = ROOT / "proto"


def proto_files() -> list[Path]:
    return sorted((PROTO_ROOT / "outrider" / "v1").glob("*.proto"))


def generate(out_root: Path) -> None:
    """Write outrider/v1/*_pb2*.py(i) under out_root."""
    (out_root / "outrider" / "v1").mkdir(parents=True, exist_ok=True)
    well_known = str(resources.files("grpc_tools") / "_proto")
    args = [
        "protoc",
        f"-I{PROTO_ROOT}",
        f"-I{well_known}",
        f"--python_out={out_root}",
        f"--pyi_out={out_root}",
        f"--grpc_python_out={out_root}",
        *(str(p.relative_to(PROTO_ROOT)) for p in proto_files()),
    ]
    if protoc.main(args) != 0:
        raise SystemExit("protoc failed")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT, help="root to write outrider/v1 under")
    generate(parser.parse_args().out)


if __name__ == "__main__":
    sys.exit(main())
