"""Admissions indexed by their time alone, for retention.

The (user_sub, admitted_at) index serves the rate limit, which asks about
one person; retention asks for every admission past the window, whoever
made it, and without this index would read the whole table each pass. Runs
need no new index: runs_created already orders them by created_at.
"""

from services.common.migrations import execute_script

revision = "playground_0004"
down_revision = "playground_0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    execute_script("create index run_admissions_admitted on run_admissions (admitted_at);")
