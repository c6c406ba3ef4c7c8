"""A person's verdict on a decision is audited in the registry.

The outcome history row is the verdict's ledger until its audit row is
written: `audit_id` is the request id the registry keeps the row under, and
`audited_at` is set once it answered. A call whose append failed leaves the
row unaudited, and the same person's next verdict call on the decision
(a retry included) appends it. Only a person's verdicts carry an audit id;
an engine's or the sweep's are not audited.
"""

from services.common.migrations import execute_script

revision = "decisions_0007"
down_revision = "decisions_0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    execute_script(
        """
        alter table outcome_history add column audit_id uuid unique;
        alter table outcome_history add column audited_at timestamptz;
        alter table outcome_history add constraint outcome_history_audited_needs_id
            check (audited_at is null or audit_id is not null);
        -- What a verdict call looks for: this decision's verdicts still waiting for their audit row.
        create index outcome_history_unaudited on outcome_history (decision_id)
            where audit_id is not null and audited_at is null;
        """
    )
