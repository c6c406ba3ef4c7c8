"""The rules of importing human input: what an input means, what a range
records, and which source may speak for a subject.

Pure functions over plain values; fetching and storing belong to the caller.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Protocol

from services.common.errors import FieldError
from services.common.paging import parse_cursor_instant

# The one keyed form a comment may take. Anything else, "looks good"
# included, is an instruction, so casual approval can never pass a gate.
VERIFY_PREFIX = "outrider verify "
# A person's message is a few lines; a body past this is a paste gone wrong.
MAX_BODY_CHARS = 20_000


class InvalidHumanInput(FieldError):
    """An input a source returned that cannot be imported; `field` names the flaw."""


class HumanDecisionKind(StrEnum):
    OPERATOR_INSTRUCTION = "operator_instruction"
    PLAN_STEP_APPROVAL = "plan_step_approval"


@dataclass(frozen=True, slots=True)
class HumanInput:
    """One utterance as the source found it, carrying no Outrider meaning.

    Classifying it is this module's job, so source adapters never need to
    know what a decision is. `provider` is the source identity in the same
    form a subject's source takes (provider:instance/project); together with
    `external_id` it is the provenance key that makes an import idempotent.
    """

    provider: str
    external_id: str
    subject_id: str
    author: str
    written_at: datetime
    body: str
    observed_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class Subject:
    id: str
    # Where the subject came from, stamped when it was registered; None for
    # a subject no outside source knows about.
    source: str | None = None
    # The plan currently accepted for this subject, if any.
    plan_ref: str | None = None


@dataclass(frozen=True, slots=True)
class PlanChange:
    """From `accepted_at` on, `plan_ref` was the subject's plan (None: no plan)."""

    plan_ref: str | None
    accepted_at: datetime


@dataclass(frozen=True, slots=True)
class SourceCursor:
    """How far one source has been read for one subject.

    `position` is opaque to everyone but the source; "" means from the start.
    """

    subject_id: str
    source: str
    position: str = ""


class HumanInputSource(Protocol):
    async def fetch_after(self, subject: Subject, cursor: SourceCursor) -> tuple[Sequence[HumanInput], SourceCursor]:
        """Inputs written after `cursor`, in the order they were written, and
        the cursor that covers them.

        The caller stores the returned cursor only after every decision
        derived from the range is durable. A crash in between means the same
        range is asked for again, so a source must answer a repeated range
        without error; the provenance key keeps the decisions single.
        """
        ...


@dataclass(frozen=True, slots=True)
class PageKey:
    """Where a page of one subject's decisions ends, in their listing order."""

    written_at: datetime
    seq: int

    @classmethod
    def from_parts(cls, parts: list[str]) -> PageKey:
        """A listing cursor's key (see services.common.paging)."""
        written, seq = parts
        return cls(written_at=parse_cursor_instant(written), seq=int(seq))


@dataclass(frozen=True, slots=True)
class HumanDecisionListing:
    """One page of a subject's human decisions, as asked for."""

    subject_id: str
    after: PageKey | None
    limit: int


@dataclass(frozen=True, slots=True)
class Classification:
    kind: HumanDecisionKind
    step: str | None = None
    plan_ref: str | None = None


@dataclass(frozen=True, slots=True)
class HumanDecision:
    """What gets recorded for one imported input."""

    subject_id: str
    kind: HumanDecisionKind
    body: str
    author: str
    provider: str
    external_id: str
    written_at: datetime
    observed_at: datetime
    plan_ref: str | None = None
    step: str | None = None


@dataclass(frozen=True, slots=True)
class ImportPlan:
    """One fetched range sorted into what to record and what to pass over.

    Everything in all three lists is covered by the source's cursor: a
    skipped or duplicate input is read once and never again.
    """

    to_record: tuple[HumanInput, ...]
    skipped_empty: tuple[HumanInput, ...]
    duplicates: tuple[HumanInput, ...]


def classify(body: str, plan_ref: str | None) -> Classification:
    """A first line "outrider verify <step>" approves that step of the plan.

    The comment names only the step; the plan is the subject's currently
    accepted one, supplied here, so an approval binds to the plan that was
    current when the person wrote it and cannot be aimed at another. With
    no accepted plan, or no step named, there is nothing to approve and the
    text stands as an instruction.
    """
    first_line = body.split("\n", 1)[0].strip()
    if not first_line.lower().startswith(VERIFY_PREFIX):
        return Classification(HumanDecisionKind.OPERATOR_INSTRUCTION)
    step = first_line[len(VERIFY_PREFIX) :].strip()
    if not step or not plan_ref:
        return Classification(HumanDecisionKind.OPERATOR_INSTRUCTION)
    return Classification(HumanDecisionKind.PLAN_STEP_APPROVAL, step=step, plan_ref=plan_ref)


def plan_in_force(history: Sequence[PlanChange], at: datetime) -> str | None:
    """The plan accepted for the subject at the instant `at`, or None.

    An approval binds to the plan the person could see when they wrote it.
    Binding to the plan current at import time would let a slow source aim
    "verify step 2" at a plan accepted after the person wrote it, whose step
    2 they never read. An input written before any plan approves nothing.
    `history` is in acceptance order; ties on the instant go to the later one.
    """
    chosen: tuple[datetime, int] | None = None
    plan_ref: str | None = None
    for order, change in enumerate(history):
        if change.accepted_at <= at and (chosen is None or (change.accepted_at, order) >= chosen):
            chosen = (change.accepted_at, order)
            plan_ref = change.plan_ref
    return plan_ref


def human_decision(human_input: HumanInput, *, plan_ref: str | None, observed_at: datetime) -> HumanDecision:
    """The decision to record for one input, its body kept verbatim.

    Extracting intent from free text is not attempted: a crude label on the
    exact words is correct, a paraphrase could be wrong, and the words
    outrank any agent's handoff notes because a person wrote them.
    `observed_at` is when Outrider first saw the input, unless the source
    already knew.
    """
    classification = classify(human_input.body, plan_ref)
    return HumanDecision(
        subject_id=human_input.subject_id,
        kind=classification.kind,
        body=human_input.body,
        author=human_input.author,
        provider=human_input.provider,
        external_id=human_input.external_id,
        written_at=human_input.written_at,
        observed_at=human_input.observed_at or observed_at,
        plan_ref=classification.plan_ref,
        step=classification.step,
    )


def plan_import(inputs: Iterable[HumanInput], known_external_ids: Collection[str]) -> ImportPlan:
    """Decide what to record from one fetched range, keeping written order.

    An input without an external id refuses the whole range: without
    provenance a refetch would record it twice, and refusing leaves the
    cursor where it was so the lease fails closed instead of acting on half
    the story. Known ids are dropped here rather than left to the store's
    unique key, so an ordinary refetch is not a stream of expected errors.
    """
    to_record: list[HumanInput] = []
    skipped_empty: list[HumanInput] = []
    duplicates: list[HumanInput] = []
    seen = set(known_external_ids)
    for position, item in enumerate(inputs):
        if not item.external_id.strip():
            raise InvalidHumanInput(
                "external_id",
                f"input {position} from {item.provider!r} by {item.author!r} "
                f"written at {item.written_at.isoformat()} has no external id",
            )
        # An empty utterance decides nothing.
        if not item.body.strip():
            skipped_empty.append(item)
        elif item.external_id in seen:
            duplicates.append(item)
        else:
            seen.add(item.external_id)
            to_record.append(item)
    return ImportPlan(tuple(to_record), tuple(skipped_empty), tuple(duplicates))


def source_matches(subject_source: str | None, configured_sources: Iterable[str]) -> str | None:
    """The one configured source allowed to reconcile a subject, if any.

    Only the source the subject came from qualifies, matched on the whole
    provider:instance/project string. Asking every configured source was
    wrong, not merely noisy: two projects numbering their threads the same
    way would hand one subject's comments to another as authoritative
    decisions. A subject with no matching source has nothing to reconcile,
    which is not a failure, and the lease goes ahead.
    """
    if not subject_source:
        return None
    for source in configured_sources:
        if source == subject_source:
            return source
    return None


def next_cursor(current: SourceCursor, returned: SourceCursor) -> SourceCursor | None:
    """The cursor to store after a range is durable, or None to leave it.

    The result is bound to the current subject and source whatever the
    source filled in, so a confused adapter cannot move another subject's
    cursor. An empty or unchanged position means nothing new was covered.
    """
    if not returned.position or returned.position == current.position:
        return None
    return SourceCursor(subject_id=current.subject_id, source=current.source, position=returned.position)
