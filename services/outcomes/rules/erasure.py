"""What erasing one subject clears here: its merged facts, and each stored
rejection sample that names it.

A rejection keeps the first bytes of the last malformed event per field, for
an operator to see what a producer sends. That sample is the event as it
came, personal data and all, so a sample naming the subject goes with the
subject's facts, and so does the problem beside it, which may quote one of
the event's values.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class RejectionSample:
    """One field's last rejected event, as fact_rejections keeps it."""

    field: str
    problem: str
    payload: str


def names_subject(payload: str, subject_id: str) -> bool:
    """Whether a rejected event's sample names `subject_id` as its subject.

    The sample may be cut short or not be JSON at all, so it is read as
    text: a `"subject_id"` key followed by this id, as a JSON string (blanks
    around it allowed, as the parser strips them) or as a bare number, since
    producers send booking ids both ways. Another id that merely starts with
    this one does not match.
    """
    if not subject_id:
        return False
    spelled = re.escape(json.dumps(subject_id, ensure_ascii=False)[1:-1])
    pattern = rf'"subject_id"\s*:\s*(?:"\s*{spelled}\s*"|{re.escape(subject_id)}(?![\w.+-]))'
    return re.search(pattern, payload) is not None


def samples_naming(samples: Iterable[RejectionSample], subject_id: str) -> list[str]:
    """The fields whose stored sample names the subject, in field order."""
    return sorted(sample.field for sample in samples if names_subject(sample.payload, subject_id))
