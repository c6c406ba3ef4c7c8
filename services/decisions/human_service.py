"""Human-decision RPCs of the decisions servicer (subjects, inputs, lease)."""

from __future__ import annotations


class HumanDecisionRpcs:
    """Mixed into DecisionsService; holds the human-decision half of the API."""
