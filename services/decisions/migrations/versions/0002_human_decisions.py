"""Human decisions: subjects with their source and plan history, and the
inputs imported from outside sources as durable decisions."""

from services.common.migrations import execute_script

revision = "decisions_0002"
down_revision = "decisions_0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    execute_script(
        """
        create table subjects (
            id text primary key check (id <> ''),
            -- provider:instance/project; null for a subject no outside source knows.
            source text check (source <> ''),
            plan_ref text check (plan_ref <> ''),
            -- How far the current source has been read; opaque, '' = from the start.
            source_cursor text not null default '',
            created_at timestamptz not null default now(),
            updated_at timestamptz not null default now()
        );

        -- Every change of accepted plan, so an approval binds to the plan in
        -- force when the person wrote it, not the one in force when it was read.
        create table subject_plans (
            subject_id text not null references subjects(id) on delete cascade,
            seq bigint generated always as identity,
            plan_ref text check (plan_ref <> ''),
            accepted_at timestamptz not null default now(),
            primary key (subject_id, seq)
        );

        create table human_decisions (
            id uuid primary key,
            seq bigint generated always as identity,
            subject_id text not null references subjects(id) on delete cascade,
            provider text not null check (provider <> ''),
            external_id text not null check (external_id <> ''),
            kind text not null check (kind in ('operator_instruction', 'plan_step_approval')),
            body text not null check (btrim(body) <> ''),
            author text not null default '',
            written_at timestamptz not null,
            observed_at timestamptz not null,
            plan_ref text,
            step text,
            -- One input is one decision however often it is delivered or refetched.
            constraint human_decisions_provenance unique (provider, external_id),
            constraint human_decisions_approval_is_bound check (
                (kind = 'plan_step_approval') = (plan_ref is not null and step is not null)
            )
        );
        create index human_decisions_subject_order on human_decisions (subject_id, written_at, seq);
        """
    )
