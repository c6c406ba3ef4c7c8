"""The text the patterns read, and where each of its characters was written.

A phone written in full-width or Devanagari digits, with a zero-width space
or a no-break space between its groups, an address with a full-width at sign or "[at]"
in it, is the same phone and the same address to whoever reads it. The
patterns are written for plain text, so every text is first brought to
one writing:
- backslash escapes (\\u200b, \\xa0, \\n) as a log or a repr quotes them
  are read as the characters they stand for;
- format characters (zero-width spaces and joiners, bidi controls, soft
  hyphens), variation selectors and control characters are dropped;
- compatibility forms are folded (NFKC): full-width letters and digits, a
  no-break space as a space, ligatures, circled and styled letters;
- every script's decimal digits become ASCII digits;
- combining marks are dropped, each counted as part of its letter;
- an e-mail address spelled out ("meera.iyer [at] example [dot] com",
  "meera at example.com") is written with "@" and ".".

Each character of the result keeps the span of the original it came from,
so a match is replaced in the original, exactly where it was written. Plain
ASCII text, the common case, is its own result and costs one scan.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass

# The text in runs of printable ASCII, which stand for themselves, and
# everything else one by one: the escapes a JSON document, a Python repr or
# a log line writes for a character it will not show as itself, and the
# characters outside plain ASCII.
_TOKEN = re.compile(
    r"(?P<plain>[\t\n\r -\[\]-~]+)"
    r"|(?P<escape>\\(?:x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|[ntr]))"
    r"|(?P<other>.)",
    re.DOTALL,
)
_ESCAPED_CONTROLS = {"n": "\n", "t": "\t", "r": "\r"}
# ASCII a pattern could be fooled by: a backslash (an escape) or a control
# character other than whitespace.
_ASCII_NOISE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\\]")
# Invisible characters the Unicode standard says to ignore that are not
# format characters: the combining grapheme joiner, Hangul fillers,
# Mongolian and standard variation selectors, Khmer inherent vowels.
_IGNORABLE = frozenset(
    (0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x3164, 0xFFA0, *range(0x180B, 0x1810), *range(0xFE00, 0xFE10))
) | frozenset(range(0xE0100, 0xE01F0))

# An address spelled out. Its local part and domain are runs without dots,
# joined by a dot or a spelled dot; "at" needs the spaces or brackets around
# it, and unless bracketed the domain must end in a dotted top-level label,
# so "waited at gate 4" is left alone.
_OPEN_BRACKET = r"[\[({<]"
_CLOSE_BRACKET = r"[\])}>]"
_BRACKETED_AT = rf"\s*{_OPEN_BRACKET}\s*(?:at|@)\s*{_CLOSE_BRACKET}\s*"
_SPACED_AT = r"\s+at\s+|\s*@\s*"
_SPELLED_DOT = rf"\s*{_OPEN_BRACKET}\s*(?:dot|\.)\s*{_CLOSE_BRACKET}\s*|\s+dot\s+"
_DOT = rf"(?:{_SPELLED_DOT}|\.)"
_LOCAL = r"[\w!#$%&'*+/=?^`{|}~-]+"
_LABEL = r"[\w-]+"
_SPELLED_EMAIL = re.compile(
    rf"(?<![\w.!#$%&'*+/=?^`{{|}}~-]){_LOCAL}(?:{_DOT}{_LOCAL})*"
    rf"(?:(?:{_BRACKETED_AT}){_LABEL}(?:{_DOT}{_LABEL})*"
    rf"|(?:{_SPACED_AT}){_LABEL}(?:{_DOT}{_LABEL})*{_DOT}[^\W\d_][\w-]+)",
    re.IGNORECASE,
)
_SPELLED_PART = re.compile(rf"{_BRACKETED_AT}|{_SPELLED_DOT}|\s+at\s+|\s*@\s*", re.IGNORECASE)
# Cheap test before the expression above: text with none of these spells nothing.
_SPELLING_HINT = re.compile(rf"{_OPEN_BRACKET}\s*(?:at|dot|@|\.)\s*{_CLOSE_BRACKET}|\s(?:at|dot)\s|\s@|@\s", re.I)


@dataclass(frozen=True, slots=True)
class Normalised:
    """The text the patterns read; for each of its characters, the start and
    end of what it stands for in the original (None: the original itself)."""

    text: str
    starts: list[int] | None = None
    ends: list[int] | None = None

    def original(self, start: int, end: int) -> tuple[int, int]:
        """Where the characters start:end of the text were written."""
        if self.starts is None or self.ends is None or start >= end:
            return start, end
        return self.starts[start], self.ends[end - 1]


def normalise(text: str) -> Normalised:
    if text.isascii() and _ASCII_NOISE.search(text) is None:
        if _SPELLING_HINT.search(text) is None:
            return Normalised(text)
        return _unspelled(text, list(range(len(text))), list(range(1, len(text) + 1)))
    chars: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    pending: list[tuple[str, int, int]] = []
    for token in _TOKEN.finditer(text):
        start, end = token.span()
        if token.lastgroup != "plain":
            pending.append((_unescaped(token) if token.lastgroup == "escape" else token.group(), start, end))
            continue
        _fold(text, pending, chars, starts, ends)
        pending = []
        # A run of printable ASCII stands for itself: taken whole.
        chars.append(token.group())
        starts.extend(range(start, end))
        ends.extend(range(start + 1, end + 1))
    _fold(text, pending, chars, starts, ends)
    folded = "".join(chars)
    if _SPELLING_HINT.search(folded) is None:
        return Normalised(folded, starts, ends)
    return _unspelled(folded, starts, ends)


def _fold(text: str, decoded: list[tuple[str, int, int]], chars: list[str], starts: list[int], ends: list[int]) -> None:
    """Characters other than plain ASCII, each with its span, folded onto the read text."""
    for char, start, end in _joined(text, decoded):
        for piece in _folded(char):
            if _is_mark(piece):
                # A mark belongs to the letter before it: replacing the
                # letter replaces its accent too.
                if ends:
                    ends[-1] = end
                continue
            chars.append(piece)
            starts.append(start)
            ends.append(end)


def _unescaped(found: re.Match[str]) -> str:
    escape = found.group()
    if escape[1] in _ESCAPED_CONTROLS:
        return _ESCAPED_CONTROLS[escape[1]]
    code = int(escape[2:], 16)
    return chr(code) if code <= 0x10FFFF else escape


def _joined(text: str, decoded: list[tuple[str, int, int]]) -> list[tuple[str, int, int]]:
    r"""Escaped UTF-8 bytes (\xe2\x80\x8b) and UTF-16 pairs (\ud83d\ude00) as one character each."""
    joined: list[tuple[str, int, int]] = []
    index = 0
    while index < len(decoded):
        char, start, end = decoded[index]
        escaped_byte = end - start == 4 and text[start + 1] == "x"
        if escaped_byte and 0xC2 <= ord(char) <= 0xF4:
            width = 2 if ord(char) < 0xE0 else 3 if ord(char) < 0xF0 else 4
            run = decoded[index : index + width]
            if len(run) == width and all(e - s == 4 and text[s + 1] == "x" for _, s, e in run):
                try:
                    joined.append((bytes(ord(c) for c, _, _ in run).decode("utf-8"), start, run[-1][2]))
                except UnicodeDecodeError:
                    pass
                else:
                    index += width
                    continue
        if "\ud800" <= char <= "\udbff" and index + 1 < len(decoded):
            low, _, low_end = decoded[index + 1]
            if "\udc00" <= low <= "\udfff":
                pair = (ord(char) - 0xD800) * 0x400 + (ord(low) - 0xDC00) + 0x10000
                joined.append((chr(pair), start, low_end))
                index += 2
                continue
        joined.append((char, start, end))
        index += 1
    return joined


@functools.lru_cache(maxsize=4096)
def _folded(char: str) -> str:
    """One character as the patterns read it: nothing, or its NFKC form with ASCII digits."""
    if char.isascii():
        return char if char.isprintable() or char.isspace() else ""
    category = unicodedata.category(char)
    if (category in ("Cf", "Cc") and not char.isspace()) or ord(char) in _IGNORABLE:
        return ""
    folded = unicodedata.normalize("NFKC", char)
    return "".join(_ascii_digit(piece) for piece in folded if ord(piece) not in _IGNORABLE)


def _ascii_digit(char: str) -> str:
    if char.isascii():
        return char
    value = unicodedata.decimal(char, None)
    return char if value is None else str(value)


def _is_mark(char: str) -> bool:
    return not char.isascii() and unicodedata.category(char) in ("Mn", "Me")


def _unspelled(text: str, starts: list[int], ends: list[int]) -> Normalised:
    """Spelled-out e-mail addresses written with "@" and "."."""
    chars: list[str] = []
    new_starts: list[int] = []
    new_ends: list[int] = []
    position = 0
    for address in _SPELLED_EMAIL.finditer(text):
        for part in _SPELLED_PART.finditer(text, address.start(), address.end()):
            if part.group() in ("@", "."):
                continue
            chars.append(text[position : part.start()])
            new_starts += starts[position : part.start()]
            new_ends += ends[position : part.start()]
            written = part.group().strip().strip("[](){}<>").strip().casefold()
            chars.append("@" if written in ("at", "@") else ".")
            new_starts.append(starts[part.start()])
            new_ends.append(ends[part.end() - 1])
            position = part.end()
    if position == 0:
        return Normalised(text, starts, ends) if len(starts) != len(text) or _moved(starts) else Normalised(text)
    chars.append(text[position:])
    new_starts += starts[position:]
    new_ends += ends[position:]
    return Normalised("".join(chars), new_starts, new_ends)


def _moved(starts: list[int]) -> bool:
    return any(start != index for index, start in enumerate(starts))
