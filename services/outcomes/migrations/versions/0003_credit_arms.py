"""Each credited turn's rollout arm (DESIGN §9), and the indexes the rollout guard counts credit from.

The columns are added null and without a default, so existing rows are not
rewritten; their checks are added NOT VALID, so adding them does not scan
a table whose rows all hold null there, and every row written from now on
is still held to them.

- credits_rollout_arms: credits by rollout and arm, with the credit and its
  confidence, so counting every arm of a hundred rollouts is an index-only
  scan of their entries; partial, so the credits booked outside any
  rollout (nearly all of them) cost it nothing;
- deferred_turns_rollout_arms: the turns still waiting, by rollout and arm,
  which the guard shows as the arm's pending ones.
"""

from services.common.migrations import execute_script

revision = "outcomes_0003"
down_revision = "outcomes_0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    execute_script(
        """
        alter table credits add column rollout_id uuid;
        alter table credits add column rollout_arm text;
        alter table credits add constraint credits_rollout_arm_known
            check (rollout_arm in ('control', 'candidate')) not valid;
        alter table credits add constraint credits_rollout_whole
            check ((rollout_id is null) = (rollout_arm is null)) not valid;
        create index credits_rollout_arms on credits (rollout_id, rollout_arm, credit)
            include (confidence) where rollout_id is not null;

        alter table deferred_turns add column rollout_id uuid;
        alter table deferred_turns add column rollout_arm text;
        alter table deferred_turns add constraint deferred_turns_rollout_arm_known
            check (rollout_arm in ('control', 'candidate')) not valid;
        alter table deferred_turns add constraint deferred_turns_rollout_whole
            check ((rollout_id is null) = (rollout_arm is null)) not valid;
        create index deferred_turns_rollout_arms on deferred_turns (rollout_id, rollout_arm)
            where rollout_id is not null and resolved_at is null;
        """
    )
