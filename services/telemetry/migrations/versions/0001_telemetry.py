"""Telemetry tables: one row per finished agent task run."""

from services.common.migrations import execute_script

revision = "telemetry_0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    # The primary key is the idempotency key: a redelivered or re-sent run
    # lands on the row already there instead of counting twice.
    # received_at is stamped by the database, so every window and "last run"
    # reads one clock; started_at/finished_at are the engine's own text, often
    # without a zone, kept for display and never compared with received_at.
    execute_script(
        """
        create table runs (
            agent_id text not null,
            task_id text not null,
            task_type text not null,
            status text not null check (status in ('succeeded', 'failed')),
            started_at text not null,
            finished_at text not null,
            duration_ms double precision not null check (duration_ms >= 0),
            error text,
            received_at timestamptz not null default now(),
            primary key (agent_id, task_id)
        );
        create index runs_received on runs (received_at);
        """
    )
