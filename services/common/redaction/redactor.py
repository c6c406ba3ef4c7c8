"""Personal data replaced before anything reaches the model, a log or a table.

The playground runs real read tools against live data and sends what they
return to a third-party model; the consumers and the gateway show pieces of
what engines and exporters send in logs, stored rejections and error
answers. A name or phone number that left cannot be recalled, while a value
hidden by mistake costs one detail. Every choice below leans toward masking
for that reason.

One Redactor serves one playground run, or one preview. It walks any JSON
value, keys and values alike, at any depth, numbers as well as strings, and
applies:
- key rules: a field whose key names a person or a contact point has its
  whole value replaced, nested objects included;
- text rules: e-mails, phones, identifiers and names are replaced wherever
  they appear in a string, a key or a number;
- exact coordinates are rounded to the zone (two decimals, about a
  kilometre), not removed: dispatch needs the area, not the door.

Text is matched as it reads, not as it is encoded (normalised.py): full-width
or Devanagari digits, zero-width and no-break spaces, "[at]" for "@" and
look-alike letters of other scripts are read as the plain text they show,
and the placeholder replaces exactly the characters that were written.

A replaced value becomes a placeholder that is stable within the run:
"+91 98450 12345" and "9845012345" are both <phone#1>, a second number is
<phone#2>, so the model can tell two riders apart without knowing who they
are. Placeholders pass through untouched, so redacting twice changes
nothing more.
"""

from __future__ import annotations

import functools
import json
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, TypeAlias

from services.common.redaction.normalised import normalise
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
from services.common.redaction.skeleton import skeleton

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
# A quoted key and its quoted or numeric value, in JSON or a repr: "k": "v", 'k': 7.
_QUOTED_FIELD = re.compile(
    r"""(?P<q>["'])(?P<key>(?:(?!(?P=q))[^\\\n]|\\.){1,100})(?P=q)\s*:\s*"""
    r"""(?:(?P<vq>["'])(?P<text>(?:(?!(?P=vq))[^\\\n]|\\.)*)(?P=vq)|(?P<number>-?\d[\d.eE+-]*))"""
)

# A stretch of the read text: start, end, and what replaces it (None: not
# yet replaced, so later rules still read it).
_Piece: TypeAlias = tuple[int, int, str | None]
# What one rule found in a stretch: start, end, replacement.
_Found: TypeAlias = tuple[int, int, str]
_Pass: TypeAlias = Callable[[str], list[_Found]]


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
        self._texts: dict[tuple[str, bool], tuple[str, tuple[str, ...]]] = {}

    def report(self) -> dict[str, int]:
        """How many values of each kind were replaced or rounded so far."""
        return dict(sorted(Counter(self._replaced).items()))

    def value(self, value: Any) -> JsonValue:
        """A redacted copy of JSON-like data; the input is left as it is."""
        return self._value(value, located=False)

    def text(self, text: str, *, quoted_fields: bool = False) -> str:
        """A redacted copy of one text.

        quoted_fields: the text may be a JSON document or a repr, whole or
        cut short ("{'customer_phone': '+91 …"), and a quoted value under a
        personal key is replaced whole, as the key rules replace a field.
        """
        if not text:
            return text
        known = self._texts.get((text, quoted_fields))
        if known is not None:
            self._replaced += known[1]
            return known[0]
        mark = len(self._replaced)
        redacted = self._redact_text(text, quoted_fields)
        self._texts[(text, quoted_fields)] = (redacted, tuple(self._replaced[mark:]))
        return redacted

    def _redact_text(self, text: str, quoted_fields: bool) -> str:
        # The rules read the normalised text; each replacement is made in the
        # original, over exactly the characters its match stands for.
        normalised = normalise(text)
        read = normalised.text
        # Each rule sees only text no earlier rule replaced: a placeholder is
        # never matched again, and never half-matched across its edge.
        pieces: list[_Piece] = []
        start = 0
        for found in PLACEHOLDER.finditer(read):
            pieces += [(start, found.start(), None), (found.start(), found.end(), found.group())]
            start = found.end()
        pieces.append((start, len(read), None))
        digits = sum(map(str.isdigit, read))
        passes = [
            self._rule_pass(rule) for rule in self._rules.text_rules if digits >= rule.min_digits and rule.needs in read
        ]
        if digits >= 5 and "." in read:
            # An exact coordinate has four decimals and a whole part.
            passes[:0] = [*(self._pairs(pattern) for pattern in COORDINATE_PAIRS), self._labelled_coordinates]
        if quoted_fields and ":" in read:
            passes.insert(0, self._quoted_fields)
        passes.append(self._names)
        for apply in passes:
            next_pieces: list[_Piece] = []
            for begin, end, replacement in pieces:
                if replacement is not None or begin == end:
                    next_pieces.append((begin, end, replacement))
                    continue
                position = begin
                for found_start, found_end, replaced_by in apply(read[begin:end]):
                    if found_start > position - begin:
                        next_pieces.append((position, begin + found_start, None))
                    next_pieces.append((begin + found_start, begin + found_end, replaced_by))
                    position = begin + found_end
                if position < end:
                    next_pieces.append((position, end, None))
            pieces = next_pieces
        written: list[str] = []
        position = 0
        for begin, end, replacement in pieces:
            if replacement is None:
                continue
            original_start, original_end = normalised.original(begin, end)
            # One original character can stand for two read ones (a ligature,
            # an escape): a replacement never writes it twice.
            original_start = max(original_start, position)
            written += [text[position:original_start], replacement]
            position = max(original_end, position)
        written.append(text[position:])
        return "".join(written)

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
            words = key_words(_latin(normalise(key).text))
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

    def _rule_pass(self, rule: TextRule) -> _Pass:
        def apply(text: str) -> list[_Found]:
            found_all: list[_Found] = []
            search = 0
            while search <= len(text) and (found := rule.pattern.search(text, search)) is not None:
                matched = found.group()
                if not matched or (rule.check is not None and not rule.check(matched)):
                    # Refused: try again one character on, so a failed
                    # candidate never hides a real match that overlaps it.
                    search = found.start() + 1
                    continue
                found_all.append((found.start(), found.end(), self._placeholder(rule.kind, rule.canonical(matched))))
                search = found.end()
            return found_all

        return apply

    def _pairs(self, pattern: re.Pattern[str]) -> _Pass:
        def apply(text: str) -> list[_Found]:
            rounded: list[_Found] = []
            for found in pattern.finditer(text):
                first, second = float(found.group(1)), float(found.group(3))
                if (abs(first) <= 90 and abs(second) <= 180) or (abs(first) <= 180 and abs(second) <= 90):
                    rounded += [self._rounded(found, 1), self._rounded(found, 3)]
            return rounded

        return apply

    def _labelled_coordinates(self, text: str) -> list[_Found]:
        return [self._rounded(found, 2) for found in LABELLED_COORDINATE.finditer(text)]

    def _rounded(self, found: re.Match[str], group: int) -> _Found:
        return found.start(group), found.end(group), self._round_text(found.group(group))

    def _quoted_fields(self, text: str) -> list[_Found]:
        replaced: list[_Found] = []
        for found in _QUOTED_FIELD.finditer(text):
            kind, _ = self._key_rule(found.group("key"))
            value = found.group("text") if found.group("text") is not None else found.group("number")
            if kind is None or not value or PLACEHOLDER.fullmatch(value):
                continue
            where = "text" if found.group("text") is not None else "number"
            replaced.append((found.start(where), found.end(where), self._placeholder(kind, _canonical(kind, value))))
        return replaced

    def _names(self, text: str) -> list[_Found]:
        tokens = list(WORD.finditer(text))
        if not tokens:
            return []
        facts = [_word_facts(token.group()) for token in tokens]
        keys = [key for key, _ in facts]
        named = [listed for _, listed in facts]
        # Whoever follows an honorific is named, listed or not: up to three
        # words written like it ("Mr. Tanmay Bhide", "SHRI DINKAR POL"), so
        # "Shri Dinkar Pol DEL-HUB-09" keeps its hub.
        for index, token in enumerate(tokens[:-1]):
            honorific = token.group()
            if keys[index] not in HONORIFICS or not honorific[0].isupper():
                continue
            styled = str.isupper if honorific.isupper() else str.istitle
            for follower in range(index + 1, min(index + 4, len(tokens))):
                gap = text[tokens[follower - 1].end() : tokens[follower].start()]
                spaced = _HONORIFIC_GAP.fullmatch(gap) if follower == index + 1 else _SPACES.fullmatch(gap)
                if not spaced or not styled(tokens[follower].group()):
                    break
                named[follower] = True
        found_names: list[_Found] = []
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
                and keys[following] in PLACE_WORDS
                and _SPACES.fullmatch(text[tokens[last].end() : tokens[following].start()])
            ):
                end_of_run -= 1
            if end_of_run >= index:
                begin, end = tokens[index].start(), _name_end(tokens[end_of_run])
                canonical = " ".join(_word_key(word) for word in text[begin:end].split())
                found_names.append((begin, end, self._placeholder("person", canonical)))
            index = last + 1
        return found_names

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
    written = normalise(str(value)).text
    if kind == "phone":
        return phone_canonical(written)
    return " ".join(_latin(written).casefold().split())


def _latin(text: str) -> str:
    """The text as the Latin letters it is drawn with, accents dropped."""
    if text.isascii():
        return text
    return "".join(char for char in skeleton(text) if not unicodedata.combining(char))


def _word_key(word: str) -> str:
    """How a word is compared with the lists: "Meera" with a Cyrillic capital Em is "meera"."""
    return _latin(word).casefold()


@functools.lru_cache(maxsize=16384)
def _word_facts(word: str) -> tuple[str, bool]:
    """A word's key, and whether it is a listed name; text repeats its words."""
    key = _word_key(word)
    # A lower-case letter of another script can look like a Latin small
    # capital (Cyrillic em in "meera"); its capital is the Latin look-alike.
    candidates = (key,) if word.isascii() else (key, _latin(word.upper()).casefold())
    for folded in candidates:
        bare = folded[:-2] if folded.endswith(("'s", "’s")) else folded
        if bare.replace("'", "").replace("’", "") in NAMES:
            return key, True
    return key, False


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
