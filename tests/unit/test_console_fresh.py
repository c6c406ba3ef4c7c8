"""The console's committed API types and bundle must be exactly what its
sources build, its pure logic must pass its own tests (vitest), and its
sources must pass its lint (ESLint and tsc, `npm run lint` in console/).

Run `make console` to rebuild both after changing a route or the console.
Without Node a developer's run skips these; CI fails them (see console_tools).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.console_tools import CONSOLE, ROOT, initial_bundle, node_modules

SCRIPT = ROOT / "scripts" / "console.py"
COMMITTED_TYPES = CONSOLE / "src" / "api" / "schema.d.ts"
COMMITTED_BUNDLE = ROOT / "gateway" / "console_dist"


def tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_api_types_match_the_gateways_openapi(tmp_path):
    node_modules()
    out = tmp_path / "schema.d.ts"
    subprocess.run(
        [
            sys.executable,
            str(SCRIPT),
            "--types-only",
            "--types-out",
            str(out),
            "--openapi-out",
            str(tmp_path / "openapi.json"),
        ],
        check=True,
    )
    assert out.read_text() == COMMITTED_TYPES.read_text(), "stale console API types: run `make console`"


def test_committed_bundle_is_what_the_sources_build(tmp_path):
    node_modules()
    out = tmp_path / "dist"
    subprocess.run([sys.executable, str(SCRIPT), "--bundle-only", "--bundle-out", str(out)], check=True)
    built, committed = tree(out), tree(COMMITTED_BUNDLE)
    assert sorted(built) == sorted(committed), "the console bundle is stale: run `make console`"
    stale = [name for name in built if built[name] != committed[name]]
    assert stale == [], f"stale console files {stale}: run `make console`"


def test_the_consoles_pure_logic_passes_vitest():
    node_modules()
    run = subprocess.run(
        [str(CONSOLE / "node_modules" / ".bin" / "vitest"), "run", "--reporter=dot"],
        cwd=CONSOLE,
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]


def test_the_console_passes_its_lint():
    # ESLint (typescript-eslint strict, no import circle, features importing
    # only themselves and the shared folders) and tsc --noEmit, as `make lint`.
    node_modules()
    run = subprocess.run(["npm", "run", "--silent", "lint"], cwd=CONSOLE, capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]


def test_the_first_page_load_stays_within_250_kb_gzipped():
    # The bar the console is held to (charts included); the committed bundle
    # is the one the gateway serves, and the test above keeps it fresh.
    bundle = initial_bundle()
    assert bundle["files"] >= 2, "index.html names its script and styles"
    assert bundle["gzip"] <= 250_000, f"{bundle['gzip']:,} bytes gzipped"
