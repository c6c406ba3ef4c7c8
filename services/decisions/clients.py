"""The calls the decisions context makes to other contexts: for the erasure
of a subject, the outcomes context clears its fact payloads; the registry
appends the audit row of an erasure and of a person's verdict.

Both calls are safe to repeat (a second erasure of facts finds none; an
audit row is appended once per request id), yet neither is retried here: a
failed call fails the erasure, and the next erasure of the subject resumes
it from its ledger (services.decisions.erasure), steps after it included.
"""

from __future__ import annotations

from outrider.v1 import outcomes_pb2_grpc, registry_pb2_grpc
from services.decisions import codec
from services.decisions.rules import AuditEntry


class OutcomesClient:
    """The outcomes context as an erasure calls it."""

    def __init__(self, stub: outcomes_pb2_grpc.OutcomesStub) -> None:
        self._stub = stub

    async def erase_facts(self, subject_id: str) -> int:
        """Clear the subject's fact payloads there; how many went."""
        return codec.erased_facts_from_proto(await self._stub.EraseSubject(codec.erase_facts_request(subject_id)))


class RegistryClient:
    """The registry's audit log, as an erasure or a person's verdict appends to it."""

    def __init__(self, stub: registry_pb2_grpc.RegistryStub) -> None:
        self._stub = stub

    async def append_audit(self, entry: AuditEntry) -> None:
        await self._stub.AppendAudit(codec.append_audit_request(entry))
