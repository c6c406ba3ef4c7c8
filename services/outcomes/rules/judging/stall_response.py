"""`stall_response`: the agent stepped in because a rider stopped making progress.

It worked if the parcel reached the customer within the promise in force.
"""

from __future__ import annotations

from services.outcomes.rules.judging.registry import BookingFacts, Outcome, Timing, rule


@rule("stall_response")
def judge_stall_response(facts: BookingFacts, timing: Timing) -> Outcome | None:
    if facts.cancelled:
        return Outcome.FAILURE
    if facts.delivered_at is not None:
        if facts.sla_due_at is not None and facts.delivered_at > facts.sla_due_at:
            # Late is a failure. Calling any eventual delivery a success would
            # teach the model that whatever it did was vindicated by time.
            return Outcome.FAILURE
        return Outcome.SUCCESS
    if timing.window_closed:
        # Neither delivered nor cancelled by the end of the window: stuck.
        return Outcome.FAILURE
    return None
