"""`assignment_failure`: the agent reasoned about why no rider could be found.

It worked if the booking got a rider after the decision.
"""

from __future__ import annotations

from services.outcomes.rules.judging.registry import BookingFacts, Outcome, Timing, rule


@rule("assignment_failure")
def judge_assignment_failure(facts: BookingFacts, timing: Timing) -> Outcome | None:
    if facts.cancelled:
        return Outcome.FAILURE
    # Only an assignment strictly after the decision counts: one that already
    # existed when the agent decided cannot have been caused by it.
    if facts.assigned_at is not None and facts.assigned_at > timing.decided_at:
        return Outcome.SUCCESS
    if timing.window_closed:
        return Outcome.FAILURE
    return None
