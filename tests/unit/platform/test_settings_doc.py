"""Settings are declared once: the README's table is generated from the
declarations, and every declared variable is really read by load()."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from services.common.settings import (
    DECLARED,
    ENV_VARS,
    SettingsError,
    load,
    settings_table,
)

ROOT = Path(__file__).resolve().parents[3]


def test_the_readme_table_is_generated_from_the_declarations() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "settings_doc.py"), "--check"], check=False, cwd=ROOT
    )
    assert result.returncode == 0, "README.md's settings table is stale: run python scripts/settings_doc.py"


def test_every_declaration_is_in_the_table_once() -> None:
    table = settings_table()
    for declared in DECLARED:
        assert table.count(f"| `{declared.env}` |") == 1, declared.env


BASE = {"OUTRIDER_JWT_SECRET": "j" * 40, "OUTRIDER_INTERNAL_KEY": "k" * 40}


@pytest.mark.parametrize("declared", [d for d in DECLARED if getattr(d.parse, "bounds", None)], ids=lambda d: d.env)
def test_a_value_outside_its_bounds_is_refused_naming_the_variable_or_falls_back(declared, tmp_path) -> None:
    bounds = declared.parse.bounds
    outside = str(bounds[1] + 1) if isinstance(bounds[0], int) else "nonsense"
    env = {**BASE, "OUTRIDER_DATA_DIR": str(tmp_path), declared.env: outside}
    if declared.lenient:
        assert getattr(load(env), declared.field) == declared.default
        return
    with pytest.raises(SettingsError) as refused:
        load(env)
    assert declared.env in str(refused.value)


def test_every_declared_variable_is_read(tmp_path) -> None:
    defaults = load({**BASE, "OUTRIDER_DATA_DIR": str(tmp_path)})
    changed = load(
        {
            **BASE,
            "OUTRIDER_DATA_DIR": str(tmp_path / "other"),
            "OUTRIDER_HTTP_PORT": "9090",
            "OUTRIDER_LOG_FORMAT": "JSON",
            "OUTRIDER_DECISIONS_ADDR": "decisions:50052",
            "OUTRIDER_TOOL_BASE_URL_DOORMILE_API": "http://backend:8099/",
        }
    )
    assert (defaults.http_port, changed.http_port) == (8080, 9090)
    assert changed.log_format == "json"
    assert changed.addr("decisions") == "decisions:50052" and changed.addr("registry") == "127.0.0.1:50051"
    assert changed.tool_base_urls == {"doormile_api": "http://backend:8099"}
    assert "OUTRIDER_TOOL_BASE_URL_DOORMILE_API" not in ENV_VARS
