"""Each run's redaction report: how many values of each kind were replaced.

Counts only, keyed by kind; the values themselves are never stored.
"""

from services.common.migrations import execute_script

revision = "playground_0002"
down_revision = "playground_0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    execute_script("alter table runs add column redactions jsonb not null default '{}'::jsonb;")
