"""Outcome judging: did a decision work, per decision type.

Every public module of this package is imported here, so a rule module
registers itself just by existing. Listing them by hand would make a new
decision type need an edit far from its rule, and a forgotten line would
silently judge the new type unknown.
"""

from __future__ import annotations

import importlib
import pkgutil

from services.outcomes.rules.judging.registry import (
    MIN_DECISION_AGE,
    RULES,
    SWEEP_BATCH,
    BookingFacts,
    Outcome,
    Rule,
    RuleBook,
    Timing,
    judge,
    registered_types,
    rule,
)

for _module in pkgutil.iter_modules(__path__):
    if not _module.name.startswith("_"):
        importlib.import_module(f"{__name__}.{_module.name}")
del _module

__all__ = [
    "MIN_DECISION_AGE",
    "RULES",
    "SWEEP_BATCH",
    "BookingFacts",
    "Outcome",
    "Rule",
    "RuleBook",
    "Timing",
    "judge",
    "registered_types",
    "rule",
]
