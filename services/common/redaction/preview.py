"""The one way to show a value from outside: in a log line, a stored row or
an error answer.

Engines and exporters send what they have, and what they have is bookings:
a malformed `facts.booking` carries the customer's phone, a refused span
quotes the text it was refused for. Whatever part of that is shown goes
through the redactor first, then is made printable, then is cut:
- redacted before it is cut, so no value is cut into a fragment the
  patterns no longer know ("+91 984");
- read as JSON when it is a small JSON document, so a field under a
  personal key is replaced whole at any depth; otherwise as text, where a
  quoted field under a personal key ("customer_name": "…", in JSON or a
  repr, whole or cut short) is still replaced whole;
- printable after it is redacted: control characters are escaped, so a log
  line stays one line and Postgres text never holds NUL, and an escape
  never hides a character from the patterns.
"""

from __future__ import annotations

import json

from services.common.redaction.redactor import Redactor

# Enough of a payload to recognise its producer in a log line.
PREVIEW_CHARS = 120
# A JSON document up to this long is read as JSON; a longer one as text, so
# a flood of large bad messages costs a bounded amount of work each.
_PARSED_CHARS = 8 * 1024
# What one personal value can span at most. Text is redacted in a window
# this much longer than what is shown, so a value cut by the window's edge
# lies past the cut.
_LONGEST_VALUE = 256


def preview(value: bytes | str, limit: int | None = PREVIEW_CHARS, *, redactor: Redactor | None = None) -> str:
    """The value redacted, as printable text of at most `limit` characters
    (None: all of it), ending in "…" when cut.

    Bytes are read as UTF-8; a byte that is not is shown as \\xNN. One
    redactor may be shared by the parts of one answer, so a value in its
    message and in its details is one placeholder.
    """
    dropped = False
    if isinstance(value, bytes):
        # A limited preview reads a bounded prefix: a megabyte of poison
        # costs no more to show than a few kilobytes.
        kept = value if limit is None else value[: max(_PARSED_CHARS, 16 * limit) * 4]
        dropped = len(kept) < len(value)
        text = kept.decode("utf-8", "surrogateescape")
    else:
        text = value
    redacted, cut = _redacted(text, limit, redactor or Redactor())
    cut = cut or dropped
    if limit is not None and len(redacted) > limit:
        redacted, cut = redacted[:limit], True
    return _printable(redacted) + ("…" if cut else "")


def _redacted(text: str, limit: int | None, redactor: Redactor) -> tuple[str, bool]:
    """The text redacted, and whether text was left out past what it holds."""
    if len(text) <= _PARSED_CHARS and text.lstrip()[:1] in ("{", "["):
        try:
            return json.dumps(redactor.value(json.loads(text)), ensure_ascii=False), False
        except (ValueError, TypeError, RecursionError):
            # Not JSON after all, or nested past what can be walked: read as text.
            pass
    if limit is None:
        return redactor.text(text, quoted_fields=True), False
    window = max(4 * limit, limit + _LONGEST_VALUE)
    while True:
        redacted = redactor.text(text[:window], quoted_fields=True)
        if window >= len(text):
            return redacted, False
        # Placeholders are shorter than most values: a window that shrank
        # below what is shown plus one value's length is widened.
        if len(redacted) >= limit + _LONGEST_VALUE:
            return redacted, True
        window *= 2


def _printable(text: str) -> str:
    return "".join(char if char.isprintable() else _escaped(char) for char in text)


def _escaped(char: str) -> str:
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:
        # A byte that was not UTF-8, as surrogateescape decoded it.
        return f"\\x{code - 0xDC00:02x}"
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"
