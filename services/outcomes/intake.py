"""Facts intake: fold parsed events into the stored per-subject facts.

Shared by the `facts.booking` consumer and `RecordFacts`, so both doors merge
exactly alike. The merge runs in Python on rows locked `for update`: two
replicas folding events into one subject take turns, and because the merge
keeps each field's newest observation, the order they take turns in does not
change the result.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncConnection

from services.outcomes import store
from services.outcomes.rules.facts import BookingFactsEvent, SubjectFacts, merge_all


@dataclass(frozen=True, slots=True)
class Merged:
    facts: SubjectFacts
    # False when every event was a repeat or older news.
    changed: bool


async def merge_events(conn: AsyncConnection, events: Sequence[BookingFactsEvent]) -> dict[str, Merged]:
    """Merge events into their subjects' facts within the caller's transaction."""
    by_subject: dict[str, list[BookingFactsEvent]] = defaultdict(list)
    for event in events:
        by_subject[event.subject_id].append(event)
    stored = await store.lock_facts(conn, subject_ids=by_subject)
    results: dict[str, Merged] = {}
    changed_documents = {}
    for subject_id, subject_events in by_subject.items():
        before = SubjectFacts.from_json(subject_id, stored.get(subject_id) or {})
        after = merge_all(before, subject_events)
        results[subject_id] = Merged(after, after != before)
        if after != before:
            changed_documents[subject_id] = after.to_json()
    await store.save_facts(conn, documents=changed_documents)
    return results
