"""Who is calling: an engine, or a part of the platform acting for a person.

Two kinds of gRPC caller, two credentials:

- An **engine** presents its own engine key (`x-internal-key`). It reaches
  what an engine does: read and watch the snapshot, record decisions and
  find precedents, lease subjects, push human input, facts, conversations.
  One key per engine, by name, so one can be revoked alone and the logs say
  which engine spoke.
- The **gateway and the contexts** present the service key
  (`x-outrider-service-key`) and, when they act for a person, that person's
  verified identity as a signed envelope (`x-outrider-caller` and its
  signature). The context checks the signature with the service key and
  re-checks the role itself, so an audit row names the person the gateway
  verified and never a field a caller chose.

The envelope expires within a minute: a captured one cannot be replayed for
long, and a clock a little off does not refuse honest calls.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache

from outrider.rpc import INTERNAL_KEY_HEADER as ENGINE_KEY_HEADER

SERVICE_KEY_HEADER = "x-outrider-service-key"
CALLER_HEADER = "x-outrider-caller"
CALLER_SIGNATURE_HEADER = "x-outrider-caller-sig"
ENVELOPE_TTL_S = 60

Pairs = Callable[[], Sequence[tuple[str, str]]]

STAFF_ROLES = frozenset({1, 3, 4})
WRITER_ROLE = 1


@dataclass(frozen=True, slots=True)
class Principal:
    """A person the gateway verified from their console token."""

    sub: str
    email: str
    role: int
    tenant_id: int

    @property
    def staff(self) -> bool:
        return self.tenant_id == 0 and self.role in STAFF_ROLES

    @property
    def writer(self) -> bool:
        return self.staff and self.role == WRITER_ROLE


@dataclass(frozen=True, slots=True)
class Caller:
    """A verified caller of one RPC."""

    # "engine" (an engine key) or "service" (the service key).
    kind: str
    # The engine that spoke: its own key's name, or the one the gateway
    # authenticated on the engine's behalf. The agents it may act for follow
    # from it (agent_scope).
    engine: str | None = None
    # The person a service call acts for, when it acts for one.
    principal: Principal | None = None


# The caller of the RPC being served, and through it the person whose
# authority a call made from here carries on to another context.
current: ContextVar[Caller | None] = ContextVar("outrider_caller", default=None)


def principal() -> Principal | None:
    caller = current.get()
    return caller.principal if caller is not None else None


def engine_name() -> str | None:
    caller = current.get()
    return caller.engine if caller is not None else None


# ─── The agents an engine may act for ──────────────────────────────────────


@dataclass(frozen=True, slots=True)
class AgentScope:
    """The agents a verified engine may record decisions, runs, heartbeats
    and spans for: those its key's entry lists, or every agent (`agents`
    None). Read from the credential, never from the request: an engine
    cannot widen it by naming another agent."""

    engine: str | None
    agents: frozenset[str] | None = None

    def permits(self, agent_id: str) -> bool:
        return self.agents is None or agent_id in self.agents

    def refusal(self, agent_id: str) -> str:
        """Why a record for `agent_id` is refused, naming the agent and the engine."""
        return f"engine {self.engine!r} may not act for agent {agent_id!r}: its key lists other agents"


EVERY_AGENT = AgentScope(engine=None)


def agent_scope(engine: str | None, engine_agents: Mapping[str, frozenset[str]]) -> AgentScope:
    """What the engine named `engine` may act for; the platform itself
    (no engine) and an engine without a list, for every agent."""
    if engine is None:
        return EVERY_AGENT
    return AgentScope(engine=engine, agents=engine_agents.get(engine))


# ─── What each RPC needs ───────────────────────────────────────────────────


class Access(StrEnum):
    # An engine key or the service key.
    ENGINE = "engine"
    # The service key; a person it acts for must be platform staff.
    READ = "read"
    # The service key acting for a person with role 1.
    WRITE = "write"
    # The service key only: the platform's own calls between its parts.
    SERVICE = "service"
    # WRITE, or the service key acting for nobody: a change a role-1 person
    # makes, of which the platform itself may make a narrow part (the handler
    # says which).
    WRITE_OR_PLATFORM = "write_or_platform"


class Refusal(Exception):
    def __init__(self, status: str, message: str) -> None:
        super().__init__(message)
        self.status = status  # "unauthenticated" or "permission_denied"
        self.message = message


def authorize(access: Access, caller: Caller | None) -> Caller:
    """The caller, when it may make a call that needs `access`; else Refusal."""
    if caller is None:
        raise Refusal("unauthenticated", "a valid engine key or service credential is required")
    if access is Access.ENGINE:
        return caller
    if caller.kind != "service":
        raise Refusal("permission_denied", "an engine key may not call this; it is for the console and the platform")
    person = caller.principal
    if access is Access.READ:
        if person is not None and not person.staff:
            raise Refusal("permission_denied", f"role {person.role} of tenant {person.tenant_id} may not read this")
        return caller
    if access is Access.WRITE_OR_PLATFORM and person is None:
        return caller
    if access in (Access.WRITE, Access.WRITE_OR_PLATFORM):
        if person is None:
            raise Refusal("permission_denied", "a change must be made on behalf of a signed-in person")
        if not person.writer:
            raise Refusal("permission_denied", f"only role 1 may change this, not role {person.role}")
    return caller


# ─── The signed envelope ───────────────────────────────────────────────────


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _signature(payload: str, key: str) -> str:
    return _b64(hmac.new(key.encode(), payload.encode(), hashlib.sha256).digest())


def seal(caller: Caller, key: str, *, now: float | None = None) -> tuple[tuple[str, str], tuple[str, str]]:
    """The two metadata pairs that carry `caller` to another part, signed with `key`."""
    return _sealed(caller, key, int((time.time() if now is None else now) + ENVELOPE_TTL_S))


# The envelope names its expiry to the second, so within a second a caller's
# is the same text: it is signed once and kept, not signed again on every
# call the gateway makes for that caller. Busy callers, a second each, fit.
@lru_cache(maxsize=1024)
def _sealed(caller: Caller, key: str, expires: int) -> tuple[tuple[str, str], tuple[str, str]]:
    person = caller.principal
    body: dict[str, object] = {"exp": expires}
    if person is not None:
        body.update(sub=person.sub, email=person.email, role=person.role, tenant=person.tenant_id)
    if caller.engine is not None:
        body["engine"] = caller.engine
    payload = _b64(json.dumps(body, separators=(",", ":"), sort_keys=True).encode())
    return (CALLER_HEADER, payload), (CALLER_SIGNATURE_HEADER, _signature(payload, key))


def unseal(payload: str, signature: str, keys: Iterable[str], *, now: float | None = None) -> Caller:
    """The caller an envelope carries; raises Refusal when forged, altered or expired."""
    expires, caller = _opened(payload, signature, tuple(keys))
    if expires < (time.time() if now is None else now):
        raise Refusal("unauthenticated", "the caller envelope has expired")
    return caller


# A gateway sends the same envelope for a caller all second long (see
# _sealed), so a context keeps what checking one found: this exact text,
# signed so, under these keys. A refusal raises and is not kept; the expiry
# is checked on every call.
@lru_cache(maxsize=1024)
def _opened(payload: str, signature: str, keys: tuple[str, ...]) -> tuple[int, Caller]:
    # An empty key signs nothing: anyone could compute its signature.
    if not any(hmac.compare_digest(_signature(payload, key), signature) for key in keys if key):
        raise Refusal("unauthenticated", "the caller envelope's signature does not match")
    try:
        body = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
        expires = int(body["exp"])
        person = None
        if "sub" in body:
            person = Principal(
                sub=str(body["sub"]),
                email=str(body.get("email", "")),
                role=int(body["role"]),
                tenant_id=int(body["tenant"]),
            )
        engine = body.get("engine")
    except (binascii.Error, ValueError, KeyError, TypeError):
        raise Refusal("unauthenticated", "the caller envelope cannot be read") from None
    return expires, Caller(kind="service", engine=str(engine) if engine is not None else None, principal=person)


def identify(
    metadata: Iterable[tuple[str, str | bytes]],
    *,
    engine_keys: Mapping[str, tuple[str, ...]],
    service_keys: tuple[str, ...],
) -> Caller | None:
    """The caller these call metadata prove, or None when they prove nothing.

    Every key is compared in constant time, and an empty key never matches:
    a caller that sends no key must not pass for one configured as empty.
    An engine key is matched by `engine_named`.
    """
    values: dict[str, str] = {}
    for name, value in metadata:
        if name in (SERVICE_KEY_HEADER, CALLER_HEADER, CALLER_SIGNATURE_HEADER, ENGINE_KEY_HEADER):
            values[name] = value.decode() if isinstance(value, bytes) else value
    service = values.get(SERVICE_KEY_HEADER, "")
    if service and any(hmac.compare_digest(service.encode(), key.encode()) for key in service_keys if key):
        if CALLER_HEADER in values:
            return unseal(values[CALLER_HEADER], values.get(CALLER_SIGNATURE_HEADER, ""), service_keys)
        return Caller(kind="service")
    engine = engine_named(engine_keys, values.get(ENGINE_KEY_HEADER, ""))
    return Caller(kind="engine", engine=engine) if engine is not None else None


def engine_named(engine_keys: Mapping[str, tuple[str, ...]], presented: str) -> str | None:
    """The engine whose key `presented` is, or None: the one check of an
    engine key, for the contexts' gRPC gate and the gateway's alike.

    Every configured key is compared, in constant time, even after one has
    matched: stopping at the match would make the answer's time depend on
    which key matched, and so tell a caller where a key sits. An empty key never
    matches, configured or presented: a caller that sends no key must not
    pass for an engine configured without one. Two engines configured with
    the same key get the first one named, in the order of the configuration
    (OUTRIDER_ENGINE_KEYS, then `default` for OUTRIDER_INTERNAL_KEY): the
    engine an operator named outright, not the default it also matches.
    """
    offered = presented.encode()
    named = None
    for name, keys in engine_keys.items():
        for key in keys:
            matches = hmac.compare_digest(offered, key.encode())
            if matches and key and presented and named is None:
                named = name
    return named
