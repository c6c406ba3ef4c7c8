"""Console tokens and the gates of DESIGN.md §3.

/admin/ai/* reads need platform staff (tenant 0) with role 1, 3 or 4; writes
need role 1. A tenant login gets 403, never an empty list: an empty list would
hide a misconfiguration. /internal/* needs the internal key.
"""

from __future__ import annotations

import hmac
import time
from dataclasses import dataclass

import jwt
from fastapi import Depends, Header, Request

from gateway.errors import ApiError

STAFF_ROLES = frozenset({1, 3, 4})
WRITER_ROLE = 1


@dataclass(frozen=True, slots=True)
class Principal:
    sub: str
    email: str
    role: int
    tenant_id: int


def issue_token(secret: str, *, sub: str, role: int, tenant_id: int = 0, email: str = "",
                ttl_s: int = 12 * 3600) -> str:
    now = int(time.time())
    claims = {"sub": sub, "email": email, "role": role, "tenant_id": tenant_id, "iat": now, "exp": now + ttl_s}
    return jwt.encode(claims, secret, algorithm="HS256")


def verify_token(secret: str, token: str) -> Principal:
    try:
        claims = jwt.decode(token, secret, algorithms=["HS256"], options={"require": ["exp", "sub"]})
    except jwt.ExpiredSignatureError:
        raise ApiError(401, "TOKEN_EXPIRED", "the token has expired") from None
    except jwt.InvalidTokenError as exc:
        raise ApiError(401, "INVALID_TOKEN", f"the token is not valid: {exc}") from None
    role, tenant = claims.get("role"), claims.get("tenant_id")
    if not isinstance(role, int) or isinstance(role, bool) or not isinstance(tenant, int) or isinstance(tenant, bool):
        raise ApiError(401, "INVALID_TOKEN", "the token must carry integer role and tenant_id claims")
    return Principal(sub=str(claims["sub"]), email=str(claims.get("email", "")), role=role, tenant_id=tenant)


async def principal(request: Request, authorization: str | None = Header(default=None, include_in_schema=False)) -> Principal:
    if not authorization or not authorization.lower().startswith("bearer "):
        raise ApiError(401, "UNAUTHENTICATED", "an Authorization: Bearer token is required")
    return verify_token(request.app.state.settings.jwt_secret, authorization[7:].strip())


async def staff(who: Principal = Depends(principal)) -> Principal:
    if who.tenant_id != 0:
        raise ApiError(403, "STAFF_ONLY", "this console area is for platform staff (tenant 0) only")
    if who.role not in STAFF_ROLES:
        raise ApiError(403, "FORBIDDEN", f"role {who.role} may not use this console area")
    return who


async def writer(who: Principal = Depends(staff)) -> Principal:
    if who.role != WRITER_ROLE:
        raise ApiError(403, "FORBIDDEN", "only role 1 may change this")
    return who


async def internal(request: Request, x_internal_key: str | None = Header(default=None, include_in_schema=False)) -> None:
    expected = request.app.state.settings.internal_key.encode()
    if not hmac.compare_digest((x_internal_key or "").encode(), expected):
        raise ApiError(401, "UNAUTHENTICATED", "missing or wrong X-Internal-Key")
