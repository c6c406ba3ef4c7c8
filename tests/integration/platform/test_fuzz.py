"""Schemathesis against the live gateway's own OpenAPI document: every
operation, with each gate's credential, without any, and with the wrong one.

The gated run sends each operation what it needs to get past its gate (the
engine key to /internal/*, /v1/traces and /metrics, a role-1 token to every
console write, a role-3 token to every console read), positive and negative
data, and stateful sequences along the links schemathesis infers. The other
two runs send every operation no credential, and a credential of the wrong
kind or role. No input may produce a server error (503 is documented: a
context or the model API not configured), every answer must match its
documented status, content type and schema, every 4xx must be the error
envelope (schemathesis_checks.py), and no schema-violating request may be
accepted.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

from services.common.settings import CONTEXTS
from tests.harness import INTERNAL_KEY, bearer, bound_socket, running, serving_gateway, with_env

# Examples per operation and phase: enough to try every class of input the
# document allows and forbids, few enough to keep the gate's run short. The
# refused runs stop at each gate, so fewer tell as much, and they leave out
# the coverage phase: its thousands of boundary values all meet the same 401.
GATED_EXAMPLES = 10
REFUSED_EXAMPLES = 5
SEED = 20261130
CHECKS = (
    "not_a_server_error",
    "status_code_conformance",
    "content_type_conformance",
    "response_schema_conformance",
    "negative_data_rejection",
    "error_envelope",
)
HOOKS = "tests.integration.platform.schemathesis_checks"
ROOT = Path(__file__).resolve().parents[3]
CHECK_CONFIG = """
[checks.not_a_server_error]
expected-statuses = ["1xx", "2xx", "3xx", "4xx", "503"]

[checks.negative_data_rejection]
# 413: a body over the size cap is refused before it is read, which is a
# refusal like any other.
expected-statuses = ["400", "401", "403", "404", "405", "406", "409", "413", "415", "422", "428", "429"]
"""
ENGINE_PATHS = "^/(internal/|v1/|metrics$)"
WRITES = ["POST", "PATCH", "PUT", "DELETE"]


def operations(path_regex: str, headers: dict[str, str], methods: list[str] | None = None) -> str:
    """A config section sending `headers` to the operations it matches."""
    lines = ["[[operations]]", f"include-path-regex = {json.dumps(path_regex)}"]
    if methods is not None:
        lines.append(f"include-method = {json.dumps(methods)}")
    lines.append("headers = { " + ", ".join(f"{json.dumps(k)} = {json.dumps(v)}" for k, v in headers.items()) + " }")
    return "\n".join(lines) + "\n"


GATED = "".join(
    (
        operations(ENGINE_PATHS, {"X-Internal-Key": INTERNAL_KEY}),
        operations("^/admin/", bearer(role=1), WRITES),
        # A decision's context is a read for role 1 alone (the first match wins).
        operations("^/admin/ai/decisions/[^/]+/context$", bearer(role=1), ["GET"]),
        operations("^/admin/", bearer(role=3), ["GET"]),
    )
)
# A person's token where an engine key is due, a reader's where a writer's
# is, and a tenant's login on the staff reads.
WRONG = "".join(
    (
        operations(ENGINE_PATHS, bearer(role=1)),
        operations("^/admin/", bearer(role=3), WRITES),
        operations("^/admin/ai/decisions/[^/]+/context$", bearer(role=3), ["GET"]),
        operations("^/admin/", bearer(role=1, tenant=7), ["GET"]),
    )
)


# Operations random inputs cannot reach an accepted answer of: a playground
# run's id comes from a run the model must finish, a task run's agent and id
# from a run an engine reported, and a rollout is paused
# or resumed only in the one state that allows it, which a generated id
# never names.
UNREACHED = {
    "GET /admin/ai/playground/runs/{run_id}",
    "GET /admin/ai/runs/{agent_id}/{task_id}",
    "POST /admin/ai/rollouts/{rollout_id}/pause",
    "POST /admin/ai/rollouts/{rollout_id}/resume",
}


def configured(workdir: Path, config: str) -> Path:
    workdir.mkdir()
    (workdir / "schemathesis.toml").write_text(CHECK_CONFIG + config)
    return workdir


async def schemathesis(url: str, workdir: Path, name: str, *options: str) -> dict[str, Any]:
    """One `st run` over the whole document from `workdir` (see configured); its JSON report."""
    report = workdir / "report.json"
    command = [
        str(Path(sys.executable).with_name("st")),
        "--config-file",
        str(workdir / "schemathesis.toml"),
        "run",
        f"{url}/openapi.json",
        "--seed",
        str(SEED),
        "--workers",
        "2",
        "--checks",
        ",".join(CHECKS),
        "--report",
        "json",
        "--report-json-path",
        str(report),
        *options,
    ]
    env = {**os.environ, "SCHEMATHESIS_HOOKS": HOOKS, "PYTHONPATH": str(ROOT)}
    process = await asyncio.create_subprocess_exec(
        *command, cwd=workdir, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT
    )
    output, _ = await asyncio.wait_for(process.communicate(), timeout=600)
    text = output.decode(errors="replace")
    assert report.exists(), text[-3000:]
    result: dict[str, Any] = json.loads(report.read_text())
    assert result["operations"]["tested"] == result["operations"]["total"] >= 30, text[-3000:]
    assert result["failures"] == [], text[-6000:]
    assert result["test_cases"]["errored"] == 0 and result["errors"] == [], text[-3000:]
    print(
        f"schemathesis {name}: {result['test_cases']['generated']} requests over {result['operations']['tested']}"
        f" operations in {result['running_time']:.0f}s, {len(result['failures'])} failures"
    )
    return result


async def test_no_input_breaks_the_gateway(settings, tmp_path: Path):
    sock = bound_socket()
    served = with_env(settings, http_port=sock.getsockname()[1])
    runs = {
        name: configured(tmp_path / name, config)
        for name, config in (("gated", GATED), ("anonymous", ""), ("wrong", WRONG))
    }
    refused = ("--max-examples", str(REFUSED_EXAMPLES), "--phases", "examples,fuzzing")
    async with (
        running(served, CONTEXTS),
        serving_gateway(served, sock) as gateway_url,
    ):
        gated = await schemathesis(gateway_url, runs["gated"], "gated", "--max-examples", str(GATED_EXAMPLES))
        unauthenticated = await schemathesis(gateway_url, runs["anonymous"], "unauthenticated", *refused)
        wrong = await schemathesis(gateway_url, runs["wrong"], "wrong credential", *refused)
    assert gated["test_cases"]["generated"] >= 30 * GATED_EXAMPLES
    # Each gate let the gated run through: every operation but those that
    # need data the run cannot make was accepted at least once.
    accepted = {
        operation
        for operation, phases in gated["valid_rates"].items()
        if any(counts["accepted"] for counts in phases.values())
    }
    assert set(gated["valid_rates"]) - accepted <= UNREACHED, sorted(set(gated["valid_rates"]) - accepted)
    for refused_run in (unauthenticated, wrong):
        assert refused_run["test_cases"]["generated"] >= 30 * REFUSED_EXAMPLES
