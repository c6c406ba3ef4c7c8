"""An engine's identity on NATS, from its name and its engine key.

Each engine publishes on subjects that carry its name (`telemetry.task.<engine>`,
`telemetry.agent.<engine>`, `facts.booking.<engine>`), receives its answers on
an inbox of its own, and connects with an nkey derived from its engine key.
The server's permissions tie each nkey to its engine's subjects, so a
consumer knows which engine sent a message from the subject alone: an engine
cannot publish as another, and what it writes in a payload proves nothing.

The nkey is derived, not issued: rotating an engine key rotates its NATS
credential with it, and removing the key revokes both at once. The engine and
the platform compute it the same way from the same key, so nothing new has to
be handed out.

The bare subjects (`telemetry.task`, …) belong to the shared password user of
earlier versions, which speaks for the engine named `default` only.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from dataclasses import dataclass

import nkeys

from outrider.nats_access import ENGINE_INBOX_PREFIX

# One subject token: no dots, no wildcards, nothing NATS would read as syntax.
ENGINE_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
# The engine the bare subjects and the shared password user speak for.
LEGACY_ENGINE = "default"

TASK_RUNS = "telemetry.task"
HEARTBEATS = "telemetry.agent"
BOOKING_FACTS = "facts.booking"


# What the HMAC of the engine key is taken over. Fixed for good: changing it
# would change every engine's credential at once.
NKEY_LABEL = b"outrider nats user nkey v1"


def check_engine_name(name: str) -> str:
    """The name, when it can be a subject token; ValueError otherwise."""
    if not ENGINE_NAME.fullmatch(name):
        raise ValueError(f"engine name {name!r} must be 1 to 64 letters, digits, '_' or '-'")
    return name


@dataclass(frozen=True, slots=True)
class EngineSubjects:
    """Where one engine publishes, and the inbox its answers come to."""

    task_runs: str
    heartbeats: str
    booking_facts: str
    inbox_prefix: str

    @property
    def publishes(self) -> tuple[str, str, str]:
        return (self.task_runs, self.heartbeats, self.booking_facts)


LEGACY_SUBJECTS = EngineSubjects(TASK_RUNS, HEARTBEATS, BOOKING_FACTS, ENGINE_INBOX_PREFIX)


def subjects_of(engine: str) -> EngineSubjects:
    """The subjects and inbox of the engine named `engine`."""
    check_engine_name(engine)
    # The inbox is the shared user's prefix, an underscore and the name: a
    # first token of its own for every engine and for the shared user, so no
    # engine's name can make its inbox another's.
    return EngineSubjects(
        f"{TASK_RUNS}.{engine}",
        f"{HEARTBEATS}.{engine}",
        f"{BOOKING_FACTS}.{engine}",
        f"{ENGINE_INBOX_PREFIX}_{engine}",
    )


@dataclass(frozen=True, slots=True)
class Sender:
    """The engine a message came from, as its subject proves."""

    engine: str
    inbox_prefix: str

    def owns_inbox(self, reply: str) -> bool:
        """Whether `reply` is one of this engine's own inboxes, the only
        subjects anything may answer it on."""
        return reply.startswith(f"{self.inbox_prefix}.")


def sender_of(subject: str, base: str) -> Sender | None:
    """Who published on `subject`, one of the forms of the bare subject
    `base`: the legacy engine for the bare subject itself, the engine named
    after it otherwise; None for any other subject."""
    if subject == base:
        return Sender(LEGACY_ENGINE, ENGINE_INBOX_PREFIX)
    head, dot, name = subject.rpartition(".")
    if dot and head == base and ENGINE_NAME.fullmatch(name):
        return Sender(name, subjects_of(name).inbox_prefix)
    return None


def subject_forms(base: str) -> tuple[str, str]:
    """A bare subject and the wildcard of every engine's own: what a stream
    stores and a consumer reads for it."""
    return (base, f"{base}.*")


def nkey_seed(engine_key: str) -> str:
    """The NATS user seed (`SU…`) of an engine key: the first 32 bytes of
    HMAC-SHA256(key, NKEY_LABEL), encoded as nkeys encodes a user seed."""
    raw = hmac.new(engine_key.encode(), NKEY_LABEL, hashlib.sha256).digest()[:32]
    seed: bytes = nkeys.encode_seed(raw, nkeys.PREFIX_BYTE_USER)
    return seed.decode()


def public_nkey(engine_key: str) -> str:
    """The public user nkey (`U…`) the server lists for an engine key."""
    pair = nkeys.from_seed(bytearray(nkey_seed(engine_key).encode()))
    public: bytes = pair.public_key
    return public.decode()
