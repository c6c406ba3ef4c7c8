"""What a conversation submission may change in the ledger.

A conversation is submitted whole, again and again as it grows, so each
submission is checked against what the ledger already holds of it: its turns
may only be added to, never rewritten, and its route is set by the first
submission that names one. The booking itself is the flow in
`services.outcomes.ledger`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass

from services.common.errors import Conflict
from services.outcomes.rules.credit import Turn, TurnCredit


@dataclass(frozen=True, slots=True)
class BookedConversation:
    """What the ledger holds of a conversation: its route and a digest per booked turn."""

    conversation_id: str
    skill: str | None
    decision_type: str | None
    turn_digests: list[str]


def turn_digest(turn: Turn) -> str:
    """A fingerprint of everything about a turn that its credit depends on."""
    parts: list[str | None] = [turn.role.value, turn.ref, turn.text, turn.model, turn.trace_id]
    if turn.rollout is not None:
        # Appended only when stamped, so a turn without an arm keeps the
        # digest it was booked under before turns carried one.
        parts += [str(turn.rollout.rollout_id), turn.rollout.arm.value]
    canonical = json.dumps(parts, separators=(",", ":"))
    return hashlib.blake2b(canonical.encode(), digest_size=16).hexdigest()


@dataclass(frozen=True, slots=True)
class Route:
    """What a conversation's credits route for; either may be absent."""

    skill: str | None = None
    decision_type: str | None = None


@dataclass(frozen=True, slots=True)
class Booking:
    # Only the credits this submission added.
    credits: tuple[TurnCredit, ...]
    # The conversation's turns still waiting for a verdict.
    pending: int


def settle_route(stored: BookedConversation, route: Route, *, new: bool) -> Route:
    """The route the conversation keeps: set once, then only repeated or omitted.

    Credits already booked carry the route they were booked under; letting a
    later submission change it would split one conversation across two keys.
    """
    settled: dict[str, str | None] = {}
    for field in ("skill", "decision_type"):
        before, given = getattr(stored, field), getattr(route, field)
        if given is not None and before is not None and given != before:
            raise Conflict(
                f"conversation {stored.conversation_id!r} routes for {field} {before!r}, not {given!r}",
                code="CONVERSATION_ROUTE_CHANGED",
                details={"field": field},
            )
        if given is not None and before is None and not new:
            raise Conflict(
                f"conversation {stored.conversation_id!r} was booked without a {field}; it cannot gain one",
                code="CONVERSATION_ROUTE_CHANGED",
                details={"field": field},
            )
        settled[field] = before if before is not None else given
    return Route(**settled)


def check_only_grows(stored: BookedConversation, digests: Sequence[str]) -> None:
    """Refuse a submission that rewrites a turn already booked."""
    for index, (before, now) in enumerate(zip(stored.turn_digests, digests, strict=False)):
        if before != now:
            # Booked credits were computed from the stored turns; a rewritten
            # turn would make the ledger disagree with its own history.
            raise Conflict(
                f"turn {index} differs from the one already booked for conversation "
                f"{stored.conversation_id!r}; a conversation may only grow",
                code="CONVERSATION_REWRITTEN",
                details={"field": f"turns[{index}]"},
            )
