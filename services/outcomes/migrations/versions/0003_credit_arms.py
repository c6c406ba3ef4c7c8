"""Each credited turn's rollout arm (DESIGN §9), and the index the rollout guard counts credit from.

The columns are nullable with no default, so adding them rewrites neither
table. The credit index leads with the rollout and the arm and holds the
credit and its confidence, so counting every arm of a hundred rollouts reads
only their entries; it is partial, so the credits booked outside any rollout
(nearly all of them) cost it nothing. Deferred turns carry the arm too: the
guard shows them as the arm's pending ones.
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
        alter table credits add column rollout_arm text check (rollout_arm in ('control', 'candidate'));
        alter table credits add constraint credits_rollout_whole
            check ((rollout_id is null) = (rollout_arm is null));
        create index credits_rollout_arms on credits (rollout_id, rollout_arm, credit)
            include (confidence) where rollout_id is not null;

        alter table deferred_turns add column rollout_id uuid;
        alter table deferred_turns add column rollout_arm text check (rollout_arm in ('control', 'candidate'));
        alter table deferred_turns add constraint deferred_turns_rollout_whole
            check ((rollout_id is null) = (rollout_arm is null));
        create index deferred_turns_rollout_arms on deferred_turns (rollout_id, rollout_arm)
            where rollout_id is not null and resolved_at is null;
        """
    )
