"""A tool result as the model receives it: redacted first, then capped.

The redaction itself (services/common/redaction) is shared with every log
line and table that shows outside input; what belongs to a run is the
Redactor it keeps for its whole life and the cap on each result it sends.
"""

from __future__ import annotations

import json
from typing import Any

DEFAULT_RESULT_LIMIT = 16 * 1024

_MARKER = "…[truncated {} bytes]"


def cap_result(value: Any, limit: int = DEFAULT_RESULT_LIMIT) -> str:
    """Serialise a tool result to JSON, at most `limit` UTF-8 bytes long.

    A longer result is cut on a character boundary and ends with a visible
    marker saying how much was dropped; the cut text is deliberately no
    longer valid JSON, so nobody mistakes it for the whole result. Redact
    before capping: a cut through an e-mail address leaves a fragment the
    patterns no longer recognise.
    """
    text = json.dumps(value, ensure_ascii=False)
    encoded = text.encode("utf-8")
    if len(encoded) <= limit:
        return text
    # The marker must fit inside the limit too. Its width depends on the
    # number of bytes dropped, which can be no more than the whole length,
    # so that is the width reserved.
    reserved = len(_MARKER.format(len(encoded)).encode("utf-8"))
    if limit < reserved:
        raise ValueError(f"limit {limit} is too small to hold the truncation marker")
    kept = encoded[: limit - reserved].decode("utf-8", errors="ignore")
    dropped = len(encoded) - len(kept.encode("utf-8"))
    return kept + _MARKER.format(dropped)
