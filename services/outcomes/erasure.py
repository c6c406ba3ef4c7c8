"""Erasing one subject's fact payloads, as the decisions context's erasure
of that subject asks: one transaction, so a retry finds either everything
cleared or nothing."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncEngine

from services.outcomes import store
from services.outcomes.rules.erasure import samples_naming


async def erase_subject(engine: AsyncEngine, subject_id: str) -> int:
    """Clear the subject's merged facts and the rejection samples naming it; how many payloads went.

    Decisions already judged from these facts keep their outcomes (they
    live in the decisions context); a pending one is judged later from
    whatever facts arrive after this, as for any subject.
    """
    async with engine.begin() as conn:
        erased = await store.delete_facts(conn, subject_id=subject_id)
        fields = samples_naming(await store.lock_rejection_samples(conn), subject_id)
        await store.clear_rejection_samples(conn, fields=fields)
    return erased + len(fields)
