"""Erasure of one subject's personal data, across the contexts that hold it.

The decisions context owns subjects, so it runs the whole request:

1. in one transaction, the context, reasoning and embedding of each of the
   subject's decisions and the body of each of its human decisions are
   cleared, and what was cleared is added to the erasure's ledger row;
2. the outcomes context clears the subject's fact payloads;
3. the registry appends the audit row, under the verified person the call
   acts for, with what was cleared and why;
4. the ledger row is marked audited.

A call that fails after step 1 answers the failure (UNAVAILABLE when a
context did not answer) and leaves its ledger row unfinished; the next call
for the subject resumes that row rather than starting a new one, so the one
audit row counts what both calls cleared. Every step is safe to repeat: what
is cleared stays cleared, and the registry keeps one row per erasure id.
"""

from __future__ import annotations

import uuid

from sqlalchemy.ext.asyncio import AsyncEngine

from services.decisions import rules, store
from services.decisions.clients import OutcomesClient, RegistryClient
from services.decisions.human import store as human_store
from services.decisions.rules import Erased, Erasure, ErasureRequest


async def erase_subject(
    engine: AsyncEngine, request: ErasureRequest, *, outcomes: OutcomesClient, registry: RegistryClient
) -> Erasure:
    """Erase the subject's personal data everywhere; what this erasure cleared, in total."""
    async with engine.begin() as conn:
        erasure = await store.open_erasure(conn, request=request, new_id=uuid.uuid4())
        cleared = Erased(
            decisions=await store.erase_decisions(conn, subject_id=request.subject_id),
            human_inputs=await human_store.erase_bodies(conn, subject_id=request.subject_id),
        )
        erasure = await store.count_erased(conn, erasure_id=erasure.id, erased=cleared)
    facts = await outcomes.erase_facts(request.subject_id)
    async with engine.begin() as conn:
        erasure = await store.count_erased(conn, erasure_id=erasure.id, erased=Erased(facts=facts))
    await registry.append_audit(rules.erasure_audit(erasure))
    async with engine.begin() as conn:
        await store.finish_erasure(conn, erasure_id=erasure.id)
    return erasure
