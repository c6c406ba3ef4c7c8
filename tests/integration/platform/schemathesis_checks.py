"""Checks schemathesis runs beside its own, loaded by its CLI through
SCHEMATHESIS_HOOKS (tests/integration/platform/test_fuzz.py sets it).

The error envelope is DESIGN §3's contract for every refusal: the documented
response schemas say so too, but a route that forgot to document a status
would pass schemathesis's conformance checks with any body at all.
"""

from __future__ import annotations

import re
from typing import Any

import schemathesis

# OTLP/HTTP answers its refusals with google.rpc.Status, as the protocol
# requires; its documented schemas hold it to that.
OTLP_PATH = "/v1/traces"
ERROR_CODE = re.compile(r"[A-Z][A-Z0-9_]*")


def envelope_problem(status: int, body: Any) -> str | None:
    """What is wrong with a 4xx body, as an error envelope; None when nothing is."""
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict) or set(body) != {"error"}:
        return "the body is not {'error': {...}}"
    if not isinstance(error.get("code"), str) or not ERROR_CODE.fullmatch(error["code"]):
        return f"error.code {error.get('code')!r} is not UPPER_SNAKE"
    if not isinstance(error.get("message"), str) or not error["message"]:
        return "error.message is missing or empty"
    details = error.get("details", {})
    if not isinstance(details, dict):
        return "error.details is not an object"
    if status == 422 and not isinstance(details.get("fields"), dict):
        return "a 422 carries no details.fields"
    return None


@schemathesis.check
def error_envelope(ctx: Any, response: Any, case: Any) -> None:
    """Every 4xx outside OTLP is the error envelope of DESIGN §3."""
    if not 400 <= response.status_code < 500 or case.path == OTLP_PATH:
        return
    try:
        body = response.json()
    except ValueError:
        raise AssertionError(f"{response.status_code} with a body that is not JSON: {response.text[:200]!r}") from None
    problem = envelope_problem(response.status_code, body)
    if problem is not None:
        raise AssertionError(f"{response.status_code}: {problem}: {response.text[:300]}")
