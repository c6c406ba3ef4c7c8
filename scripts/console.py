"""Rebuild the operator console: its API types from the gateway's OpenAPI
document, then its bundle.

Usage: python scripts/console.py [--types-only | --bundle-only] [--types-out FILE]
                                 [--bundle-out DIR] [--openapi-out FILE]

With no options it writes console/src/api/schema.d.ts and the bundle into
gateway/console_dist, the committed copies. tests/unit/test_console_fresh.py
writes each into a temporary folder and fails when the committed one differs.
Needs Node and `npm ci` run in console/.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONSOLE = ROOT / "console"
TYPES = CONSOLE / "src" / "api" / "schema.d.ts"
BUNDLE = ROOT / "gateway" / "console_dist"


def openapi_document() -> dict:
    """The gateway's OpenAPI document, from the app itself (nothing listens)."""
    sys.path.insert(0, str(ROOT))
    from gateway.app import create_app
    from services.common.settings import load

    with tempfile.TemporaryDirectory() as data_dir:
        settings = load(
            {
                "OUTRIDER_DATA_DIR": data_dir,
                "OUTRIDER_JWT_SECRET": "openapi-only-secret-0123456789abcdef",
                "OUTRIDER_INTERNAL_KEY": "openapi-only-key-0123456789abcdef",
            }
        )
        return create_app(settings).openapi()


def tool(name: str) -> str:
    path = CONSOLE / "node_modules" / ".bin" / name
    if not path.exists():
        raise SystemExit(f"{path} is missing: run `npm ci` in console/ first")
    return str(path)


def write_types(out: Path, openapi_out: Path) -> None:
    openapi_out.write_text(json.dumps(openapi_document(), indent=2, sort_keys=True) + "\n")
    out.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [tool("openapi-typescript"), str(openapi_out), "--output", str(out)],
        cwd=CONSOLE,
        check=True,
        stdout=subprocess.DEVNULL,
    )


def build_bundle(out: Path) -> None:
    subprocess.run(
        [tool("vite"), "build", "--outDir", str(out), "--emptyOutDir", "--logLevel", "warn"], cwd=CONSOLE, check=True
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--types-out", type=Path, default=TYPES)
    parser.add_argument("--bundle-out", type=Path, default=BUNDLE)
    parser.add_argument("--openapi-out", type=Path, default=CONSOLE / ".openapi.json")
    only = parser.add_mutually_exclusive_group()
    only.add_argument("--types-only", action="store_true", help="regenerate the API types, not the bundle")
    only.add_argument("--bundle-only", action="store_true", help="build the bundle from the API types as they are")
    args = parser.parse_args()
    if shutil.which("node") is None:
        raise SystemExit("node is not installed: the console needs Node 20.19 or newer to rebuild")
    if not args.bundle_only:
        write_types(args.types_out.resolve(), args.openapi_out.resolve())
    if not args.types_only:
        build_bundle(args.bundle_out.resolve())


if __name__ == "__main__":
    main()
