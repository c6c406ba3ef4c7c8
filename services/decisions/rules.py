"""Decision memory rules: what a well-formed decision is, when a retry is the same one, and who may judge it.

Pure functions over plain values. The codec turns a wire message into one
of the values below and the flows (memory.py) call these on it; a broken
rule raises `InvalidDecision`, a domain error naming the field. Nothing here
knows about gRPC, HTTP or the database.
"""

from __future__ import annotations

import dataclasses
import math
import re
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Any, TypeGuard

from services.common import windows
from services.common.callers import AgentScope
from services.common.errors import Conflict, FieldError, InvalidArgument, NotFound, PermissionDenied
from services.common.redaction.redactor import JsonValue, RedactionRules, Redactor

# Engines run on their own hosts, and their clocks drift a little from ours.
# Refusing a decision stamped a few seconds "ahead" would drop a real record
# over NTP jitter. Anything further ahead is a bug in the caller: the outcome
# judge measures its window from decided_at, so a future stamp would quietly
# postpone the verdict, and listings newest-first would show it above
# decisions that were really made later.
DECIDED_AT_SKEW = timedelta(minutes=2)

DEFAULT_K = 10
MAX_K = 100

# What one decision may carry. A context is the facts an agent looked at, not
# a document store: past these it is a producer bug, and every similarity
# search and listing would pay for it.
MAX_CONTEXT_BYTES = 32 * 1024
MAX_CONTEXT_DEPTH = 16
MAX_REASONING_CHARS = 4000
MAX_TEXT_CHARS = 256
MIN_EMBEDDING_LENGTH = 1e-6
MAX_EMBEDDING_LENGTH = 1e15

# Lowercase words joined by single underscores, starting with a letter. The
# type is a grouping key in Insights and a switch in the outcome judge, so
# "Stall-Response" and "stall_response" must not become two kinds of thing.
_DECISION_TYPE = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)*")
_DECISION_TYPE_MIN = 2
_DECISION_TYPE_MAX = 64
# Built once rather than per value checked; dict first (see _check_json).
_MAPPINGS = (dict, Mapping)


class InvalidDecision(FieldError):
    """A request field that breaks a decision rule."""


def decision_not_found(decision_id: uuid.UUID) -> NotFound:
    """No decision has this id: never recorded, or past retention."""
    return NotFound(
        f"decision {decision_id} does not exist", code="DECISION_NOT_FOUND", details={"id": str(decision_id)}
    )


class Outcome(StrEnum):
    # The thing the decision was trying to achieve happened.
    SUCCESS = "success"
    # It did not.
    FAILURE = "failure"
    # The window closed without enough evidence either way. Recorded rather
    # than left pending so the sweeper stops rescanning it, and kept out of
    # precedent just like a pending decision.
    UNKNOWN = "unknown"


class JudgedBy(StrEnum):
    """Who gave a verdict, as it is stored. An engine's verdict is stored as
    `engine:<name>` (engine_judge), one judge per engine key."""

    SWEEPER = "sweeper"
    HUMAN = "human"
    # An engine's verdict from before verdicts named the engine that gave
    # them: still read from stored rows, never written now.
    API = "api"


ENGINE_JUDGE_PREFIX = "engine:"


def engine_judge(engine: str) -> str:
    """How an engine's verdicts are signed: by the name of the key it called with."""
    return f"{ENGINE_JUDGE_PREFIX}{engine}"


@dataclass(frozen=True, slots=True)
class NewDecision:
    """A decision that passed every rule and may be stored as it is."""

    decision_type: str
    agent_id: str
    subject_id: str
    action: str
    confidence: float
    decided_at: datetime
    context: Mapping[str, Any]
    reasoning: str | None = None
    model: str | None = None
    embedding: tuple[float, ...] | None = None
    # The caller's idempotency key: a retry with the same id is the same
    # decision, not a second one.
    id: uuid.UUID | None = None
    # The rollout arm the decision was made under; None outside a rollout.
    rollout: RolloutTag | None = None
    # The probability the logged policy gave `model` (0 < p ≤ 1); None when not said.
    model_propensity: float | None = None
    execution: Execution | None = None


class Execution(StrEnum):
    """How a decision's action was carried out (DESIGN §10)."""

    # By the agent alone.
    AUTONOMOUS = "autonomous"
    # By a person confirming what the agent proposed.
    CONFIRMED = "confirmed"
    # By a person doing something else.
    OVERRIDDEN = "overridden"
    # Not at all: the agent only proposed it.
    PROPOSED = "proposed"


# The smallest propensity taken. Zero is refused with the rest: a pick the
# policy could not have made has no inverse-propensity weight. Past this
# floor the weight's square overflows a double long before the sums do (a
# subnormal p makes 1/p infinite), and no Thompson draw over a fleet's
# models gives a pick a billionth of a chance and then makes it.
MIN_PROPENSITY = 1e-9


def checked_propensity(value: float | None) -> float | None:
    """The model's propensity as sent, 0 < p ≤ 1 (at least MIN_PROPENSITY); None when not sent."""
    if value is None:
        return None
    if not (_is_finite(value) and MIN_PROPENSITY <= value <= 1):
        raise InvalidDecision(
            "model_propensity", f"must be greater than 0 (at least {MIN_PROPENSITY:g}) and at most 1, got {value}"
        )
    return float(value)


def checked_execution(value: str) -> Execution | None:
    """How the action was carried out, one of Execution's words; "" means not said."""
    if not value:
        return None
    try:
        return Execution(value)
    except ValueError:
        raise InvalidDecision("execution", f"must be one of {', '.join(Execution)}") from None


class Arm(StrEnum):
    CONTROL = "control"
    CANDIDATE = "candidate"


@dataclass(frozen=True, slots=True)
class RolloutTag:
    """A decision's arm of one rollout: the guard counts it for that arm only."""

    rollout_id: uuid.UUID
    arm: Arm


def checked_rollout(rollout: tuple[str, str] | None) -> RolloutTag | None:
    """The (id, arm) a decision was sent with, held to its shape; None when not sent.

    Whether the rollout exists is not checked here: the registry owns it, and
    a decision is recorded even while the registry is away. A decision
    tagged with a rollout that never existed is counted for nothing.
    """
    if rollout is None:
        return None
    rollout_id, arm = rollout
    try:
        parsed = uuid.UUID(rollout_id)
    except ValueError:
        raise InvalidDecision("rollout.id", "must be the rollout's UUID") from None
    try:
        return RolloutTag(rollout_id=parsed, arm=Arm(arm))
    except ValueError:
        raise InvalidDecision("rollout.arm", f"must be one of {', '.join(Arm)}") from None


@dataclass(frozen=True, slots=True)
class ArmCount:
    """What one arm's decisions came to: judged ones by outcome, and those not judged yet."""

    rollout_id: uuid.UUID
    arm: Arm
    successes: int = 0
    failures: int = 0
    unknown: int = 0
    pending: int = 0


# One guard pass asks for every running rollout at once; more than this is
# not a fleet's rollouts but a caller looping.
MAX_COUNTED_ROLLOUTS = 1000


def counted_rollouts(ids: Sequence[str]) -> list[uuid.UUID]:
    """The rollouts whose arms are asked for, each a UUID, each once."""
    check_batch("rollout_ids", len(ids), MAX_COUNTED_ROLLOUTS)
    counted: dict[uuid.UUID, None] = {}
    for index, value in enumerate(ids):
        try:
            counted[uuid.UUID(value)] = None
        except ValueError:
            raise InvalidDecision(f"rollout_ids[{index}]", "must be a rollout's UUID") from None
    return list(counted)


_ARM_TALLY: dict[str | None, str] = {
    Outcome.SUCCESS: "successes",
    Outcome.FAILURE: "failures",
    Outcome.UNKNOWN: "unknown",
    None: "pending",
}


def arm_counts(
    rollout_ids: Sequence[uuid.UUID], rows: Iterable[tuple[uuid.UUID, str, str | None, int]]
) -> list[ArmCount]:
    """Both arms of every rollout asked for, in the order asked, from (rollout, arm, outcome, count) rows.

    An arm no decision has reached yet is there with zeros: a missing arm
    would read as "not asked" to the guard, not as "nothing judged".
    """
    tallies = {
        (rollout_id, arm): dict.fromkeys(("successes", "failures", "unknown", "pending"), 0)
        for rollout_id in rollout_ids
        for arm in Arm
    }
    for rollout_id, arm, outcome, count in rows:
        tally = tallies.get((rollout_id, Arm(arm)))
        if tally is not None:
            tally[_ARM_TALLY[outcome]] += count
    return [ArmCount(rollout_id=rollout_id, arm=arm, **tally) for (rollout_id, arm), tally in tallies.items()]


@dataclass(frozen=True, slots=True)
class DecisionDraft:
    """A record request as the caller sent it, held to no rule yet.

    Text fields are as sent: proto3 cannot tell an unset one from "", so
    empty stands for absent.
    """

    id: str
    decision_type: str
    agent_id: str
    subject_id: str
    action: str
    confidence: float | None
    reasoning: str
    model: str
    context: Mapping[str, Any] | None
    embedding: tuple[float, ...]
    decided_at: datetime | None
    # (rollout id, arm) as sent; None when the decision carries no rollout.
    rollout: tuple[str, str] | None = None
    model_propensity: float | None = None
    # "" when not said.
    execution: str = ""


@dataclass(frozen=True, slots=True)
class UnreadableDecision:
    """A record request refused before any rule could read it (its context
    is not a JSON object, or too large): in a batch, that decision's answer."""

    id: str
    error: InvalidArgument


# What a retry of a decision repeats: its type, agent, subject and action.
DecisionIdentity = tuple[str, str, str, str]


@dataclass(frozen=True, slots=True)
class Judgement:
    """One verdict on one decision, as SetOutcome gives it."""

    decision_id: uuid.UUID
    outcome: Outcome
    # A JudgedBy, or engine_judge's `engine:<name>`.
    judged_by: str
    reason: str | None
    # The signed-in person the call was made for, kept in the decision's
    # history; empty for an engine or the platform.
    changed_by: str = ""
    changed_by_email: str = ""
    # Whether that person is a role-1 writer; an engine key never is.
    writer: bool = False


@dataclass(frozen=True, slots=True)
class Verdict:
    """One verdict of a batch on a pending decision; `outcome` an Outcome's value."""

    id: uuid.UUID
    outcome: str
    reason: str | None


@dataclass(frozen=True, slots=True)
class PendingVerdicts:
    """A batch of verdicts from one judge, each on a different decision."""

    judged_by: str
    verdicts: tuple[Verdict, ...]


@dataclass(frozen=True, slots=True)
class SimilarSummary:
    successes: int
    failures: int
    # None when no precedent succeeded or failed. A rate of 0 would read as
    # "every precedent failed", a confident claim made from no evidence.
    success_rate: float | None


def new_decision(
    *,
    decision_type: object,
    agent_id: object,
    subject_id: object,
    action: object,
    confidence: object,
    now: datetime,
    embedding_dimension: int,
    context: object = None,
    reasoning: object = None,
    model: object = None,
    embedding: object = None,
    id: object = None,
    decided_at: object = None,
    rollout: tuple[str, str] | None = None,
    model_propensity: float | None = None,
    execution: str = "",
) -> NewDecision:
    """Validate one record request; the first broken rule raises InvalidDecision.

    `now` is the control plane's clock (timezone-aware); it is also the
    default for `decided_at`. Empty strings count as absent for the optional
    text fields, because proto3 cannot tell "unset" from "".
    """
    if now.utcoffset() is None:
        raise ValueError("now must be timezone-aware")
    return NewDecision(
        id=_idempotency_key(id),
        decision_type=checked_decision_type(decision_type),
        agent_id=_required_text("agent_id", agent_id, MAX_TEXT_CHARS),
        subject_id=_required_text("subject_id", subject_id, MAX_TEXT_CHARS),
        action=_required_text("action", action, MAX_TEXT_CHARS),
        confidence=_confidence(confidence),
        decided_at=_decided_at(decided_at, now),
        context=checked_context(context),
        reasoning=_optional_text("reasoning", reasoning, MAX_REASONING_CHARS),
        model=_optional_text("model", model, MAX_TEXT_CHARS),
        embedding=_embedding(embedding, embedding_dimension),
        rollout=checked_rollout(rollout),
        model_propensity=checked_propensity(model_propensity),
        execution=checked_execution(execution),
    )


def decision_to_record(draft: DecisionDraft, *, now: datetime, embedding_dimension: int) -> NewDecision:
    """The decision a record request makes; the first broken rule raises InvalidDecision.

    A decided_at ahead of `now`, within the clock-skew allowance, is the
    engine's clock running ahead: the decision was made no later than now,
    and is stored as made now.
    """
    decision = new_decision(
        id=draft.id or None,
        decision_type=draft.decision_type,
        agent_id=draft.agent_id,
        subject_id=draft.subject_id,
        action=draft.action,
        confidence=draft.confidence,
        reasoning=draft.reasoning or None,
        model=draft.model or None,
        context=draft.context,
        embedding=draft.embedding,
        decided_at=draft.decided_at,
        rollout=draft.rollout,
        model_propensity=draft.model_propensity,
        execution=draft.execution,
        now=now,
        embedding_dimension=embedding_dimension,
    )
    if decision.decided_at > now:
        return dataclasses.replace(decision, decided_at=now)
    return decision


def identity(decision: NewDecision) -> DecisionIdentity:
    return decision.decision_type, decision.agent_id, decision.subject_id, decision.action


def id_reuse(decision_id: str, decision: NewDecision, recorded: DecisionIdentity | None) -> Conflict | None:
    """The refusal of `decision` when its id is recorded for a different one; None for a retry.

    A retry repeats the same decision. The same id on a different one is a
    caller reusing keys, and answering "already recorded" would silently
    drop the second decision. `recorded` is None when the id holds nothing
    to compare with, and then nothing conflicts.
    """
    if recorded is None or recorded == identity(decision):
        return None
    return Conflict(
        f"id {decision_id} is already recorded for a different decision",
        code="DECISION_ID_REUSED",
        details={"id": decision_id},
    )


def check_batch(field: str, count: int, maximum: int) -> None:
    """A batch call carries at most `maximum` items; past that it is refused whole."""
    if count > maximum:
        raise InvalidArgument(f"{field}: at most {maximum} per call, got {count}", field=field)


def verdict_judge(*, person: bool, engine: str | None) -> str:
    """Who gives one verdict (SetOutcome): the verified caller, never a field.

    A signed-in person (the console's re-judge) is `human`; an engine, by
    its own key or through the gateway that checked it, is `engine:<name>`.
    The platform acting for nobody judges only as the sweep, in batches, so
    a single verdict from it names no judge and is refused.
    """
    if person:
        return JudgedBy.HUMAN
    if engine is not None:
        return engine_judge(engine)
    raise PermissionDenied(
        "a verdict is given by an engine key or a signed-in person, who the call must carry",
        code="JUDGE_UNKNOWN",
    )


def sweep_judge(*, person: bool, engine: str | None) -> JudgedBy:
    """Who gives a batch of verdicts (SetOutcomes): only the sweeper.

    The outcomes context sends its sweep's verdicts as the platform itself,
    whoever asked for the sweep. A batch carrying a person or an engine is
    someone else signing as the sweeper, and is refused.
    """
    if person or engine is not None:
        raise PermissionDenied(
            "batch verdicts are the outcome sweep's alone; an engine or a person judges one decision at a time",
            code="SWEEP_VERDICTS_ONLY",
        )
    return JudgedBy.SWEEPER


# The code of a decision refused because its engine's key does not list its agent.
AGENT_NOT_PERMITTED = "AGENT_NOT_PERMITTED"


def agent_refusal(scope: AgentScope, agent_id: str) -> PermissionDenied | None:
    """Why a decision for `agent_id` may not be recorded by the engine
    `scope` belongs to, or None when it may."""
    if scope.permits(agent_id):
        return None
    return PermissionDenied(
        scope.refusal(agent_id), code=AGENT_NOT_PERMITTED, details={"agent_id": agent_id, "engine": scope.engine}
    )


def check_judge(judgement: Judgement) -> None:
    """Only a role-1 person the gateway verified may give a human verdict.

    A human verdict overrules any other (see may_rejudge); a staff reader
    the gateway acts for may read decisions, not overrule their judges.
    """
    if judgement.judged_by == JudgedBy.HUMAN and not judgement.writer:
        raise PermissionDenied("a human verdict needs a signed-in role-1 person", code="HUMAN_VERDICT_REFUSED")


def rejudges(judgement: Judgement, *, outcome: str | None, reason: str | None, judged_by: str | None) -> bool:
    """Whether `judgement` changes a decision now at `outcome` (None: pending), `reason`, `judged_by`.

    The same verdict again is a retry, not a change: False, and no history
    row is written. A different one on a judged decision is refused with
    ALREADY_JUDGED unless may_rejudge allows it.
    """
    if outcome == judgement.outcome.value and reason == judgement.reason:
        return False
    if not may_rejudge(Outcome(outcome) if outcome else None, judgement.judged_by):
        raise Conflict(
            f"decision {judgement.decision_id} is already judged {outcome} by {judged_by}; only a person may change it",
            code="ALREADY_JUDGED",
            details={"id": str(judgement.decision_id), "outcome": outcome, "judged_by": judged_by},
        )
    return True


def parse_outcome(word: object, field: str = "outcome") -> Outcome:
    """The stored outcome vocabulary, exactly; nothing is guessed or folded."""
    if isinstance(word, str):
        try:
            return Outcome(word)
        except ValueError:
            pass
    allowed = ", ".join(o.value for o in Outcome)
    raise InvalidDecision(field, f"must be one of {allowed}, got {word!r}")


def may_rejudge(current_outcome: Outcome | None, judged_by: str) -> bool:
    """Whether `judged_by` may set the outcome of a decision now at `current_outcome`.

    A pending decision (None) may be judged by anyone. Once judged, only a
    person may change the verdict: a second sweep, or an engine calling the
    API, has no evidence a person lacks, and letting machines overwrite each
    other would make a label depend on which one ran last.
    """
    return current_outcome is None or judged_by == JudgedBy.HUMAN


def similar_summary(outcomes: Iterable[str]) -> SimilarSummary:
    """Count the successes and failures among precedents.

    "unknown" is neither: it means nobody could tell, so it must not dilute
    the rate in either direction.
    """
    successes = failures = 0
    for outcome in outcomes:
        if outcome == Outcome.SUCCESS:
            successes += 1
        elif outcome == Outcome.FAILURE:
            failures += 1
    judged = successes + failures
    return SimilarSummary(
        successes=successes,
        failures=failures,
        success_rate=successes / judged if judged else None,
    )


def clamp_k(k: object = None) -> int:
    """How many precedents a similarity query returns: 10 unless asked, 1..100.

    Out of range is refused rather than clamped, so a caller asking for 500
    learns it did not get 500.
    """
    if k is None:
        return DEFAULT_K
    if isinstance(k, bool) or not isinstance(k, int):
        raise InvalidDecision("k", f"must be an integer, got {k!r}")
    if not 1 <= k <= MAX_K:
        raise InvalidDecision("k", f"must be between 1 and {MAX_K}, got {k}")
    return k


def checked_decision_type(value: object) -> str:
    if not isinstance(value, str) or not value:
        raise InvalidDecision("decision_type", "is required")
    if not _DECISION_TYPE_MIN <= len(value) <= _DECISION_TYPE_MAX:
        raise InvalidDecision(
            "decision_type",
            f"must be {_DECISION_TYPE_MIN} to {_DECISION_TYPE_MAX} characters, got {len(value)}",
        )
    if not _DECISION_TYPE.fullmatch(value):
        raise InvalidDecision(
            "decision_type",
            f"must be lowercase snake_case starting with a letter, got {value!r}",
        )
    return value


def _required_text(field: str, value: object, limit: int) -> str:
    if value is None or (isinstance(value, str) and not value.strip()):
        raise InvalidDecision(field, "is required")
    if not isinstance(value, str):
        raise InvalidDecision(field, f"must be a string, got {type(value).__name__}")
    return _storable_text(field, value.strip(), limit)


def _optional_text(field: str, value: object, limit: int) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidDecision(field, f"must be a string, got {type(value).__name__}")
    return _storable_text(field, value, limit) if value.strip() else None


def _storable_text(field: str, value: str, limit: int) -> str:
    # Postgres text and jsonb hold no NUL; refused here it names the field
    # instead of failing the insert.
    if "\x00" in value:
        raise InvalidDecision(field, "must not contain NUL characters")
    if len(value) > limit:
        raise InvalidDecision(field, f"must be at most {limit:,} characters, got {len(value):,}")
    return value


def _is_number(value: object) -> TypeGuard[int | float]:
    # bool is an int to Python, but True is not a confidence or a coordinate.
    return isinstance(value, int | float) and not isinstance(value, bool)


def _is_finite(value: int | float) -> bool:
    # JSON integers have no size limit; one too large for a float is as
    # unusable here as Infinity.
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def _confidence(value: object) -> float:
    if value is None:
        raise InvalidDecision("confidence", "is required")
    if not _is_number(value):
        raise InvalidDecision("confidence", f"must be a number, got {type(value).__name__}")
    if not (_is_finite(value) and 0 <= value <= 1):
        raise InvalidDecision("confidence", f"must be between 0 and 1, got {value}")
    return float(value)


def _idempotency_key(value: object) -> uuid.UUID | None:
    if value is None or value == "":
        return None
    if isinstance(value, uuid.UUID):
        return value
    if isinstance(value, str):
        try:
            return uuid.UUID(value)
        except ValueError:
            pass
    raise InvalidDecision("id", f"must be a UUID, got {value!r}")


def _decided_at(value: object, now: datetime) -> datetime:
    if value is None:
        return now.astimezone(UTC)
    if not isinstance(value, datetime):
        raise InvalidDecision("decided_at", f"must be a timestamp, got {type(value).__name__}")
    # A naive time names no instant: the same digits mean different moments
    # in Delhi and in UTC, and guessing is how a run at 20:57 reads back as 02:27.
    if value.utcoffset() is None:
        raise InvalidDecision("decided_at", "must carry a UTC offset")
    if value > now + DECIDED_AT_SKEW:
        raise InvalidDecision(
            "decided_at",
            f"is in the future ({value.isoformat()} is after {now.isoformat()})",
        )
    return value.astimezone(UTC)


def checked_context(value: object) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise InvalidDecision("context", f"must be an object, got {type(value).__name__}")
    _check_json(value, "context", 0)
    return dict(value)


def _check_json(value: object, path: str, depth: int) -> None:
    # The context is stored as jsonb, which has no NaN or Infinity, only
    # string keys and no NUL in text; refusing here names the offending path
    # instead of failing deep inside the insert.
    if depth > MAX_CONTEXT_DEPTH:
        raise InvalidDecision("context", f"{path} nests deeper than {MAX_CONTEXT_DEPTH} levels")
    if isinstance(value, str):
        if "\x00" in value:
            raise InvalidDecision("context", f"{path} contains a NUL character")
        return
    if value is None or isinstance(value, bool):
        return
    if _is_number(value):
        if not _is_finite(value):
            raise InvalidDecision("context", f"{path} is not a finite number")
        return
    # dict before the Mapping ABC: an ABC check costs ten plain ones.
    if isinstance(value, _MAPPINGS):
        for key, item in value.items():
            if not isinstance(key, str) or "\x00" in key:
                raise InvalidDecision("context", f"{path} has a key JSON or Postgres cannot hold: {key!r}")
            _check_json(item, f"{path}.{key}", depth + 1)
        return
    if isinstance(value, list | tuple):
        for index, item in enumerate(value):
            _check_json(item, f"{path}[{index}]", depth + 1)
        return
    raise InvalidDecision("context", f"{path} is a {type(value).__name__}, which JSON cannot hold")


def _embedding(value: object, dimension: int) -> tuple[float, ...] | None:
    if value is None:
        return None
    if isinstance(value, str | bytes) or not isinstance(value, Sequence):
        raise InvalidDecision("embedding", "must be a list of numbers")
    if len(value) == 0:
        # proto3 sends an empty repeated field when the caller gave none.
        return None
    if len(value) != dimension:
        raise InvalidDecision("embedding", f"must have exactly {dimension} dimensions, got {len(value)}")
    if not all(_is_number(x) and _is_finite(x) for x in value):
        raise InvalidDecision("embedding", "must contain only finite numbers")
    vector = tuple(float(x) for x in value)
    # A zero vector has no direction, so its cosine distance to anything is
    # undefined; stored, it would poison every similarity query it meets.
    if not any(vector):
        raise InvalidDecision("embedding", "must not be all zeros")
    check_magnitude(vector)
    return vector


def check_magnitude(vector: Sequence[float]) -> None:
    """Refuse a vector whose length single-precision arithmetic cannot hold.

    pgvector sums squares in 32-bit floats: a vector shorter than this
    underflows to length 0 and one longer overflows to infinity, and either
    turns every cosine distance it meets into NaN. Cosine only reads the
    direction, so no real embedding needs a length outside these bounds.
    """
    length = math.hypot(*vector)
    if not MIN_EMBEDDING_LENGTH <= length <= MAX_EMBEDDING_LENGTH:
        raise InvalidDecision(
            "embedding",
            f"must have a length between {MIN_EMBEDDING_LENGTH:g} and {MAX_EMBEDDING_LENGTH:g}, got {length:g}",
        )


# ─── Erasure of one subject ────────────────────────────────────────────────

# A person's request and the ground it rests on, not a document.
MAX_ERASURE_REASON_CHARS = 2000
# The audit row of an erasure: the subject's entry in the registry's log.
ERASURE_AUDIT_ENTITY = "subject"
ERASURE_AUDIT_FIELD = "personal_data"


@dataclass(frozen=True, slots=True)
class ErasureRequest:
    subject_id: str
    reason: str


@dataclass(frozen=True, slots=True)
class Erased:
    """What one erasure cleared, by kind of record."""

    decisions: int = 0
    human_inputs: int = 0
    facts: int = 0


@dataclass(frozen=True, slots=True)
class Erasure:
    """One erasure of a subject, as its ledger row keeps it until it is audited."""

    id: uuid.UUID
    subject_id: str
    reason: str
    erased: Erased


@dataclass(frozen=True, slots=True)
class AuditEntry:
    """One row for the registry's audit log; its actor is the person the call acts for."""

    request_id: uuid.UUID
    entity: str
    entity_id: str
    field: str
    new: Mapping[str, Any]
    # What the field held before; None when there was nothing (an erasure).
    old: Mapping[str, Any] | None = None


def erasure_request(*, subject_id: str, confirm: str, reason: str) -> ErasureRequest:
    """An erasure as asked: the subject exactly as stored, typed twice, and why.

    The subject id is matched as it is, not trimmed: the decisions of
    " BK-1" are not those of "BK-1". The confirmation is an exact, typed
    match, because nothing erased can be brought back.
    """
    if not subject_id.strip():
        raise InvalidDecision("subject_id", "is required")
    if subject_id != subject_id.strip() or len(subject_id) > MAX_TEXT_CHARS or "\x00" in subject_id:
        raise InvalidDecision(
            "subject_id", f"must be at most {MAX_TEXT_CHARS} characters, without NUL or blanks around it"
        )
    if not confirm:
        raise InvalidDecision("confirm", f"type {subject_id} to erase its personal data", code="CONFIRMATION_REQUIRED")
    if confirm != subject_id:
        raise InvalidDecision("confirm", f"must be exactly {subject_id}", code="CONFIRMATION_MISMATCH")
    return ErasureRequest(subject_id=subject_id, reason=_required_text("reason", reason, MAX_ERASURE_REASON_CHARS))


def erasure_audit(erasure: Erasure) -> AuditEntry:
    """The audit row of an erasure: what it cleared and why, under the subject."""
    erased = erasure.erased
    return AuditEntry(
        request_id=erasure.id,
        entity=ERASURE_AUDIT_ENTITY,
        entity_id=erasure.subject_id,
        field=ERASURE_AUDIT_FIELD,
        new={
            "erased": {
                "decisions": erased.decisions,
                "human_inputs": erased.human_inputs,
                "facts": erased.facts,
            },
            "reason": erasure.reason,
        },
    )


VERDICT_AUDIT_ENTITY = "decision"
VERDICT_AUDIT_FIELD = "verdict"


@dataclass(frozen=True, slots=True)
class UnauditedVerdict:
    """A person's verdict kept in a decision's history, its audit row not yet written."""

    audit_id: uuid.UUID
    decision_id: uuid.UUID
    # None: the decision was pending.
    old_outcome: str | None
    new_outcome: str
    reason: str | None


def audits_verdict(judgement: Judgement) -> bool:
    """Whether a verdict is audited: a person's is a change someone made;
    an engine's or the sweep's is the fleet's own record, kept in its history."""
    return judgement.judged_by == JudgedBy.HUMAN


def verdict_audit(verdict: UnauditedVerdict) -> AuditEntry:
    """The audit row of a person's verdict: the outcome before and after, and why."""
    return AuditEntry(
        request_id=verdict.audit_id,
        entity=VERDICT_AUDIT_ENTITY,
        entity_id=str(verdict.decision_id),
        field=VERDICT_AUDIT_FIELD,
        old={"outcome": verdict.old_outcome} if verdict.old_outcome is not None else None,
        new={"outcome": verdict.new_outcome, "reason": verdict.reason},
    )


# ─── A decision's context, read by a person ─────────────────────────────────

# Redaction runs here, in the context that owns the data, so the raw context
# never leaves it: the gateway, its logs and its error answers only ever hold
# the redacted copy. The rules are the shared package's, built from the same
# settings as the playground's, so a person sees a context exactly as the
# model would be sent it.
CONTEXT_READ_AUDIT_FIELD = "context_read"


@dataclass(frozen=True, slots=True)
class RedactedContext:
    decision_id: uuid.UUID
    context: JsonValue
    # How many values of each kind were replaced or rounded; never the values.
    redacted: Mapping[str, int]
    # Set once the subject's personal data was erased: the context is gone.
    erased_at: datetime | None


def redacted_context(
    decision_id: uuid.UUID, context: Any, *, erased_at: datetime | None, redaction: RedactionRules
) -> RedactedContext:
    """A decision's context as a person may read it: redacted with a Redactor of its own."""
    if erased_at is not None:
        # Erasure left "{}"; nothing of it is shown, not even its shape.
        return RedactedContext(decision_id, {}, {}, erased_at)
    redactor = Redactor(redaction)
    redacted = redactor.value(context)
    return RedactedContext(decision_id, redacted, redactor.report(), None)


def context_read_audit(read: RedactedContext, *, audit_id: uuid.UUID) -> AuditEntry:
    """The audit row of one person's read of a decision's context.

    Reading personal data is itself an act to account for, even redacted:
    placeholders still say how many riders and phones a decision touched,
    and the row records who looked and when. Its counts name kinds only.
    """
    return AuditEntry(
        request_id=audit_id,
        entity=VERDICT_AUDIT_ENTITY,
        entity_id=str(read.decision_id),
        field=CONTEXT_READ_AUDIT_FIELD,
        new={"redacted": dict(read.redacted), "erased": read.erased_at is not None},
    )


# ─── Evidence counted for the outcomes context (DESIGN §10) ────────────────

# A judged-success window is an alert's sample of the latest decisions, not
# a history: past this, one call would read a fleet's whole record.
MAX_JUDGED_WINDOW = 10_000


@dataclass(frozen=True, slots=True)
class Weighing:
    """Whose weights are asked for: one decision type's judged decisions, as if all went to `model`."""

    decision_type: str
    model: str


@dataclass(frozen=True, slots=True)
class DecisionWeights:
    """The sums of a self-normalised inverse-propensity estimate of one model's success rate.

    w = 1 / p over the judged decisions that went to the model and carry a
    propensity p; r is 1 for a success. `decisions` is judged + unknown + pending.
    """

    decisions: int
    judged: int
    unknown: int
    pending: int
    logged_successes: int
    with_propensity: int
    matched: int
    sum_w: float
    sum_w_r: float
    sum_w2: float
    sum_w2_r: float
    sum_inverse_all: float


def weighing(*, decision_type: str, model: str) -> Weighing:
    """The weights asked for: a well-formed decision type and a model, both required."""
    return Weighing(
        decision_type=checked_decision_type(decision_type),
        model=_required_text("model", model, MAX_TEXT_CHARS),
    )


@dataclass(frozen=True, slots=True)
class ExecutionsAsked:
    agent_id: str
    # None: every decision type of the agent.
    decision_type: str | None


@dataclass(frozen=True, slots=True)
class ExecutionCount:
    """What one agent's decisions of one type, carried out one way, came to."""

    decision_type: str
    # None for the decisions that did not say.
    execution: Execution | None
    successes: int = 0
    failures: int = 0
    unknown: int = 0
    pending: int = 0


def executions_asked(*, agent_id: str, decision_type: str) -> ExecutionsAsked:
    """One agent (required) and optionally one of its decision types ("" for all)."""
    return ExecutionsAsked(
        agent_id=_required_text("agent_id", agent_id, MAX_TEXT_CHARS),
        decision_type=checked_decision_type(decision_type) if decision_type else None,
    )


def execution_counts(rows: Iterable[tuple[str, str | None, str | None, int]]) -> list[ExecutionCount]:
    """(decision type, execution, outcome, count) rows as one count per type and execution.

    Only what some decision reached is answered: an execution absent for a
    type has no decisions. Ordered by type, then the unsaid ones, then
    Execution's order.
    """
    tallies: dict[tuple[str, Execution | None], dict[str, int]] = {}
    for decision_type, execution, outcome, count in rows:
        key = (decision_type, Execution(execution) if execution else None)
        tally = tallies.setdefault(key, dict.fromkeys(("successes", "failures", "unknown", "pending"), 0))
        tally[_ARM_TALLY[outcome]] += count
    order: dict[Execution | None, int] = {None: 0}
    order.update((execution, index + 1) for index, execution in enumerate(Execution))
    ranked = sorted(tallies.items(), key=lambda item: (item[0][0], order[item[0][1]]))
    return [
        ExecutionCount(decision_type=decision_type, execution=execution, **tally)
        for (decision_type, execution), tally in ranked
    ]


@dataclass(frozen=True, slots=True)
class JudgedWindow:
    """One agent × decision type's latest `window` judged decisions by decision time, and the `window` before."""

    agent_id: str
    decision_type: str
    latest_judged: int
    latest_successes: int
    previous_judged: int
    previous_successes: int
    latest_decided_at: datetime


def judged_window(window: int) -> int:
    """How many judged decisions make one window: 1 to MAX_JUDGED_WINDOW, refused otherwise."""
    if not 1 <= window <= MAX_JUDGED_WINDOW:
        raise InvalidDecision("window", f"must be between 1 and {MAX_JUDGED_WINDOW:,}, got {window}")
    return window


# ─── The filters' choices ─────────────────────────────────────────────────

# The window the console's filters draw their choices from.
FACET_DEFAULT_DAYS = 30
FACET_MAX_DAYS = 365


# ─── Outcomes over time ───────────────────────────────────────────────────

SERIES_DEFAULT_DAYS = windows.DEFAULT_DAYS
SERIES_MIN_DAYS = windows.MIN_DAYS
SERIES_MAX_DAYS = windows.MAX_DAYS
# Bucket widths a series may use, narrowest first. Unasked, the narrowest
# that keeps the window within SERIES_DEFAULT_MAX_BUCKETS wins: a day in
# hours, a week in quarter days, a month in days.
SERIES_BUCKET_SECONDS = (3600, 3 * 3600, 6 * 3600, 12 * 3600, 86400)
SERIES_DEFAULT_MAX_BUCKETS = 48
# An asked width may be finer, but a month in hours is as far as it goes:
# the answer stays a few hundred buckets per decision type.
SERIES_MAX_BUCKETS = 720


@dataclass(frozen=True, slots=True)
class OutcomeSeriesAsked:
    # The last `days` days (7 when neither is set), or the range [start, end);
    # checked against the clock in outcome_window, as "now" ends them.
    days: int | None
    # None: the default width for the window.
    bucket_seconds: int | None
    # None: every decision type.
    decision_type: str | None
    start: datetime | None = None
    end: datetime | None = None


@dataclass(frozen=True, slots=True)
class OutcomeWindow:
    # The days asked for; None for a range of its own.
    days: int | None
    start: datetime
    end: datetime
    bucket_seconds: int
    buckets: int


@dataclass(frozen=True, slots=True)
class OutcomeBucket:
    start: datetime
    successes: int = 0
    failures: int = 0
    unknown: int = 0
    pending: int = 0


@dataclass(frozen=True, slots=True)
class DecisionTypeSeries:
    decision_type: str
    buckets: list[OutcomeBucket]


def outcome_series_asked(
    *,
    days: int | None,
    bucket_seconds: int | None,
    decision_type: str,
    start: datetime | None = None,
    end: datetime | None = None,
) -> OutcomeSeriesAsked:
    """A width from SERIES_BUCKET_SECONDS and optionally one type ("" for
    all); the span itself is held to its bounds once now is known."""
    if bucket_seconds is not None and bucket_seconds not in SERIES_BUCKET_SECONDS:
        widths = ", ".join(str(width) for width in SERIES_BUCKET_SECONDS)
        raise InvalidDecision("bucket_seconds", f"must be one of {widths}, got {bucket_seconds}")
    return OutcomeSeriesAsked(
        days=days,
        bucket_seconds=bucket_seconds,
        decision_type=checked_decision_type(decision_type) if decision_type else None,
        start=start,
        end=end,
    )


def outcome_window(now: datetime, asked: OutcomeSeriesAsked) -> OutcomeWindow:
    """Equal, epoch-aligned buckets covering the last `days` days to `now`,
    or the asked range: 1 to 30 days either way (see services.common.windows)."""
    span = windows.asked_span(
        now,
        days=asked.days,
        start=asked.start,
        end=asked.end,
        default_days=SERIES_DEFAULT_DAYS,
        min_days=SERIES_MIN_DAYS,
        max_days=SERIES_MAX_DAYS,
    )
    width = asked.bucket_seconds or windows.bucket_width(span, SERIES_BUCKET_SECONDS, SERIES_DEFAULT_MAX_BUCKETS)
    if (span.end - span.start).total_seconds() // width > SERIES_MAX_BUCKETS:
        raise InvalidDecision(
            "bucket_seconds",
            f"{(span.end - span.start).total_seconds() / 86400:g} days in buckets of {width} s"
            f" are more than {SERIES_MAX_BUCKETS} buckets",
        )
    drawn = windows.buckets(span, width)
    return OutcomeWindow(days=span.days, start=drawn.start, end=drawn.end, bucket_seconds=width, buckets=drawn.count)


def outcome_series(
    window: OutcomeWindow, counts: Iterable[tuple[str, int, str | None, int]]
) -> list[DecisionTypeSeries]:
    """Per decision type, every bucket of the window in order, from sparse
    (decision type, bucket index, outcome, count) rows; a null outcome is
    pending, kept apart from unknown and from failure. Rows outside the
    window are ignored; types come in name order."""
    tallies: dict[str, list[dict[str, int]]] = {}
    for decision_type, index, outcome, count in counts:
        if not 0 <= index < window.buckets:
            continue
        slots = tallies.get(decision_type)
        if slots is None:
            # Built once per type, not per row: a month in hours is 721 buckets.
            slots = [dict.fromkeys(("successes", "failures", "unknown", "pending"), 0) for _ in range(window.buckets)]
            tallies[decision_type] = slots
        slots[index][_ARM_TALLY[outcome]] += count
    width = timedelta(seconds=window.bucket_seconds)
    return [
        DecisionTypeSeries(
            decision_type=decision_type,
            buckets=[OutcomeBucket(window.start + i * width, **tally) for i, tally in enumerate(slots)],
        )
        for decision_type, slots in sorted(tallies.items())
    ]
