"""Rules for reading decision memory: paging cursors, list filters, and how a
precedent search is run so that it stays correct under its filters.

Pure functions over plain values; a broken rule raises `InvalidDecision`
like every other rule of this context.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from services.common.paging import instant_and_uuid
from services.decisions import rules
from services.decisions.rules import InvalidDecision, Outcome

DEFAULT_DETAIL_PRECEDENTS = 5
DEFAULT_PENDING_BATCH = 500
MAX_PENDING_BATCH = 1000
MAX_VERDICTS = 1000
# Decisions per RecordDecisions call. A few hundred already spread the call's
# fixed cost thin; a larger call only holds a connection longer and, when it
# fails, sends more again.
MAX_RECORD_BATCH = 500

# The listing's word for "not judged yet"; the stored value is null.
PENDING = "pending"

# pgvector's ceiling for hnsw.ef_search.
EF_SEARCH_MAX = 1000
# The narrowest walk, whatever the type's share. pgvector's default of 40
# found 90 of the exact top 10 in 100 for the dominant type at 200,000 rows
# in bench/decisions; 100 found 99.
EF_SEARCH_FLOOR = 100
# Candidates of the wanted type a walk should meet per neighbour asked for.
# The walk keeps ef_search candidates of every type and the filter keeps the
# type's share of them, so ef_search = EF_PER_RESULT * k / share. At 2, a
# type holding a tenth of the graph, interleaved with another six times its
# size, found 99 of the exact top 10 in 100 in bench/decisions.
EF_PER_RESULT = 2
# Below this many judged rows of a type, reading them all is about as cheap
# as one graph walk and is exact, so the graph is not used.
EXACT_SEARCH_ROWS = 2000


@dataclass(frozen=True, slots=True)
class PageKey:
    """The position of the last row a page returned: (decided_at, id)."""

    decided_at: datetime
    id: uuid.UUID


@dataclass(frozen=True, slots=True)
class DecisionListing:
    """One page of the decision listing, as asked for; None filters nothing."""

    decision_type: str | None
    outcome: str | None
    agent_id: str | None
    model: str | None
    decided_from: datetime | None
    decided_to: datetime | None
    after: PageKey | None
    limit: int
    subject_id: str | None = None
    rollout_id: uuid.UUID | None = None
    model_contains: str | None = None


@dataclass(frozen=True, slots=True)
class Facets:
    """What the console's filters offer: the values seen in the last `window_days` days."""

    window_days: int
    decision_types: list[str]
    agent_ids: list[str]
    models: list[str]


def facet_days(requested: int | None) -> int:
    """The facets' window: unset means 30 days, at most a year."""
    if requested is None:
        return rules.FACET_DEFAULT_DAYS
    if not 1 <= requested <= rules.FACET_MAX_DAYS:
        raise InvalidDecision("days", f"must be between 1 and {rules.FACET_MAX_DAYS}, got {requested}")
    return requested


def listed_models(known: Sequence[str], *, model: str | None, model_contains: str | None) -> list[str] | None:
    """The models a listing reads, from every model decisions name; None when it asks for no model.

    A substring is matched here, on the few distinct models, rather than in
    SQL: a LIKE pattern would need its `%`, `_` and `\\` escaped, and each
    model's page is then read through the model index.
    """
    if not model and not model_contains:
        return None
    candidates = [model] if model else list(known)
    if not model_contains:
        return candidates
    needle = model_contains.casefold()
    return [name for name in candidates if needle in name.casefold()]


@dataclass(frozen=True, slots=True)
class PendingListing:
    """One batch of pending decisions, as the outcome judge asks for it."""

    # None: made before now.
    decided_before: datetime | None
    after: PageKey | None
    limit: int


@dataclass(frozen=True, slots=True)
class DetailQuery:
    """One decision's detail, with up to `precedents` of its nearest precedents."""

    decision_id: uuid.UUID
    precedents: int


@dataclass(frozen=True, slots=True)
class SearchPlan:
    """How one precedent search reads the table.

    `exact` reads every judged row of the type and sorts by distance; else
    the HNSW graph over judged rows is walked keeping `ef_search` candidates.
    """

    exact: bool
    ef_search: int


def page_key(parts: list[str]) -> PageKey:
    """A listing cursor's key (see services.common.paging)."""
    decided_at, ident = instant_and_uuid(parts)
    return PageKey(decided_at=decided_at, id=ident)


def outcome_filter(word: str | None) -> str | None:
    """A listing's outcome filter: an outcome word, "pending", or none."""
    if not word:
        return None
    if word == PENDING or word in {o.value for o in Outcome}:
        return word
    allowed = ", ".join([*(o.value for o in Outcome), PENDING])
    raise InvalidDecision("outcome", f"must be one of {allowed}, got {word!r}")


def decided_range(decided_from: datetime | None, decided_to: datetime | None) -> None:
    """A listing's time filter: from inclusive, to exclusive; an empty span is a mistake."""
    if decided_from is not None and decided_to is not None and decided_to <= decided_from:
        raise InvalidDecision("decided_to", "must be later than decided_from")


def detail_precedents(requested: int | None) -> int:
    """How many precedents a decision's detail carries: unset means 5, 0 means none."""
    if requested is None:
        return DEFAULT_DETAIL_PRECEDENTS
    if not 0 <= requested <= rules.MAX_K:
        raise InvalidDecision("precedents", f"must be between 0 and {rules.MAX_K}, got {requested}")
    return requested


@dataclass(frozen=True, slots=True)
class SimilarQuery:
    decision_type: str
    k: int
    # Exactly one of the two: the caller's own vector, or facts to embed.
    embedding: tuple[float, ...] | None
    context: Mapping[str, Any] | None


def similar_query(
    *, decision_type: object, k: object, embedding: Sequence[float], context: object, dimension: int
) -> SimilarQuery:
    """Validate a precedent search with the same rules a record obeys.

    A query is compared with stored decisions, so its type, facts and vector
    must be ones a decision could have: a type spelled differently would
    silently match nothing, a vector of another size cannot be compared.
    """
    checked_type = rules.checked_decision_type(decision_type)
    checked_k = rules.clamp_k(k)
    vector = _query_vector(embedding, dimension)
    if vector is not None:
        return SimilarQuery(checked_type, checked_k, vector, None)
    if context is None:
        raise InvalidDecision("context", "context or embedding is required")
    return SimilarQuery(checked_type, checked_k, None, rules.checked_context(context))


def _query_vector(values: Sequence[float], dimension: int) -> tuple[float, ...] | None:
    # The record path's check (rules) walks the values one by one in Python,
    # which is a third of a search's own time; a query vector comes off the
    # wire as floats already, so C-level sum and any() can judge it whole.
    # A sum is finite exactly when every term is: float32 values cannot
    # overflow a double in 2,000 terms.
    if len(values) == 0:
        return None
    if len(values) != dimension:
        raise InvalidDecision("embedding", f"must have exactly {dimension} dimensions, got {len(values)}")
    vector = tuple(values)
    try:
        finite = math.isfinite(sum(vector))
    except TypeError:
        finite = False
    if not finite:
        raise InvalidDecision("embedding", "must contain only finite numbers")
    if not any(vector):
        raise InvalidDecision("embedding", "must not be all zeros")
    rules.check_magnitude(vector)
    return vector


def plan_search(
    *,
    k: int,
    type_rows: int,
    judged_rows: int,
    exact_rows: int = EXACT_SEARCH_ROWS,
    ef_per_result: float = EF_PER_RESULT,
) -> SearchPlan:
    """Choose exact or graph search for one type, from judged-row counts.

    The graph holds the judged rows of every type, and pgvector 0.6 returns
    at most ef_search of them before the type filter runs. A walk sized for
    k would come back short for a minority type, so the candidate list grows
    with the inverse of the type's share; when that passes pgvector's ceiling
    the type is small enough, in absolute terms, to read exactly.
    """
    if type_rows <= max(exact_rows, k) or judged_rows <= 0:
        return SearchPlan(exact=True, ef_search=EF_SEARCH_FLOOR)
    share = min(1.0, type_rows / judged_rows)
    wanted = math.ceil(ef_per_result * k / share)
    if wanted > EF_SEARCH_MAX:
        return SearchPlan(exact=True, ef_search=EF_SEARCH_FLOOR)
    return SearchPlan(exact=False, ef_search=max(EF_SEARCH_FLOOR, wanted))


def graph_came_short(*, found: int, k: int, type_rows: int) -> bool:
    """Whether a graph walk returned fewer neighbours than the type could give.

    The counts behind a plan are a minute old and the walk is approximate,
    so a short answer is never returned as it is: fewer precedents than
    exist would read as "this rarely happened". It is walked again at
    pgvector's widest, then, if still short, read exactly.
    """
    return found < k and found < type_rows
