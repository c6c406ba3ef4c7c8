"""Playground runs with their traces, and the admissions the rate limit counts.

Admissions are their own table rather than a count of stored runs: a run is
stored when it ends, but the limit must hold from the moment it starts, and a
run that dies half-way has still spent the model's tokens.
"""

from services.common.migrations import execute_script

revision = "playground_0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    execute_script(
        """
        create table runs (
            id uuid primary key,
            agent_id text not null,
            skill_id text not null,
            model text not null,
            prompt text not null,
            turns integer not null check (turns >= 0),
            input_tokens bigint not null check (input_tokens >= 0),
            output_tokens bigint not null check (output_tokens >= 0),
            total_ms bigint not null check (total_ms >= 0),
            final_text text not null default '',
            stop_reason text not null default '',
            error text not null default '',
            steps jsonb not null default '[]'::jsonb,
            created_by text not null,
            created_by_email text not null default '',
            created_at timestamptz not null
        );
        -- The console lists newest first, keyset on (created_at, id).
        create index runs_created on runs (created_at desc, id desc);
        create table run_admissions (
            id bigserial primary key,
            user_sub text not null,
            admitted_at timestamptz not null
        );
        create index run_admissions_user on run_admissions (user_sub, admitted_at);
        """
    )
