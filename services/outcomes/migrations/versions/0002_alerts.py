"""Alerts (DESIGN §10) and the outbox of their transitions to deliver."""

from services.common.migrations import execute_script

revision = "outcomes_0002"
down_revision = "outcomes_0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    execute_script(
        """
        -- One row per time an alert fired; it resolves in place. The key is
        -- the rule and what it is about (agent, decision type, stream or
        -- rollout), '' where the rule has no such part.
        create table alerts (
            id uuid primary key,
            rule text not null,
            agent_id text not null default '',
            decision_type text not null default '',
            subject text not null default '',
            state text not null check (state in ('firing', 'resolved')),
            summary text not null,
            value double precision not null,
            threshold double precision not null,
            started_at timestamptz not null,
            resolved_at timestamptz,
            check ((state = 'resolved') = (resolved_at is not null))
        );
        -- At most one firing row per key: two replicas evaluating at once
        -- cannot both open the same alert.
        create unique index alerts_one_firing on alerts (rule, agent_id, decision_type, subject)
            where state = 'firing';
        create index alerts_listing on alerts (state, started_at desc, id desc);

        -- Transitions to deliver, written in the transaction that makes them.
        -- The id is the delivery id a receiver sees on every retry.
        create table alert_outbox (
            id uuid primary key,
            alert_id uuid not null references alerts (id) on delete cascade,
            transition text not null check (transition in ('firing', 'resolved')),
            body text not null,
            created_at timestamptz not null default now(),
            attempts integer not null default 0,
            next_attempt_at timestamptz not null default now(),
            last_error text not null default '',
            delivered_at timestamptz
        );
        create index alert_outbox_due on alert_outbox (next_attempt_at) where delivered_at is null;
        """
    )
