"""Each decision's rollout arm (DESIGN §9), and the index the rollout guard counts from.

The index leads with the rollout and the arm and holds the outcome, so
counting every arm of a hundred rollouts reads only their entries, never the
table; it is partial, so the decisions made outside any rollout (nearly all
of them) cost it nothing.
"""

from services.common.migrations import execute_script

revision = "decisions_0005"
down_revision = "decisions_0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    execute_script(
        """
        alter table decisions add column rollout_id uuid;
        alter table decisions add column rollout_arm text check (rollout_arm in ('control', 'candidate'));
        alter table decisions add constraint decisions_rollout_whole
            check ((rollout_id is null) = (rollout_arm is null));
        create index decisions_rollout_arms on decisions (rollout_id, rollout_arm, outcome)
            where rollout_id is not null;
        """
    )
