"""What the console's tests need from outside Python: Node with the console's
own packages (for the bundle and types checks, and for axe-core), and a
Chromium for the browser tests.

Where a tool is missing, a developer's run skips those tests with the reason;
CI (which sets CI=true) fails them instead, so a green CI always means they ran.
"""

from __future__ import annotations

import gzip
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CONSOLE = ROOT / "console"
CHROMIUM_CANDIDATES = ("chromium", "chromium-browser")
BUNDLE = ROOT / "gateway" / "console_dist"


def initial_bundle(dist: Path = BUNDLE) -> dict[str, int]:
    """Bytes, raw and gzipped (level 9), of what the first page load fetches:
    index.html and the scripts and styles it names."""
    index = (dist / "index.html").read_text()
    names = re.findall(r'(?:src|href)="/console/(assets/[^"]+)"', index)
    files = {"index.html": (dist / "index.html").read_bytes(), **{n: (dist / n).read_bytes() for n in names}}
    return {
        "files": len(files),
        "raw": sum(len(b) for b in files.values()),
        "gzip": sum(len(gzip.compress(b, compresslevel=9)) for b in files.values()),
    }


def missing(what: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"{what} is required in CI for the console's tests", pytrace=False)
    pytest.skip(f"{what} is not installed")


def node_modules() -> Path:
    """console/node_modules, installed from package-lock.json when absent or older than the lock."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        missing("Node (node and npm)")
    marker = CONSOLE / "node_modules" / ".package-lock.json"
    lock = CONSOLE / "package-lock.json"
    if not marker.exists() or marker.stat().st_mtime < lock.stat().st_mtime:
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=CONSOLE, check=True, stdout=subprocess.DEVNULL)
    return CONSOLE / "node_modules"


def chromium() -> str:
    for name in CHROMIUM_CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    missing("Chromium (Debian package `chromium`)")
    raise AssertionError("unreachable")
