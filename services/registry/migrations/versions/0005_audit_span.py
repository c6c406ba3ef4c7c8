"""Audit rows the decisions context (a person's verdict on a decision) and the
playground (a run) append.

The listing's time filter adds no index: the audit is paged newest first by
row id, so the planner reads the primary key backwards, filtering on
changed_at, and stops after one page; an index on changed_at is not chosen
for that order even for a narrow span. A span far back reads past the newer
rows first (about 60 ms at 300,000 rows), which the audit of people's
changes does not reach.
"""

from services.common.migrations import execute_script

revision = "registry_0005"
down_revision = "registry_0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    execute_script(
        """
        alter table audit drop constraint audit_entity_check;
        alter table audit add constraint audit_entity_check
            check (entity in ('agent', 'skill', 'subject', 'rollout', 'decision', 'run'));
        """
    )
