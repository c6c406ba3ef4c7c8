"""A person's read of one decision's context: redacted here, audited in the registry."""

from __future__ import annotations

import json
import uuid

from sqlalchemy.ext.asyncio import AsyncEngine

from services.common.redaction.redactor import RedactionRules
from services.decisions import rules, store
from services.decisions.clients import RegistryClient


async def read_context(
    engine: AsyncEngine, decision_id: uuid.UUID, *, redaction: RedactionRules, registry: RegistryClient
) -> rules.RedactedContext:
    """One decision's context, redacted, once its read is in the audit log.

    The audit row is written before the answer leaves: a read the registry
    could not record fails (UNAVAILABLE) rather than go unaccounted for.
    """
    async with engine.connect() as conn:
        row = await store.get_context(conn, id=decision_id)
    if row is None:
        raise rules.decision_not_found(decision_id)
    read = rules.redacted_context(
        decision_id, json.loads(row.context_json), erased_at=row.erased_at, redaction=redaction
    )
    await registry.append_audit(rules.context_read_audit(read, audit_id=uuid.uuid4()))
    return read
