"""The outcomes context's domain rules: pure functions of values, no I/O and
no wire types, one module per family.

- `judging/`: did a decision work, one module per decision type, registered
  with `@rule`; the minimum age before judging, the outcome vocabulary.
- `sweep`: the verdicts for a page of pending decisions, the page bounds.
- `facts`: parsing one `facts.booking` event, what can be stored, and the
  order-independent merge into a subject's facts.
- `credit`: a conversation's turns classified, grouped into episodes and
  credited to the model behind each; the outcome metrics.
- `submission`: what a resubmitted conversation may change in the ledger.
- `routing`: Beta posteriors per model and Thompson sampling over them.
- `advice`: the route key, the candidates, and the advice for one key from
  both kinds of evidence, with the pick's propensity.
- `evaluation`: the SNIPS estimate of a model pin from the decisions
  context's sums.
- `autonomy`: judged success by how actions were carried out, and the
  recommendation about acting alone.

The limits named here are the ones the gateway also checks before a request
reaches the context, so its 4xx and the rule's refusal draw the same line.
"""

from __future__ import annotations

from services.outcomes.rules.advice import MAX_CANDIDATES
from services.outcomes.rules.facts import MAX_EVENT_BYTES, MAX_SUBJECT_ID
from services.outcomes.rules.sweep import MAX_BATCH

__all__ = ["MAX_BATCH", "MAX_CANDIDATES", "MAX_EVENT_BYTES", "MAX_SUBJECT_ID"]
