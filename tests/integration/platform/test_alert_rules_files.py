"""The Prometheus rules and the Grafana dashboard under deploy/ name only
metrics /metrics really exports, read from a live scrape with the contexts
running and a stream in place; promtool checks the rules, and runs their
unit tests (outrider-rules.test.yaml), where installed."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from services.common.nats import StreamLimits, ensure_topology
from tests.harness import gateway_client, internal_headers, running
from tests.integration.telemetry.support import broker

DEPLOY = Path(__file__).resolve().parents[3] / "deploy"
RULES = DEPLOY / "prometheus" / "outrider-rules.yaml"
RULE_TESTS = DEPLOY / "prometheus" / "outrider-rules.test.yaml"
DASHBOARD = DEPLOY / "grafana" / "outrider-dashboard.json"
# Series Prometheus makes itself rather than scrapes.
PROMETHEUS_OWN = {"up"}
FUNCTIONS = {"increase", "rate", "sum", "by", "humanizePercentage"}


def metric_names(expr: str) -> set[str]:
    # Label matchers, ranges and the labels of a `by (...)` grouping name no metric.
    without_labels = re.sub(r"\{[^}]*\}|\[[^\]]*\]|\b(?:by|without)\s*\([^)]*\)", "", expr)
    return {word for word in re.findall(r"[a-zA-Z_][a-zA-Z0-9_]*", without_labels) if word not in FUNCTIONS}


def rule_exprs() -> list[str]:
    document = yaml.safe_load(RULES.read_text())
    return [rule["expr"] for group in document["groups"] for rule in group["rules"]]


def dashboard_exprs() -> list[str]:
    return [target["expr"] for panel in json.loads(DASHBOARD.read_text())["panels"] for target in panel["targets"]]


def test_the_name_reader_finds_metric_names_only():
    assert metric_names('increase(outrider_x_total{job="a"}[5m]) > 5') == {"outrider_x_total"}
    assert metric_names("sum by (class) (rate(outrider_y_total[5m])) / sum(rate(outrider_z[5m]))") == {
        "outrider_y_total",
        "outrider_z",
    }


async def test_every_metric_the_rules_and_dashboard_use_is_exported(settings):
    async with running(settings, ["telemetry", "outcomes", "decisions"]), broker(settings) as (_, js):
        await ensure_topology(js, StreamLimits.of(settings))
        async with gateway_client(settings) as client:
            scrape = await client.get("/metrics", headers=internal_headers())
    assert scrape.status_code == 200
    exported = {line.split()[2] for line in scrape.text.splitlines() if line.startswith("# TYPE ")}
    assert "outrider_alert_delivery_failures_total" in exported
    used = set().union(*(metric_names(e) for e in rule_exprs()), *(metric_names(e) for e in dashboard_exprs()))
    assert used - PROMETHEUS_OWN - exported == set()
    assert {
        "outrider_stream_fullness_ratio",
        "outrider_alert_delivery_failures_total",
        "outrider_http_responses_total",
        "outrider_ready",
        "outrider_context_serving",
    } <= used


def promtool() -> str:
    found = shutil.which("promtool")
    if found is None:
        # .ci/run installs it, and under CI=true its absence fails: a green
        # CI run always means promtool checked the rules.
        if os.environ.get("CI") == "true":
            pytest.fail("promtool is not installed (apt-get install prometheus)")
        pytest.skip("promtool is not installed")
    return found


def test_promtool_accepts_the_rules():
    result = subprocess.run([promtool(), "check", "rules", str(RULES)], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_rules_fire_as_their_unit_tests_say():
    result = subprocess.run([promtool(), "test", "rules", str(RULE_TESTS)], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    # The ratio and the readiness alerts have cases there.
    tested = {
        case["alertname"]
        for test in yaml.safe_load(RULE_TESTS.read_text())["tests"]
        for case in test["alert_rule_test"]
    }
    assert {"OutriderHttpErrors", "OutriderNotReady"} <= tested
