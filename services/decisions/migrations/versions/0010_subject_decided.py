"""The index a booking's decisions are found by.

A subject's decisions (`?subject_id=`, the console's search box, and the
erasure of a subject) were found by walking the decision-time index and
dropping every other subject's rows: for a booking with a handful of
decisions among a million, most of the table. With the subject leading,
they are one range of its own entries, newest first.
"""

from services.common.migrations import execute_script

revision = "decisions_0010"
down_revision = "decisions_0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    execute_script(
        """
        create index decisions_subject_decided on decisions (subject_id, decided_at desc, id desc);
        """
    )
