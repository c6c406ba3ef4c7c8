"""Schemathesis against the live gateway's own OpenAPI document: every
operation, with a staff token and the internal key, positive and negative
data. No input may produce a server error (503 is documented: a context or
the model API not configured), every answer must match its documented
schema, errors included, and no schema-violating request may be accepted.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from services.common.settings import CONTEXTS
from tests.harness import INTERNAL_KEY, bearer, bound_socket, running, serving_gateway, with_env

# Examples per operation and phase: enough to try every class of input the
# document allows and forbids, few enough to keep the suite's run short.
EXAMPLES = 10
SEED = 20261130
CHECKS = (
    "not_a_server_error",
    "status_code_conformance",
    "content_type_conformance",
    "response_schema_conformance",
    "negative_data_rejection",
)
CONFIG = """
[checks.not_a_server_error]
expected-statuses = ["1xx", "2xx", "3xx", "4xx", "503"]

[checks.negative_data_rejection]
# 413: a body over the size cap is refused before it is read, which is a
# refusal like any other.
expected-statuses = ["400", "401", "403", "404", "405", "406", "409", "413", "415", "422", "428", "429"]
"""


async def test_no_input_breaks_the_gateway(settings, tmp_path: Path):
    sock = bound_socket()
    served = with_env(settings, http_port=sock.getsockname()[1])
    async with (
        running(served, CONTEXTS),
        serving_gateway(served, sock) as gateway_url,
    ):
        (tmp_path / "schemathesis.toml").write_text(CONFIG)
        report = tmp_path / "report.json"
        command = [
            str(Path(sys.executable).with_name("st")),
            "--config-file",
            str(tmp_path / "schemathesis.toml"),
            "run",
            f"{gateway_url}/openapi.json",
            "-H",
            f"Authorization: {bearer(role=1)['Authorization']}",
            "-H",
            f"X-Internal-Key: {INTERNAL_KEY}",
            "--max-examples",
            str(EXAMPLES),
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
        ]
        process = await asyncio.create_subprocess_exec(
            *command, cwd=tmp_path, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT
        )
        output, _ = await asyncio.wait_for(process.communicate(), timeout=600)
    text = output.decode(errors="replace")
    result = json.loads(report.read_text())
    assert result["operations"]["tested"] == result["operations"]["total"] >= 30, text[-3000:]
    assert result["test_cases"]["generated"] >= 30 * EXAMPLES
    assert result["failures"] == [], text[-6000:]
    assert result["test_cases"]["errored"] == 0, text[-3000:]
    print(
        f"schemathesis: {result['test_cases']['generated']} requests over {result['operations']['tested']}"
        f" operations, {len(result['failures'])} failures; warnings: {json.dumps(result['warnings'])}"
    )
