"""Tolerant readers for the two judging settings taken from the environment.

Both fall back to their default on a bad value instead of refusing to start:
the sweeper is background housekeeping, and a typo in its window should cost
a warning, not the outcomes service.
"""

from __future__ import annotations

import logging
import re
from datetime import timedelta

logger = logging.getLogger(__name__)

# Long enough for a parcel on the slowest standard promise (36 h) to arrive,
# with headroom. Shorter records a slow-but-kept promise as the decision's
# failure; longer only makes the memory learn more slowly.
DEFAULT_OUTCOME_WINDOW_HOURS = 48

# Precedent is the point of the decision table, so it outlives run logs by far,
# but it is bounded: an unbounded table is a cost nobody chose.
DEFAULT_RETENTION_DAYS = 180

# Anything past a century is a typo, and would overflow the date arithmetic
# (`now - retention`) that uses it.
_CENTURY_DAYS = 36_525

_DIGITS = re.compile(r"[0-9]+")


def _positive_integer(setting: str, raw: str | None, *, default: int, maximum: int) -> int:
    if raw is None or not raw.strip():
        return default
    text = raw.strip()
    if _DIGITS.fullmatch(text) and 0 < int(text) <= maximum:
        return int(text)
    logger.warning(
        "%s=%r is not a positive integer up to %d, using the default %d",
        setting,
        raw,
        maximum,
        default,
    )
    return default


def outcome_window(raw: str | None) -> timedelta:
    """How long after a decision its result is judged (`AGENT_OUTCOME_WINDOW_HOURS`)."""
    hours = _positive_integer(
        "AGENT_OUTCOME_WINDOW_HOURS",
        raw,
        default=DEFAULT_OUTCOME_WINDOW_HOURS,
        maximum=_CENTURY_DAYS * 24,
    )
    return timedelta(hours=hours)


def retention_days(raw: str | None) -> int:
    """How many days decisions are kept (`AGENT_DECISION_RETENTION_DAYS`)."""
    return _positive_integer(
        "AGENT_DECISION_RETENTION_DAYS",
        raw,
        default=DEFAULT_RETENTION_DAYS,
        maximum=_CENTURY_DAYS,
    )
