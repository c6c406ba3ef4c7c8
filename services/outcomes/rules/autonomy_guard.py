"""The autonomy guard (DESIGN §10): which agents the platform switches back
to asking a person, because acting alone is doing worse than with one.

Only an agent whose operator opted in (autonomy_guard) and that is
autonomous now is weighed. Its evidence is weighed per decision type, as
the console shows it, so a type that does well cannot hide one that does
badly; one type recommending demote is enough.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from services.outcomes.rules.autonomy import ExecutionCount, Recommendation, weigh


@dataclass(frozen=True, slots=True)
class GuardedAgent:
    id: str
    autonomous: bool
    autonomy_guard: bool


@dataclass(frozen=True, slots=True)
class Demotion:
    agent_id: str
    decision_type: str
    reason: str


def watched(agents: Iterable[GuardedAgent]) -> list[GuardedAgent]:
    """The agents the guard weighs: opted in and autonomous now."""
    return [agent for agent in agents if agent.autonomy_guard and agent.autonomous]


def demotions(agents: Iterable[GuardedAgent], counts: Mapping[str, Sequence[ExecutionCount]]) -> list[Demotion]:
    """One demotion per watched agent whose evidence of some decision type says
    demote (the first such type by name, so a pass says the same each time)."""
    found: list[Demotion] = []
    for agent in watched(agents):
        by_type: defaultdict[str, list[ExecutionCount]] = defaultdict(list)
        for row in counts.get(agent.id, ()):
            by_type[row.decision_type].append(row)
        for decision_type in sorted(by_type):
            evidence = weigh(by_type[decision_type])
            if evidence.recommendation is Recommendation.DEMOTE:
                found.append(Demotion(agent.id, decision_type, evidence.reason))
                break
    return found
