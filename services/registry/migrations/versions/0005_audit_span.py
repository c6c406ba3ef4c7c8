"""Audit rows the decisions context (a person's verdict on a decision) and the
playground (a run) append, and an index for listing the audit by when a
change was made: a span of a busy week is read without scanning the rest."""

from services.common.migrations import execute_script

revision = "registry_0005"
down_revision = "registry_0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    execute_script(
        """
        alter table audit drop constraint audit_entity_check;
        alter table audit add constraint audit_entity_check
            check (entity in ('agent', 'skill', 'subject', 'rollout', 'decision', 'run'));
        create index audit_changed_at on audit (changed_at, id);
        """
    )
