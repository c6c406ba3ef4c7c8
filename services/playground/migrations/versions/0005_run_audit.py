"""A playground run is audited in the registry, as every change a person
makes is: `audited_at` is set once the registry kept the run's row. A run
whose append failed is not held up for it; the same person's next run
appends what their earlier runs still miss."""

from services.common.migrations import execute_script

revision = "playground_0005"
down_revision = "playground_0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    execute_script(
        """
        alter table runs add column audited_at timestamptz;
        -- Rows stored before runs were audited are not owed a row now.
        update runs set audited_at = created_at;
        -- What an admission looks for: this person's runs still waiting for their audit row.
        create index runs_unaudited on runs (created_by, created_at) where audited_at is null;
        """
    )
