"""A verdict names the engine that gave it: `judged_by` may be `engine:<name>`.

Verdicts are signed by the verified caller, not by a field it fills; an
engine's are stored under its key's name. Rows judged `api` before this
revision keep that word: which engine gave them was never recorded.
"""

from services.common.migrations import execute_script

revision = "decisions_0003"
down_revision = "decisions_0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    execute_script(
        """
        alter table decisions drop constraint decisions_judged_by_check;
        alter table decisions add constraint decisions_judged_by_check
            check (judged_by in ('sweeper', 'human', 'api') or judged_by like 'engine:_%');
        """
    )
