"""Each decision's model propensity and execution (DESIGN §10), and the indexes the evidence is counted from.

The columns are added null and without a default, so existing rows are not
rewritten; their checks are added NOT VALID, so adding them does not scan
a table whose rows all hold null there, and every row written from now on
is still held to them.

Each index holds exactly what its count reads, so the count is an
index-only scan of one decision type's or one agent's entries:

- decisions_judged_weights: judged decisions by type and model, with the
  outcome and propensity (WeighDecisions' sums);
- decisions_unjudged_type: unknown and pending decisions by type, the rest
  of WeighDecisions' counts, small because most decisions get judged;
- decisions_agent_execution: every decision by agent, type and execution,
  with the outcome (CountExecutions); not partial, because the pending
  ones and those that did not say how they were carried out are counted too;
- decisions_judged_windows: judged decisions by agent, type and decision
  time, newest first, with the outcome (CountJudgedWindows' latest windows).
"""

from services.common.migrations import execute_script

revision = "decisions_0006"
down_revision = "decisions_0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    execute_script(
        """
        alter table decisions add column model_propensity double precision;
        alter table decisions add column execution text;
        alter table decisions add constraint decisions_model_propensity_range
            check (model_propensity > 0 and model_propensity <= 1) not valid;
        alter table decisions add constraint decisions_execution_known
            check (execution in ('autonomous', 'confirmed', 'overridden', 'proposed')) not valid;
        create index decisions_judged_weights on decisions (decision_type, model)
            include (outcome, model_propensity)
            where outcome in ('success', 'failure');
        create index decisions_unjudged_type on decisions (decision_type, outcome)
            where outcome is null or outcome = 'unknown';
        create index decisions_agent_execution on decisions (agent_id, decision_type, execution, outcome);
        create index decisions_judged_windows on decisions (agent_id, decision_type, decided_at desc, id desc)
            include (outcome)
            where outcome in ('success', 'failure');
        """
    )
