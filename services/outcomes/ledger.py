"""The credit ledger: booking a conversation's episode credits exactly once,
and the outcome metrics read back from what was booked.

A conversation is submitted whole, again and again as it grows. Each
submission recomputes the credits of every turn, books the ones the ledger
does not hold yet (keyed on conversation, turn_ref and episode_id), and
leaves the rest alone. That is what lets a deferred turn's credit appear once
a later turn settles it, without ever crediting a settled turn twice.
"""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncConnection

from services.outcomes import store
from services.outcomes.rules.credit import (
    Conversation,
    ConversationMetrics,
    Credit,
    Resolution,
    TurnCredit,
    assign_credit,
    conversation_metrics,
)
from services.outcomes.rules.submission import Booking, Route, check_only_grows, settle_route, turn_digest


async def submit(conn: AsyncConnection, conversation: Conversation, route: Route) -> Booking:
    """Book a (possibly grown) conversation's new credits in the caller's transaction."""
    stored = await store.lock_conversation(conn, conversation_id=conversation.conversation_id)
    new = not stored.turn_digests
    settled = settle_route(stored, route, new=new)
    digests = [turn_digest(turn) for turn in conversation.turns]
    check_only_grows(stored, digests)
    if len(digests) <= len(stored.turn_digests) and not new:
        # A repeat, or an older snapshot arriving late: nothing it could book
        # is missing from the ledger.
        pending = await store.count_pending(conn, conversation_id=conversation.conversation_id)
        return Booking(credits=(), pending=pending)

    assignment = assign_credit(conversation)
    rows = [
        store.CreditRow(
            conversation_id=c.conversation_id,
            turn_ref=c.turn_ref,
            episode_id=c.episode_id,
            model=c.model,
            trace_id=c.trace_id,
            credit=c.credit.value,
            confidence=c.confidence,
            resolution=c.resolution.value,
            rollout_id=None if c.rollout is None else c.rollout.rollout_id,
            rollout_arm=None if c.rollout is None else c.rollout.arm.value,
        )
        for c in assignment.credits
    ]
    booked = await store.insert_credits(conn, credits=rows, skill=settled.skill, decision_type=settled.decision_type)
    await store.resolve_deferred(conn, conversation_id=conversation.conversation_id)
    await store.insert_deferred(
        conn,
        deferred=[
            store.DeferredRow(
                conversation_id=d.conversation_id,
                turn_ref=d.turn_ref,
                episode_id=d.episode_id,
                model=d.model,
                trace_id=d.trace_id,
                rollout_id=None if d.rollout is None else d.rollout.rollout_id,
                rollout_arm=None if d.rollout is None else d.rollout.arm.value,
            )
            for d in assignment.deferred
        ],
    )
    await store.update_conversation(
        conn,
        conversation_id=conversation.conversation_id,
        skill=settled.skill,
        decision_type=settled.decision_type,
        turn_digests=digests,
    )
    pending = await store.count_pending(conn, conversation_id=conversation.conversation_id)
    added = tuple(c for c in assignment.credits if (c.turn_ref, c.episode_id) in booked)
    return Booking(credits=added, pending=pending)


async def metrics(conn: AsyncConnection, *, model: str | None = None) -> ConversationMetrics:
    """The scoreboard over every booked credit (of one model, when given).

    The pending count comes from the deferred turns, which the credits alone
    cannot show: an episode whose only attempt is deferred emits no credit.
    """
    rows = await store.list_credits(conn, model=model)
    credits = [
        TurnCredit(
            conversation_id=row.conversation_id,
            turn_ref=row.turn_ref,
            model=row.model,
            trace_id=row.trace_id,
            credit=Credit(row.credit),
            confidence=row.confidence,
            episode_id=row.episode_id,
            resolution=Resolution(row.resolution),
        )
        for row in rows
    ]
    pending = await store.count_pending(conn, model=model)
    return conversation_metrics(credits, pending=pending)
