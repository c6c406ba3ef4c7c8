"""Human-decision request and response bodies (DESIGN.md §4, Decisions)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from gateway.contracts.common import FILLED, TRIMMED, Contract, Instant, Page, Reply, text
from services.decisions.human.rules import MAX_BODY_CHARS
from services.decisions.rules import MAX_ERASURE_REASON_CHARS

SOURCE = r"^[^\s\x00\x1c-\x1f\x85:][^\x00:]*:[^\x00]*[^\s\x00\x1c-\x1f\x85]$"

Trimmed = text(min_length=1, max_length=256, pattern=TRIMMED)
Source = text(min_length=3, max_length=256, pattern=SOURCE, examples=["tracker:ops/bookings"])


class SubjectIn(Contract):
    source: Source = Field(None, description="provider:instance/project the subject came from; absent when none")
    plan_ref: Trimmed = Field(None, description="the plan accepted for the subject now; absent when none")


class HumanInputIn(Contract):
    """One human input, pushed by its source. Idempotent on (provider, external_id)."""

    provider: Source
    external_id: Trimmed
    subject_id: Trimmed = Field(description="created on first sight when Outrider has not seen it")
    author: text(max_length=256) = ""
    at: Instant = Field(description="when the person wrote it; not in the future")
    body: text(min_length=1, max_length=MAX_BODY_CHARS, pattern=r"^[^\x00]*[^\s\x00][^\x00]*$")


class Subject(Reply):
    id: str
    source: str | None
    plan_ref: str | None
    cursor: str | None


class HumanDecision(Reply):
    id: str
    subject_id: str
    kind: Literal["operator_instruction", "plan_step_approval"]
    body: str
    author: str
    provider: str
    external_id: str
    written_at: str | None = Field(json_schema_extra={"format": "date-time"})
    observed_at: str | None = Field(json_schema_extra={"format": "date-time"})
    plan_ref: str | None
    step: str | None


class Lease(Reply):
    subject_id: str
    human_decisions: list[HumanDecision] = Field(description="newest intent last")
    imported: int = Field(description="inputs read from the subject's source by this lease")


class HumanDecisionPage(Page[HumanDecision]):
    pass


class ErasureIn(Contract):
    """Erase one subject's personal data in every context. It cannot be undone."""

    confirm: text(min_length=1, max_length=256) = Field(
        description="the subject id typed again; anything else is refused naming `confirm`"
    )
    reason: text(min_length=1, max_length=MAX_ERASURE_REASON_CHARS, pattern=FILLED) = Field(
        description="why, for the audit row (a person's request under DPDP or GDPR Art. 17)"
    )


class ErasedCounts(Reply):
    decisions: int = Field(description="decisions whose context, reasoning and embedding were cleared")
    human_inputs: int = Field(description="human decisions whose body was cleared")
    facts: int = Field(description="fact payloads cleared: merged facts and rejection samples")


class Erasure(Reply):
    subject_id: str
    erased: ErasedCounts = Field(description="what this request cleared; all zero when nothing was left")
