"""Audit rows other contexts append: the `subject` entity (an erasure of one
subject's data), and the caller's id of each change, so that a retried
append is kept once."""

from services.common.migrations import execute_script

revision = "registry_0002"
down_revision = "registry_0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    execute_script(
        """
        alter table audit drop constraint audit_entity_check;
        alter table audit add constraint audit_entity_check check (entity in ('agent', 'skill', 'subject'));
        -- Set only on appended rows; a row written with its change needs none.
        alter table audit add column request_id uuid unique;
        """
    )
