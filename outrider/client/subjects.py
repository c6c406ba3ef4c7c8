"""The human-decision gate an engine passes before it acts on a subject."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

import grpc

from outrider.errors import LeaseRefused as LeaseRefused  # re-exported: importable from here as it always was
from outrider.errors import lease_refusal
from outrider.rpc import TlsFiles, keyed_channel
from outrider.v1 import decisions_pb2, decisions_pb2_grpc


@dataclass(frozen=True, slots=True)
class HumanDecision:
    kind: str
    body: str
    author: str
    written_at: datetime | None
    plan_ref: str
    step: str


@dataclass(frozen=True, slots=True)
class Lease:
    """Every human decision on the subject, newest intent last. Each outranks
    the agent's own earlier decision on that subject."""

    subject_id: str
    human_decisions: tuple[HumanDecision, ...]


class SubjectGate:
    def __init__(
        self,
        address: str,
        internal_key: str,
        *,
        timeout_s: float = 10.0,
        channel: grpc.aio.Channel | None = None,
        tls: TlsFiles | None = None,
    ) -> None:
        self._channel = channel or keyed_channel(address, internal_key, tls=tls)
        self._stub = decisions_pb2_grpc.DecisionsStub(self._channel)
        self._timeout_s = timeout_s

    async def lease(self, subject_id: str) -> Lease:
        """Reconcile the subject's newer human input, then answer it. Fails closed:
        raises LeaseRefused (outrider.errors says which kind) instead of
        letting an agent act on an older intent."""
        try:
            reply = await self._stub.LeaseSubject(
                decisions_pb2.LeaseSubjectRequest(subject_id=subject_id), timeout=self._timeout_s
            )
        except grpc.aio.AioRpcError as error:
            raise lease_refusal(subject_id, error) from error
        return Lease(
            subject_id=reply.subject_id,
            human_decisions=tuple(
                HumanDecision(
                    kind=d.kind,
                    body=d.body,
                    author=d.author,
                    written_at=d.written_at.ToDatetime(tzinfo=UTC) if d.HasField("written_at") else None,
                    plan_ref=d.plan_ref,
                    step=d.step,
                )
                for d in reply.human_decisions
            ),
        )

    async def close(self) -> None:
        await self._channel.close(None)
