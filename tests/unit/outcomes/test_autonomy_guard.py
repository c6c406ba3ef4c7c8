"""Which agents the autonomy guard demotes, and one pass of it over fakes of
the registry's and decisions' APIs."""

from __future__ import annotations

from services.outcomes.guard.flow import autonomy_pass
from services.outcomes.rules.autonomy import ExecutionCount
from services.outcomes.rules.autonomy_guard import GuardedAgent, demotions, watched


def executions(decision_type: str, **by: tuple[int, int]) -> list[ExecutionCount]:
    return [ExecutionCount(decision_type, execution, ok, bad, 0, 0) for execution, (ok, bad) in by.items()]


# Acting alone succeeds 25 % of the time, with a person 90 %: demote.
WORSE_ALONE = executions("reassign", autonomous=(10, 30), confirmed=(36, 4))
# As good alone as with a person.
AS_GOOD = executions("reassign", autonomous=(36, 4), confirmed=(36, 4))
# Far worse alone, but too few autonomous decisions judged to say so.
TOO_FEW = executions("reassign", autonomous=(1, 9), confirmed=(36, 4))

GUARDED = GuardedAgent("EXCEPTION_AGENT", autonomous=True, autonomy_guard=True)


def test_only_opted_in_autonomous_agents_are_watched():
    agents = [
        GUARDED,
        GuardedAgent("UNGUARDED", autonomous=True, autonomy_guard=False),
        GuardedAgent("ASKS_ALREADY", autonomous=False, autonomy_guard=True),
    ]
    assert watched(agents) == [GUARDED]


def test_an_agent_doing_worse_alone_is_demoted_naming_the_type_and_why():
    [demotion] = demotions([GUARDED], {GUARDED.id: WORSE_ALONE})
    assert (demotion.agent_id, demotion.decision_type) == ("EXCEPTION_AGENT", "reassign")
    assert "below confirmed" in demotion.reason


def test_no_demotion_without_evidence_that_says_so():
    assert demotions([GUARDED], {GUARDED.id: AS_GOOD}) == []
    assert demotions([GUARDED], {GUARDED.id: TOO_FEW}) == []
    assert demotions([GUARDED], {}) == []


def test_the_same_evidence_leaves_an_unguarded_or_asking_agent_alone():
    unguarded = GuardedAgent("UNGUARDED", autonomous=True, autonomy_guard=False)
    asking = GuardedAgent("ASKING", autonomous=False, autonomy_guard=True)
    assert demotions([unguarded, asking], {"UNGUARDED": WORSE_ALONE, "ASKING": WORSE_ALONE}) == []


def test_types_are_weighed_apart_so_a_good_one_cannot_hide_a_bad_one():
    # Pooled, 1000 good autonomous decisions of another type would outweigh
    # the bad ones; per type, the bad type still demotes.
    rows = [*WORSE_ALONE, *executions("notify", autonomous=(990, 10), confirmed=(40, 0))]
    [demotion] = demotions([GUARDED], {GUARDED.id: rows})
    assert demotion.decision_type == "reassign"


def test_one_demotion_per_agent_the_first_type_by_name():
    rows = [*executions("zone", autonomous=(10, 30), confirmed=(36, 4)), *WORSE_ALONE]
    assert [d.decision_type for d in demotions([GUARDED], {GUARDED.id: rows})] == ["reassign"]


class Registry:
    def __init__(self, agents: list[GuardedAgent], refuse: frozenset[str] = frozenset()) -> None:
        self.agents = agents
        self.refuse = refuse
        self.demoted: list[str] = []

    async def list_agents(self) -> list[GuardedAgent]:
        return self.agents

    async def demote(self, agent_id: str) -> bool:
        if agent_id in self.refuse:
            return False
        self.demoted.append(agent_id)
        return True


class Executions:
    def __init__(self, rows: dict[str, list[ExecutionCount]]) -> None:
        self.rows = rows
        self.asked: list[tuple[str, str]] = []

    async def count_executions(self, *, agent_id: str, decision_type: str) -> list[ExecutionCount]:
        self.asked.append((agent_id, decision_type))
        return self.rows.get(agent_id, [])


async def test_a_pass_counts_only_watched_agents_over_every_type_and_demotes_where_it_should():
    good = GuardedAgent("GOOD", autonomous=True, autonomy_guard=True)
    unguarded = GuardedAgent("UNGUARDED", autonomous=True, autonomy_guard=False)
    registry = Registry([GUARDED, good, unguarded])
    counts = Executions({GUARDED.id: WORSE_ALONE, "GOOD": AS_GOOD, "UNGUARDED": WORSE_ALONE})

    taken = await autonomy_pass(registry, counts)

    assert sorted(counts.asked) == [("EXCEPTION_AGENT", ""), ("GOOD", "")]
    assert registry.demoted == ["EXCEPTION_AGENT"]
    assert [d.agent_id for d in taken] == ["EXCEPTION_AGENT"]


async def test_a_refused_demotion_is_not_reported_as_taken():
    registry = Registry([GUARDED], refuse=frozenset({GUARDED.id}))
    assert await autonomy_pass(registry, Executions({GUARDED.id: WORSE_ALONE})) == []
    assert registry.demoted == []
