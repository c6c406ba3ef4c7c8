"""The index the judged-success chart counts from (CountOutcomeSeries).

decisions_type_decided finds one decision type's decisions in a window but
holds no outcome, so every one of them was a heap visit (a bitmap heap scan
of 62,000 rows a week per type at a million decisions). This index holds
the type, the decision time and the outcome, so the count is an
index-only range of one type's entries. Building it reads the table once,
as 0006's indexes did; nothing is rewritten.
"""

from services.common.migrations import execute_script

revision = "decisions_0008"
down_revision = "decisions_0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    execute_script(
        """
        create index decisions_type_outcome_decided on decisions (decision_type, decided_at) include (outcome);
        """
    )
