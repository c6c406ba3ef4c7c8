"""Personal data replaced before anything reaches the model, the trace or the logs.

The playground runs real read tools against live data and sends what they
return to a third-party model. A name or phone number sent there cannot be
recalled, while a value hidden by mistake costs the model one detail. Every
choice below leans toward masking for that reason.

One Redactor serves one run. It walks any JSON value, keys and values alike,
at any depth, numbers as well as strings, and applies:
- key rules: a field whose key names a person or a contact point has its
  whole value replaced, nested objects included;
- text rules: e-mails, phones, identifiers and names are replaced wherever
  they appear in a string, a key or a number;
- exact coordinates are rounded to the zone (two decimals, about a
  kilometre), not removed: dispatch needs the area, not the door.

A replaced value becomes a placeholder that is stable within the run:
"+91 98450 12345" and "9845012345" are both <phone#1>, a second number is
<phone#2>, so the model can tell two riders apart without knowing who they
are. Placeholders pass through untouched, so redacting twice changes
nothing more.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, TypeAlias

from services.common.redaction.patterns import (
    COORDINATE_PAIRS,
    HONORIFICS,
    KEYS_ANYWHERE,
    KEYS_LAST,
    LABELLED_COORDINATE,
    LOCATION_ANYWHERE,
    LOCATION_LAST,
    NAMED_THINGS,
    NAMES,
    PLACE_WORDS,
    TEXT_RULES,
    WORD,
    TextRule,
    phone_canonical,
)

JsonValue: TypeAlias = bool | int | float | str | list["JsonValue"] | dict[str, "JsonValue"] | None

# Two decimal places is about a kilometre: enough for "which part of town",
# not enough to find a door.
COORDINATE_PLACES = 2
# Fewer decimals than this is already a zone, or not a coordinate at all.
_EXACT_PLACES = 4

PLACEHOLDER = re.compile(r"<[a-z][a-z0-9_]*#\d+>")
_KIND = re.compile(r"[a-z][a-z0-9_]*")
_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_KEY_WORD = re.compile(r"[^\W\d_]+")
_DECIMALS_ONLY = re.compile(r"\s*-?\d+\.\d+(?:[,;\s]+-?\d+\.\d+)*\s*")
_DECIMAL = re.compile(r"-?\d+\.\d+")
_SPACES = re.compile(r"\s+")
_HONORIFIC_GAP = re.compile(r"\.?\s+")


@dataclass(frozen=True, slots=True)
class KeyRule:
    words: tuple[str, ...]
    kind: str
    # True: the phrase may stand anywhere in the key; False: only at its end.
    anywhere: bool


@dataclass(frozen=True, slots=True)
class RedactionRules:
    key_rules: tuple[KeyRule, ...]
    text_rules: tuple[TextRule, ...]
    # Configured patterns, which may match anything, short numbers included.
    custom_text: bool = False

    @classmethod
    def build(
        cls, *, extra_keys: Iterable[str] = (), extra_patterns: Mapping[str, str] | None = None
    ) -> RedactionRules:
        """The built-in rules, with configured key words and patterns first.

        An extra key word matches anywhere in a key and names its own kind
        ("guardian" → <guardian#1>); an extra pattern is {kind: regex}.
        """
        keys = []
        for entry in extra_keys:
            words = key_words(entry)
            if not words:
                raise ValueError(f"extra redaction key {entry!r} has no words")
            keys.append(KeyRule(words, "_".join(words), anywhere=True))
        texts = []
        for kind, pattern in (extra_patterns or {}).items():
            if not _KIND.fullmatch(kind):
                raise ValueError(f"redaction kind {kind!r} must be lower-case letters, digits and _")
            try:
                compiled = re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"redaction pattern for {kind} does not compile: {exc}") from None
            texts.append(TextRule(kind, compiled))
        built_in_keys = [KeyRule(tuple(p.split()), kind, anywhere=True) for p, kind in KEYS_ANYWHERE]
        built_in_keys += [KeyRule(tuple(p.split()), kind, anywhere=False) for p, kind in KEYS_LAST]
        return cls(key_rules=(*keys, *built_in_keys), text_rules=(*texts, *TEXT_RULES), custom_text=bool(texts))


DEFAULT_RULES = RedactionRules.build()


def key_words(key: str) -> tuple[str, ...]:
    """A key as lower-case words: riderName, rider_name and RIDER-NAME are all (rider, name)."""
    return tuple(word.casefold() for word in _KEY_WORD.findall(_CAMEL_BOUNDARY.sub(" ", key)))


class Redactor:
    """Redaction for one run: placeholders stay stable across everything it sees."""

    def __init__(self, rules: RedactionRules = DEFAULT_RULES) -> None:
        self._rules = rules
        self._placeholders: dict[tuple[str, str], str] = {}
        self._numbered: Counter[str] = Counter()
        # The kind of every value replaced or rounded, in order.
        self._replaced: list[str] = []
        self._keys: dict[str, tuple[str | None, bool]] = {}
        # Tool results repeat their keys and many values row after row; a
        # text seen before gets the same answer and counts again.
        self._texts: dict[str, tuple[str, tuple[str, ...]]] = {}

    def report(self) -> dict[str, int]:
        """How many values of each kind were replaced or rounded so far."""
        return dict(sorted(Counter(self._replaced).items()))

    def value(self, value: Any) -> JsonValue:
        """A redacted copy of JSON-like data; the input is left as it is."""
        return self._value(value, located=False)

    def text(self, text: str) -> str:
        if not text:
            return text
        known = self._texts.get(text)
        if known is not None:
            self._replaced += known[1]
            return known[0]
        mark = len(self._replaced)
        redacted = self._redact_text(text)
        self._texts[text] = (redacted, tuple(self._replaced[mark:]))
        return redacted

    def _redact_text(self, text: str) -> str:
        # Each rule sees only text no earlier rule replaced: a placeholder is
        # never matched again, and never half-matched across its edge.
        chunks: list[tuple[str, bool]] = []
        start = 0
        for found in PLACEHOLDER.finditer(text):
            chunks += [(text[start : found.start()], False), (found.group(), True)]
            start = found.end()
        chunks.append((text[start:], False))
        digits = sum(map(str.isdigit, text))
        passes = [
            self._rule_pass(rule) for rule in self._rules.text_rules if digits >= rule.min_digits and rule.needs in text
        ]
        if digits >= 5 and "." in text:
            # An exact coordinate has four decimals and a whole part.
            passes.insert(0, self._coordinates)
        passes.append(self._names)
        for apply in passes:
            next_chunks: list[tuple[str, bool]] = []
            for chunk, done in chunks:
                if done or not chunk:
                    next_chunks.append((chunk, done))
                else:
                    next_chunks += apply(chunk)
            chunks = next_chunks
        return "".join(chunk for chunk, _ in chunks)

    # --- walking ---------------------------------------------------------------

    def _value(self, value: Any, *, located: bool) -> JsonValue:
        if isinstance(value, Mapping):
            redacted: dict[str, JsonValue] = {}
            for raw_key, item in value.items():
                key = str(raw_key)
                new_key = self.text(key)
                # A key holding personal data ("ramesh@example.com": {...}),
                # or a placeholder for it, keys a record; it is not a field
                # whose name says what its value holds.
                is_data = new_key != key or PLACEHOLDER.search(key) is not None
                kind, key_located = (None, False) if is_data else self._key_rule(key)
                # Two keys can become one placeholder ("9845012345" and
                # "+91 98450 12345"); both values are kept.
                unique, copy = new_key, 2
                while unique in redacted:
                    unique, copy = f"{new_key} ({copy})", copy + 1
                new_key = unique
                if kind is not None:
                    redacted[new_key] = self._replace(kind, item)
                else:
                    redacted[new_key] = self._value(item, located=located or key_located)
            return redacted
        if isinstance(value, list | tuple):
            if _coordinate_pair(value):
                return [self._round(number) for number in value]
            return [self._value(item, located=located) for item in value]
        if isinstance(value, str):
            if located and _DECIMALS_ONLY.fullmatch(value):
                return _DECIMAL.sub(lambda m: self._round_text(m.group()), value)
            return self.text(value)
        if isinstance(value, bool) or value is None:
            return value
        if isinstance(value, int):
            return self._number(value)
        if isinstance(value, float):
            if located:
                return self._round(value)
            if value.is_integer() and abs(value) < 1e19:
                redacted_number = self._number(int(value))
                return value if isinstance(redacted_number, int) else redacted_number
            return value
        raise TypeError(f"cannot redact a {type(value).__name__}; expected JSON-like data")

    def _number(self, number: int) -> int | str:
        # A phone, Aadhaar or card number stored as a JSON number is the
        # same identifier; it comes back as its placeholder string.
        if -(10**7) < number < 10**7 and not self._rules.custom_text:
            # Seven digits or fewer: no built-in pattern is that short.
            return number
        written = str(number)
        redacted = self.text(written)
        return number if redacted == written else redacted

    def _key_rule(self, key: str) -> tuple[str | None, bool]:
        known = self._keys.get(key)
        if known is None:
            words = key_words(key)
            located = bool(words) and (words[-1] in LOCATION_LAST or not LOCATION_ANYWHERE.isdisjoint(words))
            known = self._keys[key] = (_key_kind(self._rules.key_rules, words), located)
        return known

    def _replace(self, kind: str, value: Any) -> JsonValue:
        """The whole value of a personal field, as one placeholder."""
        if value is None or isinstance(value, bool) or value in ("", {}, []):
            # Nothing personal in an absent value, and "no phone on file" is
            # a fact the model may need.
            return value
        if isinstance(value, str) and PLACEHOLDER.fullmatch(value):
            return value
        if isinstance(value, list | tuple):
            # riders: ["…", "…"] keeps its length and tells the riders apart.
            return [self._replace(kind, item) for item in value]
        return self._placeholder(kind, _canonical(kind, value))

    # --- text passes -----------------------------------------------------------

    def _placeholder(self, kind: str, canonical: str) -> str:
        self._replaced.append(kind)
        known = self._placeholders.get((kind, canonical))
        if known is None:
            self._numbered[kind] += 1
            known = self._placeholders[(kind, canonical)] = f"<{kind}#{self._numbered[kind]}>"
        return known

    def _rule_pass(self, rule: TextRule):
        def apply(text: str) -> list[tuple[str, bool]]:
            pieces: list[tuple[str, bool]] = []
            start = search = 0
            while search <= len(text) and (found := rule.pattern.search(text, search)) is not None:
                matched = found.group()
                if not matched or (rule.check is not None and not rule.check(matched)):
                    # Refused: try again one character on, so a failed
                    # candidate never hides a real match that overlaps it.
                    search = found.start() + 1
                    continue
                pieces += [
                    (text[start : found.start()], False),
                    (self._placeholder(rule.kind, rule.canonical(matched)), True),
                ]
                start = search = found.end()
            pieces.append((text[start:], False))
            return pieces

        return apply

    def _coordinates(self, text: str) -> list[tuple[str, bool]]:
        def pair(found: re.Match[str]) -> str:
            first, second = float(found.group(1)), float(found.group(3))
            if not ((abs(first) <= 90 and abs(second) <= 180) or (abs(first) <= 180 and abs(second) <= 90)):
                return found.group()
            return self._round_text(found.group(1)) + found.group(2) + self._round_text(found.group(3))

        def labelled(found: re.Match[str]) -> str:
            head = found.group()[: found.start(2) - found.start()]
            return head + self._round_text(found.group(2))

        for pattern in COORDINATE_PAIRS:
            text = pattern.sub(pair, text)
        return [(LABELLED_COORDINATE.sub(labelled, text), False)]

    def _names(self, text: str) -> list[tuple[str, bool]]:
        tokens = list(WORD.finditer(text))
        if not tokens:
            return [(text, False)]
        named = [_listed_name(token.group()) for token in tokens]
        # Whoever follows an honorific is named, listed or not: up to three
        # words written like it ("Mr. Tanmay Bhide", "SHRI DINKAR POL"), so
        # "Shri Dinkar Pol DEL-HUB-09" keeps its hub.
        for index, token in enumerate(tokens[:-1]):
            honorific = token.group()
            if honorific.casefold() not in HONORIFICS or not honorific[0].isupper():
                continue
            styled = str.isupper if honorific.isupper() else str.istitle
            for follower in range(index + 1, min(index + 4, len(tokens))):
                gap = text[tokens[follower - 1].end() : tokens[follower].start()]
                spaced = _HONORIFIC_GAP.fullmatch(gap) if follower == index + 1 else _SPACES.fullmatch(gap)
                if not spaced or not styled(tokens[follower].group()):
                    break
                named[follower] = True
        pieces: list[tuple[str, bool]] = []
        start = 0
        index = 0
        while index < len(tokens):
            if not named[index]:
                index += 1
                continue
            last = index
            while (
                last + 1 < len(tokens)
                and named[last + 1]
                and _SPACES.fullmatch(text[tokens[last].end() : tokens[last + 1].start()])
            ):
                last += 1
            following = last + 1
            # The name right before a place word belongs to the place ("Anna
            # Nagar"); any name before it is still a person's.
            end_of_run = last
            if (
                following < len(tokens)
                and tokens[following].group().casefold() in PLACE_WORDS
                and _SPACES.fullmatch(text[tokens[last].end() : tokens[following].start()])
            ):
                end_of_run -= 1
            if end_of_run >= index:
                begin, end = tokens[index].start(), _name_end(tokens[end_of_run])
                canonical = " ".join(text[begin:end].casefold().split())
                pieces += [(text[start:begin], False), (self._placeholder("person", canonical), True)]
                start = end
            index = last + 1
        pieces.append((text[start:], False))
        return pieces

    # --- coordinates ------------------------------------------------------------

    def _round(self, number: Any) -> Any:
        # Whole numbers carry no hidden precision; only fractions are rounded.
        if not isinstance(number, float) or _places(number) <= COORDINATE_PLACES:
            return number
        self._replaced.append("coordinate")
        return round(number, COORDINATE_PLACES)

    def _round_text(self, decimal: str) -> str:
        # Already short enough: left as written, so rounding never adds digits.
        if len(decimal.partition(".")[2]) <= COORDINATE_PLACES:
            return decimal
        self._replaced.append("coordinate")
        return f"{float(decimal):.{COORDINATE_PLACES}f}"


def redact(value: Any, rules: RedactionRules = DEFAULT_RULES) -> JsonValue:
    """A redacted copy of one JSON value, numbered on its own."""
    return Redactor(rules).value(value)


def redact_text(text: str, rules: RedactionRules = DEFAULT_RULES) -> str:
    return Redactor(rules).text(text)


def _key_kind(rules: tuple[KeyRule, ...], words: tuple[str, ...]) -> str | None:
    for rule in rules:
        size = len(rule.words)
        if size > len(words):
            continue
        if rule.anywhere:
            if any(words[i : i + size] == rule.words for i in range(len(words) - size + 1)):
                return rule.kind
        elif words[-size:] == rule.words:
            if rule.words in (("name",), ("names",)) and len(words) > 1 and words[-2] in NAMED_THINGS:
                continue
            return rule.kind
    return None


def _canonical(kind: str, value: Any) -> str:
    if isinstance(value, Mapping | list | tuple):
        return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    written = str(value)
    if kind == "phone":
        return phone_canonical(written)
    return " ".join(written.casefold().split())


def _listed_name(word: str) -> bool:
    folded = word.casefold()
    if folded.endswith(("'s", "’s")):
        folded = folded[:-2]
    return folded.replace("'", "").replace("’", "") in NAMES


def _name_end(token: re.Match[str]) -> int:
    # "Ananya's" loses the name and keeps the possessive.
    return token.end() - 2 if token.group().casefold().endswith(("'s", "’s")) else token.end()


def _places(number: float) -> int:
    exponent = Decimal(repr(number)).as_tuple().exponent
    return -exponent if isinstance(exponent, int) and exponent < 0 else 0


def _coordinate_pair(value: list[Any] | tuple[Any, ...]) -> bool:
    """[lat, lon] or [lon, lat] written exactly, wherever it stands."""
    if len(value) != 2 or not all(isinstance(v, float) for v in value):
        return False
    first, second = value
    in_range = (abs(first) <= 90 and abs(second) <= 180) or (abs(first) <= 180 and abs(second) <= 90)
    return in_range and max(_places(first), _places(second)) >= _EXACT_PLACES
