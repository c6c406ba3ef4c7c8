"""Guarded rollouts (DESIGN §9): the rollouts, their history, and `rollout`
as an audited entity.

The partial unique index is what makes "one running or paused rollout per
agent and decision type" hold under concurrent creates: a check before the
insert would let two racing requests both pass it.
"""

from services.common.migrations import execute_script

revision = "registry_0003"
down_revision = "registry_0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    execute_script(
        """
        create table rollouts (
            id uuid primary key,
            agent_id text not null references agents(id),
            decision_type text not null,
            change jsonb not null,
            baseline jsonb not null,
            steps integer[] not null,
            step integer not null check (step >= 0 and step < cardinality(steps)),
            percent integer not null check (percent between 0 and 100),
            state text not null check (state in ('running', 'paused', 'halted', 'aborted', 'completed')),
            max_drop double precision not null,
            confidence double precision not null,
            min_judged integer not null,
            control jsonb not null default '{}'::jsonb,
            candidate jsonb not null default '{}'::jsonb,
            p_harm double precision,
            reason text not null default '',
            created_by text not null,
            created_by_email text not null default '',
            created_at timestamptz not null default now(),
            updated_at timestamptz not null default now()
        );
        create unique index rollouts_one_active on rollouts (agent_id, decision_type)
            where state in ('running', 'paused');
        create index rollouts_listing on rollouts (created_at desc, id desc);
        create table rollout_events (
            id bigserial primary key,
            rollout_id uuid not null references rollouts(id) on delete cascade,
            event text not null,
            percent integer not null,
            p_harm double precision,
            reason text not null default '',
            by text not null,
            at timestamptz not null default now()
        );
        create index rollout_events_of on rollout_events (rollout_id, id);
        alter table audit drop constraint audit_entity_check;
        alter table audit add constraint audit_entity_check
            check (entity in ('agent', 'skill', 'subject', 'rollout'));
        """
    )
