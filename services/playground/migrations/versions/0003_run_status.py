"""A run is stored from its start: `running` until its end is written.

Rows stored before this revision were written when their run ended, so they
are `finished`.
"""

from services.common.migrations import execute_script

revision = "playground_0003"
down_revision = "playground_0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    execute_script(
        """
        alter table runs add column status text not null default 'finished'
            check (status in ('running', 'finished'));
        """
    )
