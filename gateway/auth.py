"""Console tokens, engine keys and the gates of DESIGN.md §3.

/admin/ai/* reads need platform staff (tenant 0) with role 1, 3 or 4; writes
need role 1. A tenant login gets 403, never an empty list: an empty list would
hide a misconfiguration. /internal/* needs an engine key.

Each gate also records who was verified (services.common.callers.current),
so the calls the route then makes carry that person, or that engine, to the
context, sealed with the service key: the context re-checks the role itself
and writes the verified person into its audit, never a request field.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from datetime import timedelta

import jwt
from fastapi import Depends, Header, Request
from fastapi.dependencies.models import Dependant

from gateway.errors import ApiError
from services.common import callers, guards
from services.common.callers import STAFF_ROLES, WRITER_ROLE, Caller, Principal

__all__ = [
    "EngineGate",
    "Principal",
    "credential_checks",
    "exporter",
    "internal",
    "issue_token",
    "principal",
    "scraper",
    "staff",
    "verify_token",
    "writer",
]

# OUTRIDER_JWT_MAX_TTL_HOURS's default, for a caller holding no settings.
DEFAULT_MAX_TTL = timedelta(hours=720)


def issue_token(
    secret: str, *, sub: str, role: int, tenant_id: int = 0, email: str = "", ttl_s: int = 12 * 3600
) -> str:
    now = int(time.time())
    claims = {"sub": sub, "email": email, "role": role, "tenant_id": tenant_id, "iat": now, "exp": now + ttl_s}
    return jwt.encode(claims, secret, algorithm="HS256")


def verify_token(secrets: str | tuple[str, ...], token: str, *, max_ttl: timedelta = DEFAULT_MAX_TTL) -> Principal:
    """The person a token names; the current secret first, then the previous one during a rollover."""
    # An empty secret would accept a token anyone can sign.
    keys = tuple(secret for secret in ((secrets,) if isinstance(secrets, str) else secrets) if secret)
    payload = None
    for secret in keys:
        try:
            # exp, iat and sub are read by the claims guard below, which holds
            # exp and iat to being numbers (PyJWT reads a string exp as one)
            # and names the claim at fault (PyJWT's "Subject must be a
            # string" names none).
            payload = jwt.decode(
                token,
                secret,
                algorithms=["HS256"],
                options={"verify_exp": False, "verify_iat": False, "verify_sub": False},
            )
            break
        except jwt.InvalidSignatureError:
            continue
        except jwt.InvalidTokenError as exc:
            raise ApiError(401, "INVALID_TOKEN", f"the token is not valid: {exc}") from None
    if payload is None:
        raise ApiError(401, "INVALID_TOKEN", "the token is not valid: Signature verification failed")
    try:
        held = guards.claims(payload, now=time.time(), max_ttl=max_ttl)
    except guards.ClaimRefused as refused:
        raise ApiError(401, refused.code, refused.message, refused.details) from None
    return Principal(sub=held.sub, email=held.email, role=held.role, tenant_id=held.tenant_id)


def _act_as(caller: Caller) -> None:
    # Set, never reset: each request is served in a task of its own, whose
    # copy of the context ends with it. A reset in a dependency's teardown
    # can run in another context (an abandoned generator is closed later, by
    # the event loop) and fails there instead.
    callers.current.set(caller)


async def principal(
    request: Request, authorization: str | None = Header(default=None, include_in_schema=False)
) -> Principal:
    if not authorization or not authorization.lower().startswith("bearer "):
        raise ApiError(401, "UNAUTHENTICATED", "an Authorization: Bearer token is required")
    settings = request.app.state.settings
    secrets = tuple(secret for secret in (settings.jwt_secret, settings.jwt_secret_previous) if secret)
    return verify_token(secrets, authorization[7:].strip(), max_ttl=timedelta(hours=settings.jwt_max_ttl_hours))


async def staff(who: Principal = Depends(principal)) -> Principal:
    if who.tenant_id != 0:
        raise ApiError(403, "STAFF_ONLY", "this console area is for platform staff (tenant 0) only")
    if who.role not in STAFF_ROLES:
        raise ApiError(403, "FORBIDDEN", f"role {who.role} may not use this console area")
    _act_as(Caller(kind="service", principal=who))
    return who


async def writer(who: Principal = Depends(staff)) -> Principal:
    if who.role != WRITER_ROLE:
        raise ApiError(403, "FORBIDDEN", "only role 1 may change this")
    return who


class EngineGate:
    """The engine-key check of every route an engine calls: the engine the
    key names becomes the caller the route's calls carry, or the answer is a
    401 (`refusal` says which credential was missing).

    `bearer` also takes the key as `Authorization: Bearer <key>`, for callers
    that can send only that header: OTLP exporters (OTEL_EXPORTER_OTLP_HEADERS)
    and a stock Prometheus scrape. The other engine routes read X-Internal-Key
    alone, the header the SDK sends.
    """

    def __init__(self, *, bearer: bool, refusal: str) -> None:
        self.bearer = bearer
        self.refusal = refusal

    async def __call__(
        self,
        request: Request,
        x_internal_key: str | None = Header(default=None, include_in_schema=False),
        authorization: str | None = Header(default=None, include_in_schema=False),
    ) -> None:
        presented = x_internal_key or ""
        if not presented and self.bearer and authorization and authorization.lower().startswith("bearer "):
            presented = authorization[7:].strip()
        engine = callers.engine_named(request.app.state.settings.engine_keys, presented)
        if engine is None:
            raise ApiError(401, "UNAUTHENTICATED", self.refusal)
        _act_as(Caller(kind="service", engine=engine))


_WRONG_KEY = "missing or wrong X-Internal-Key (an engine key)"
# /internal/*: an engine's own calls.
internal = EngineGate(bearer=False, refusal=_WRONG_KEY)
# POST /v1/traces: an engine's OpenTelemetry exporter.
exporter = EngineGate(bearer=True, refusal=_WRONG_KEY)
# GET /metrics: a Prometheus scrape, holding an engine key.
scraper = EngineGate(bearer=True, refusal="/metrics needs an engine key (X-Internal-Key or Bearer)")


CredentialCheck = Callable[[Request], Awaitable[object]]


def credential_checks(dependant: Dependant) -> list[CredentialCheck]:
    """The credential checks among a route's dependencies, to run before its body is read.

    FastAPI reads and parses a route's body before it solves the route's
    dependencies, so a gate alone would let anyone without a credential
    have a megabyte parsed, and learn from a 422 what a 401 should have
    told them. The route calls these first (gateway.routing), then FastAPI
    solves the gates again as usual; only the 401 moves earlier, the role
    checks stay where they are.
    """
    checks: list[CredentialCheck] = []
    pending = list(dependant.dependencies)
    while pending:
        current = pending.pop()
        pending.extend(current.dependencies)
        if current.call is principal and not any(check is _check_token for check in checks):
            checks.append(_check_token)
        elif isinstance(current.call, EngineGate):
            checks.append(_engine_check(current.call))
    return checks


async def _check_token(request: Request) -> Principal:
    return await principal(request, request.headers.get("authorization"))


def _engine_check(gate: EngineGate) -> CredentialCheck:
    async def check(request: Request) -> None:
        await gate(request, request.headers.get("x-internal-key"), request.headers.get("authorization"))

    return check
