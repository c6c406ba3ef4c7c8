"""Episode credit: turning a conversation into routing-grade credit for the
model behind each assistant turn.

Each assistant turn is first classified by how the user answered it (the turn
classifier below). Turns are then grouped into episodes, runs of attempts at
one intent, and every assistant turn gets exactly one credit, weighted by how
its episode ended:

- resolved (the user moved on or left after an answer): the turn that settled
  it is a success; the attempts the user had to correct before it are
  failures at a discount, because the system did recover;
- abandoned (the user gave up): every attempt is a failure, boosted, because
  the whole loop failed the user;
- ambiguous (a repair attempt met by silence): the corrected attempts are
  known failures; the last one is deferred, not guessed, until the
  conversation grows and settles it;
- ongoing (the conversation stops on a correction): the corrected attempts
  are known failures and nothing has resolved them yet.

A credit is emitted once per turn and never twice: the ledger that stores
these keys them on (turn_ref, episode_id), and only a deferred turn's credit
appears later.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from services.common.errors import FieldError


class Role(StrEnum):
    USER = "user"
    ASSISTANT = "assistant"


class Arm(StrEnum):
    CONTROL = "control"
    CANDIDATE = "candidate"


@dataclass(frozen=True, slots=True)
class RolloutArm:
    """The rollout arm an assistant turn answered under: its credit counts
    for that arm as a judged decision's outcome does (DESIGN §9)."""

    rollout_id: uuid.UUID
    arm: Arm


@dataclass(frozen=True, slots=True)
class Turn:
    role: Role
    text: str
    ref: str
    model: str | None = None
    trace_id: str | None = None
    rollout: RolloutArm | None = None


@dataclass(frozen=True, slots=True)
class Conversation:
    conversation_id: str
    turns: tuple[Turn, ...]


class MalformedConversation(FieldError):
    """A conversation payload that cannot be credited; `field` names the culprit."""

    default_code = "MALFORMED_CONVERSATION"


def _optional_text(payload: Mapping[str, Any], key: str, where: str) -> str | None:
    value = payload.get(key)
    if value is not None and not isinstance(value, str):
        raise MalformedConversation(where, f"expected a string, got {type(value).__name__}")
    return value


def _required_text(payload: Mapping[str, Any], key: str, where: str) -> str:
    value = _optional_text(payload, key, where)
    if value is None:
        raise MalformedConversation(where, "is required")
    return value


def _rollout_arm(raw: Any, where: str, role: Role) -> RolloutArm | None:
    """A turn's `{id, arm}`, held to the shape a decision's rollout is held to.

    Whether the rollout exists is not checked: the registry owns it, and a
    credit stamped with a rollout that never existed is counted for nothing.
    """
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise MalformedConversation(where, "expected an object {id, arm}")
    if role is not Role.ASSISTANT:
        # Only an assistant turn is credited; an arm on a user turn would be
        # counted for nothing, which is a client's mistake worth naming.
        raise MalformedConversation(where, "only an assistant turn answers under a rollout arm")
    rollout_id = _required_text(raw, "id", f"{where}.id")
    try:
        parsed = uuid.UUID(rollout_id)
    except ValueError:
        raise MalformedConversation(f"{where}.id", "must be the rollout's UUID") from None
    arm = _required_text(raw, "arm", f"{where}.arm")
    try:
        return RolloutArm(rollout_id=parsed, arm=Arm(arm))
    except ValueError:
        raise MalformedConversation(f"{where}.arm", f"must be one of {', '.join(Arm)}") from None


def parse_conversation(payload: Any) -> Conversation:
    """Validate `{conversation_id, turns: [{role, text, ref, model?, trace_id?, rollout?: {id, arm}}]}`."""
    if not isinstance(payload, Mapping):
        raise MalformedConversation("payload", "expected an object")
    conversation_id = _required_text(payload, "conversation_id", "conversation_id")
    if not conversation_id.strip():
        raise MalformedConversation("conversation_id", "must not be blank")
    raw_turns = payload.get("turns")
    if not isinstance(raw_turns, Sequence) or isinstance(raw_turns, (str, bytes)):
        raise MalformedConversation("turns", "expected a list of turns")
    turns: list[Turn] = []
    seen_refs: set[str] = set()
    for index, raw in enumerate(raw_turns):
        where = f"turns[{index}]"
        if not isinstance(raw, Mapping):
            raise MalformedConversation(where, "expected an object")
        role = _required_text(raw, "role", f"{where}.role")
        if role not in {member.value for member in Role}:
            raise MalformedConversation(f"{where}.role", f"{role!r} is neither 'user' nor 'assistant'")
        ref = _required_text(raw, "ref", f"{where}.ref")
        if not ref.strip():
            raise MalformedConversation(f"{where}.ref", "must not be blank")
        # A ref keys the credit ledger; two turns sharing one would let a
        # later turn's credit pass for the earlier one's.
        if ref in seen_refs:
            raise MalformedConversation(f"{where}.ref", f"{ref!r} is used by an earlier turn")
        seen_refs.add(ref)
        turns.append(
            Turn(
                role=Role(role),
                text=_required_text(raw, "text", f"{where}.text"),
                ref=ref,
                model=_optional_text(raw, "model", f"{where}.model"),
                trace_id=_optional_text(raw, "trace_id", f"{where}.trace_id"),
                rollout=_rollout_arm(raw.get("rollout"), f"{where}.rollout", Role(role)),
            )
        )
    return Conversation(conversation_id=conversation_id, turns=tuple(turns))


# ─── The turn classifier ─────────────────────────────────────────────────────


class TurnOutcome(StrEnum):
    """What the user's next turn says about an assistant turn."""

    # A new request or an acknowledgement: the user got something and moved on.
    ADVANCE = "advance"
    # No reply after a first attempt: the user left, apparently served.
    CLEAN_EXIT = "clean_exit"
    # An explicit abandonment ("forget it").
    FRUSTRATED_EXIT = "frustrated_exit"
    # No reply after a repair attempt: fixed, or given up on? Unknowable.
    AMBIGUOUS_EXIT = "ambiguous_exit"
    # A repair ("no, that's wrong"): the user is circling on the same intent.
    CIRCLE = "circle"
    # A change of subject straight after a correction, with no sign that the
    # correction worked: the intent was dropped, not served.
    DRIFT_EXIT = "drift_exit"


# Lexical evidence is only as strong as the phrase it matched. An explicit
# repair marker is strong; a silent move to a new request is weaker than an
# explicit thank-you; silence is weaker still.
CIRCLE_CONFIDENCE = 0.85
ABANDONMENT_CONFIDENCE = 0.9
ACKNOWLEDGED_CONFIDENCE = 0.9
ADVANCE_CONFIDENCE = 0.7
CLEAN_EXIT_CONFIDENCE = 0.6
AMBIGUOUS_EXIT_CONFIDENCE = 0.5
# A pivot is our inference from vocabulary, not the user's verdict, so it is
# the weakest evidence we act on.
DRIFT_CONFIDENCE = 0.5

# Share of the pivot candidate's content words that must echo the episode for
# it to count as the same intent. One shared word in five: low, because a
# false pivot debits an answer that may have worked.
SAME_INTENT_THRESHOLD = 0.2


@dataclass(frozen=True, slots=True)
class AssistantTurnOutcome:
    turn_ref: str
    model: str | None
    trace_id: str | None
    outcome: TurnOutcome
    confidence: float
    rollout: RolloutArm | None = None


def _phrases(*phrases: str) -> re.Pattern[str]:
    # Whole words only ("no" must not fire inside "now"); the apostrophe is
    # optional because users type "thats wrong" as often as "that's wrong".
    alternatives = (r"\s+".join(re.escape(word).replace("'", "'?") for word in phrase.split()) for phrase in phrases)
    return re.compile(r"(?<![\w'])(?:" + "|".join(alternatives) + r")(?![\w'])")


_ABANDONMENT = _phrases(
    "forget it",
    "forget about it",
    "never mind",
    "nevermind",
    "i give up",
    "giving up",
    "this is useless",
    "that's useless",
    "you're useless",
    "you are useless",
    "waste of time",
    "pointless",
    "hopeless",
    "i'll do it myself",
    "i will do it myself",
    "not worth it",
)

# Words that abandon the intent only when they stand alone as a clause
# ("forget it, useless"). Matched anywhere, "useless" would fire on "remove
# the useless imports", which is a request, not a verdict.
_BARE_ABANDONMENT = frozenset({"useless", "give up", "whatever"})

_REPAIR = _phrases(
    "that's wrong",
    "that is wrong",
    "still wrong",
    "wrong again",
    "not what i asked",
    "not what i meant",
    "not what i wanted",
    "that's not it",
    "not right",
    "not quite",
    "not exactly",
    "not good",
    "incorrect",
    "you misunderstood",
    "didn't work",
    "did not work",
    "doesn't work",
    "does not work",
    "not working",
    "still failing",
    "still fails",
    "still broken",
    "still not",
    "still doesn't",
    "still the same",
    "same error",
    "that failed",
    "try again",
)

# A reply that opens with "no" is a correction, except for the polite forms
# that open with it too.
_LEADING_NO = re.compile(
    r"^(?:no|nope|nah)(?![\w'])(?![\s,.!]*(?:problem|worries|worry|rush|thanks|thank\s+you)(?![\w']))"
)

_ACKNOWLEDGEMENT = _phrases(
    "thanks",
    "thank you",
    "thx",
    "perfect",
    "awesome",
    "excellent",
    "brilliant",
    "got it",
    "that did it",
    "that's it",
    "looks good",
    "lgtm",
    "it works",
    "that works",
    "works now",
    "it worked",
    "that worked",
    "fixed it",
    "solved it",
)

# Short words that acknowledge only when they open the reply: "great, now the
# tests" thanks us, "a good name for the flag" does not.
_LEADING_ACKNOWLEDGEMENT = re.compile(r"^(?:ok|okay|great|good|nice|cool|works|fixed|solved|yes|yep)(?![\w'])")


def _normalise(text: str) -> str:
    text = text.lower().replace("\u2019", "'").replace("\u2018", "'")
    return " ".join(text.split())


def _clauses(text: str) -> set[str]:
    return {clause.strip() for clause in re.split(r"[,.;:!?]+", text) if clause.strip()}


def _abandons(text: str) -> bool:
    return bool(_ABANDONMENT.search(text)) or not _BARE_ABANDONMENT.isdisjoint(_clauses(text))


def _repairs(text: str) -> bool:
    return bool(_LEADING_NO.search(text) or _REPAIR.search(text))


def _acknowledges(text: str) -> bool:
    return bool(_ACKNOWLEDGEMENT.search(text) or _LEADING_ACKNOWLEDGEMENT.search(text))


# Function words and conversational filler: sharing them says nothing about
# sharing an intent.
_STOPWORDS = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "all",
        "also",
        "am",
        "an",
        "and",
        "another",
        "any",
        "are",
        "as",
        "ask",
        "asked",
        "at",
        "be",
        "been",
        "before",
        "being",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "done",
        "each",
        "else",
        "for",
        "from",
        "get",
        "got",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "him",
        "his",
        "how",
        "i",
        "if",
        "in",
        "instead",
        "into",
        "is",
        "it",
        "its",
        "just",
        "let",
        "lets",
        "like",
        "make",
        "me",
        "meant",
        "mean",
        "might",
        "more",
        "most",
        "much",
        "must",
        "my",
        "need",
        "new",
        "next",
        "no",
        "not",
        "now",
        "of",
        "ok",
        "okay",
        "on",
        "once",
        "one",
        "only",
        "or",
        "other",
        "our",
        "out",
        "over",
        "please",
        "question",
        "really",
        "said",
        "say",
        "she",
        "should",
        "so",
        "some",
        "something",
        "still",
        "such",
        "than",
        "thank",
        "thanks",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "thing",
        "things",
        "this",
        "those",
        "to",
        "too",
        "try",
        "under",
        "up",
        "us",
        "use",
        "very",
        "want",
        "was",
        "way",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "why",
        "will",
        "with",
        "would",
        "yes",
        "yet",
        "you",
        "your",
    ]
)


def content_words(text: str) -> frozenset[str]:
    """The words of `text` that carry its topic, crudely singularised."""
    words = set()
    for token in re.findall(r"[a-z0-9]+", _normalise(text).replace("'", "")):
        if len(token) < 3 or token in _STOPWORDS:
            continue
        # "tests" and "test" are one topic. Double-s endings ("class") are
        # left alone, or the fold would invent words.
        plural = len(token) > 3 and token.endswith("s") and not token.endswith("ss")
        words.add(token[:-1] if plural else token)
    return frozenset(words)


IntentSimilarity = Callable[[str, Sequence[str]], float]


def content_word_overlap(reply: str, earlier: Sequence[str]) -> float:
    """Share of `reply`'s content words already used in `earlier` turns, 0..1.

    A reply with no content words raises no new topic, so it cannot be a pivot
    and scores 1. Replaceable: an embedding similarity drops in here.
    """
    words = content_words(reply)
    if not words:
        return 1.0
    seen = frozenset().union(*(content_words(text) for text in earlier))
    return len(words & seen) / len(words)


def _reaction(
    reply: str | None,
    *,
    repair_attempt: bool,
    episode_requests: Sequence[str],
    similarity: IntentSimilarity,
    same_intent_threshold: float,
) -> tuple[TurnOutcome, float]:
    if reply is None:
        if repair_attempt:
            return TurnOutcome.AMBIGUOUS_EXIT, AMBIGUOUS_EXIT_CONFIDENCE
        return TurnOutcome.CLEAN_EXIT, CLEAN_EXIT_CONFIDENCE
    text = _normalise(reply)
    # Abandonment first: "no, forget it" gives up, it does not ask again.
    if _abandons(text):
        return TurnOutcome.FRUSTRATED_EXIT, ABANDONMENT_CONFIDENCE
    if _repairs(text):
        return TurnOutcome.CIRCLE, CIRCLE_CONFIDENCE
    if _acknowledges(text):
        return TurnOutcome.ADVANCE, ACKNOWLEDGED_CONFIDENCE
    if repair_attempt and similarity(reply, episode_requests) < same_intent_threshold:
        # Topic drift after defeat: the user was correcting us, then changed
        # the subject without a word of thanks. Reading that as an advance
        # would credit the last attempt with a recovery that never happened,
        # and reward whichever model happened to precede a change of subject.
        return TurnOutcome.DRIFT_EXIT, DRIFT_CONFIDENCE
    return TurnOutcome.ADVANCE, ADVANCE_CONFIDENCE


def classify_turns(
    turns: Sequence[Turn],
    *,
    similarity: IntentSimilarity = content_word_overlap,
    same_intent_threshold: float = SAME_INTENT_THRESHOLD,
) -> tuple[AssistantTurnOutcome, ...]:
    """Classify every prompted assistant turn by the user's next turn, in order.

    An assistant turn before the first user turn (a greeting) answers no
    request, so it is not an attempt at anything and gets no outcome.
    """
    outcomes: list[AssistantTurnOutcome] = []
    prompt_index: int | None = None
    episode_requests: list[str] = []
    episode_prompts: set[int] = set()
    previous: TurnOutcome | None = None
    for index, turn in enumerate(turns):
        if turn.role is Role.USER:
            prompt_index = index
            continue
        if prompt_index is None:
            continue
        repair_attempt = previous is TurnOutcome.CIRCLE
        if not repair_attempt:
            episode_requests, episode_prompts = [], set()
        if prompt_index not in episode_prompts:
            episode_prompts.add(prompt_index)
            episode_requests.append(turns[prompt_index].text)
        reply = next((later.text for later in turns[index + 1 :] if later.role is Role.USER), None)
        outcome, confidence = _reaction(
            reply,
            repair_attempt=repair_attempt,
            episode_requests=tuple(episode_requests),
            similarity=similarity,
            same_intent_threshold=same_intent_threshold,
        )
        outcomes.append(
            AssistantTurnOutcome(
                turn_ref=turn.ref,
                model=turn.model,
                trace_id=turn.trace_id,
                outcome=outcome,
                confidence=confidence,
                rollout=turn.rollout,
            )
        )
        previous = outcome
    return tuple(outcomes)


# ─── Episode credit ──────────────────────────────────────────────────────────


class Credit(StrEnum):
    SUCCESS = "success"
    FAILURE = "failure"


class Resolution(StrEnum):
    """How the episode a credited turn belonged to ended."""

    RESOLVED = "resolved"
    ABANDONED = "abandoned"
    AMBIGUOUS = "ambiguous"
    ONGOING = "ongoing"


# A failure the system recovered from cost the user less.
RECOVERED_DISCOUNT = 0.7
# A failure in a loop the user walked away from cost them more.
ABANDONED_BOOST = 1.15


@dataclass(frozen=True, slots=True)
class TurnCredit:
    conversation_id: str
    turn_ref: str
    model: str | None
    trace_id: str | None
    credit: Credit
    # An ordinal weight in 0..1 modulated by the episode, not a count.
    confidence: float
    # Position of the episode within its conversation, from 0. Stable as the
    # conversation grows, so (turn_ref, episode_id) can key the ledger.
    episode_id: int
    resolution: Resolution
    rollout: RolloutArm | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "turn_ref": self.turn_ref,
            "model": self.model,
            "trace_id": self.trace_id,
            "credit": self.credit.value,
            "confidence": self.confidence,
            "episode_id": self.episode_id,
            "resolution": self.resolution.value,
        }


@dataclass(frozen=True, slots=True)
class DeferredTurn:
    """An assistant turn whose credit waits for the conversation to settle it."""

    conversation_id: str
    turn_ref: str
    model: str | None
    trace_id: str | None
    episode_id: int
    rollout: RolloutArm | None = None


@dataclass(frozen=True, slots=True)
class CreditAssignment:
    credits: tuple[TurnCredit, ...]
    deferred: tuple[DeferredTurn, ...]


# How an episode ended, by the outcome of its last attempt. A circle is last
# only in an episode nothing has ended yet.
RESOLUTION_BY_TERMINAL: Mapping[TurnOutcome, Resolution] = {
    TurnOutcome.ADVANCE: Resolution.RESOLVED,
    TurnOutcome.CLEAN_EXIT: Resolution.RESOLVED,
    TurnOutcome.FRUSTRATED_EXIT: Resolution.ABANDONED,
    TurnOutcome.DRIFT_EXIT: Resolution.ABANDONED,
    TurnOutcome.AMBIGUOUS_EXIT: Resolution.AMBIGUOUS,
    TurnOutcome.CIRCLE: Resolution.ONGOING,
}


def _close_episode(
    episode: Sequence[AssistantTurnOutcome],
    *,
    conversation_id: str,
    episode_id: int,
    credits: list[TurnCredit],
    deferred: list[DeferredTurn],
) -> None:
    terminal = episode[-1].outcome
    resolution = RESOLUTION_BY_TERMINAL[terminal]
    last = len(episode) - 1
    for position, attempt in enumerate(episode):
        is_terminal = position == last
        if resolution is Resolution.RESOLVED:
            if is_terminal:
                credit, confidence = Credit.SUCCESS, attempt.confidence
            else:
                credit, confidence = Credit.FAILURE, attempt.confidence * RECOVERED_DISCOUNT
        elif resolution is Resolution.ABANDONED and terminal is TurnOutcome.FRUSTRATED_EXIT:
            credit, confidence = Credit.FAILURE, min(attempt.confidence * ABANDONED_BOOST, 1.0)
        elif resolution is Resolution.ABANDONED:
            # Abandoned by drift: the boost stands for the user's own verdict
            # that the loop failed them, and a pivot gives no such verdict.
            # The corrected attempts keep their weight; the last attempt,
            # which may simply have worked, carries the drift's low weight.
            credit, confidence = Credit.FAILURE, attempt.confidence
        elif resolution is Resolution.AMBIGUOUS and is_terminal:
            deferred.append(
                DeferredTurn(
                    conversation_id=conversation_id,
                    turn_ref=attempt.turn_ref,
                    model=attempt.model,
                    trace_id=attempt.trace_id,
                    episode_id=episode_id,
                    rollout=attempt.rollout,
                )
            )
            continue
        else:
            credit, confidence = Credit.FAILURE, attempt.confidence
        credits.append(
            TurnCredit(
                conversation_id=conversation_id,
                turn_ref=attempt.turn_ref,
                model=attempt.model,
                trace_id=attempt.trace_id,
                credit=credit,
                confidence=confidence,
                episode_id=episode_id,
                resolution=resolution,
                rollout=attempt.rollout,
            )
        )


def assign_credit_from_outcomes(outcomes: Sequence[AssistantTurnOutcome], *, conversation_id: str) -> CreditAssignment:
    """Group chronological turn outcomes into episodes and credit each turn.

    Every outcome but a circle ends its episode; a circle means the user is
    still working on the same intent.
    """
    credits: list[TurnCredit] = []
    deferred: list[DeferredTurn] = []
    episode_id = 0
    start = 0
    for index, attempt in enumerate(outcomes):
        if attempt.outcome is not TurnOutcome.CIRCLE:
            _close_episode(
                outcomes[start : index + 1],
                conversation_id=conversation_id,
                episode_id=episode_id,
                credits=credits,
                deferred=deferred,
            )
            episode_id += 1
            start = index + 1
    if start < len(outcomes):
        _close_episode(
            outcomes[start:],
            conversation_id=conversation_id,
            episode_id=episode_id,
            credits=credits,
            deferred=deferred,
        )
    return CreditAssignment(credits=tuple(credits), deferred=tuple(deferred))


def assign_credit(
    conversation: Conversation,
    *,
    similarity: IntentSimilarity = content_word_overlap,
    same_intent_threshold: float = SAME_INTENT_THRESHOLD,
) -> CreditAssignment:
    """Classify a conversation's turns and credit every settled assistant turn."""
    outcomes = classify_turns(conversation.turns, similarity=similarity, same_intent_threshold=same_intent_threshold)
    return assign_credit_from_outcomes(outcomes, conversation_id=conversation.conversation_id)


# ─── Metrics ─────────────────────────────────────────────────────────────────


@dataclass(frozen=True, slots=True)
class ConversationMetrics:
    """Outcome-denominated scoreboard: fewer turns to an outcome is better,
    the opposite of an engagement metric."""

    episodes: int = 0
    resolved: int = 0
    abandoned: int = 0
    ambiguous: int = 0
    ongoing: int = 0
    # Resolved episodes that took a single attempt.
    first_turn_resolutions: int = 0
    # first_turn_resolutions / resolved. Higher is better.
    first_turn_resolution_rate: float = 0.0
    # Mean attempts per resolved episode, at least 1. Lower is better.
    avg_turns_to_resolution: float = 0.0
    # abandoned / episodes. Lower is better.
    churn_rate: float = 0.0
    # Deferred turns still waiting for a verdict, as counted by the caller.
    pending: int = 0


def conversation_metrics(credits: Iterable[TurnCredit], *, pending: int) -> ConversationMetrics:
    """Aggregate credits (of one or many conversations) into the scoreboard.

    `pending` must come from whoever holds the deferred turns. Credits alone
    cannot show them: an episode whose only turn is deferred emits no credit
    at all, so without this count a model that leaves more turns ambiguous
    would look cleaner, not worse.
    """
    if pending < 0:
        raise ValueError("pending must not be negative")
    episodes: dict[tuple[str, int], tuple[int, Resolution]] = {}
    for credit in credits:
        key = (credit.conversation_id, credit.episode_id)
        attempts, _ = episodes.get(key, (0, credit.resolution))
        episodes[key] = (attempts + 1, credit.resolution)

    counts = dict.fromkeys(Resolution, 0)
    resolved_attempts = 0
    first_turn = 0
    for attempts, resolution in episodes.values():
        counts[resolution] += 1
        if resolution is Resolution.RESOLVED:
            resolved_attempts += attempts
            if attempts == 1:
                first_turn += 1
    resolved = counts[Resolution.RESOLVED]
    return ConversationMetrics(
        episodes=len(episodes),
        resolved=resolved,
        abandoned=counts[Resolution.ABANDONED],
        ambiguous=counts[Resolution.AMBIGUOUS],
        ongoing=counts[Resolution.ONGOING],
        first_turn_resolutions=first_turn,
        first_turn_resolution_rate=first_turn / resolved if resolved else 0.0,
        avg_turns_to_resolution=resolved_attempts / resolved if resolved else 0.0,
        churn_rate=counts[Resolution.ABANDONED] / len(episodes) if episodes else 0.0,
        pending=pending,
    )
