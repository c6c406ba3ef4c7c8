"""Outcome judge tables: merged subject facts, the episode-credit ledger, the
conversations it was booked from, and their deferred turns."""

from services.common.migrations import execute_script

revision = "outcomes_0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    execute_script(
        """
        -- One row per subject: every field's newest observation, merged. The
        -- document is the merge's own persisted form; reading it back through
        -- the same code keeps one definition of a well-formed fact.
        create table subject_facts (
            subject_id text primary key,
            facts jsonb not null default '{}'::jsonb,
            updated_at timestamptz not null default now()
        );

        -- Malformed facts events, counted per offending field. A counter, not
        -- a log of payloads: a producer stuck emitting garbage must not grow
        -- a table without bound.
        create table fact_rejections (
            field text primary key,
            count bigint not null default 0,
            last_problem text not null default '',
            last_payload text not null default '',
            last_at timestamptz not null default now()
        );

        -- A conversation as far as the ledger has booked it: a digest per
        -- turn, so a resubmission can be checked to extend, not rewrite, what
        -- the booked credits were computed from.
        create table conversations (
            conversation_id text primary key,
            skill text,
            decision_type text,
            turn_digests text[] not null default '{}',
            created_at timestamptz not null default now(),
            updated_at timestamptz not null default now()
        );

        -- One credit per assistant turn and episode, booked once. A credit is
        -- never revised: routing already learnt from it, and re-crediting a
        -- turn counts it twice.
        create table credits (
            seq bigserial primary key,
            conversation_id text not null references conversations (conversation_id),
            turn_ref text not null,
            episode_id integer not null check (episode_id >= 0),
            model text,
            trace_id text,
            skill text,
            decision_type text,
            credit text not null check (credit in ('success', 'failure')),
            confidence double precision not null check (confidence >= 0 and confidence <= 1),
            resolution text not null check (resolution in ('resolved', 'abandoned', 'ambiguous', 'ongoing')),
            booked_at timestamptz not null default now(),
            unique (conversation_id, turn_ref, episode_id)
        );
        create index credits_model on credits (model, seq);
        -- Routing reads only credits that bind a trace: an observer turn has
        -- no decision to credit.
        create index credits_skill_route on credits (skill, model) where trace_id is not null;
        create index credits_type_route on credits (decision_type, model) where trace_id is not null;

        -- Assistant turns whose credit waits for the conversation to settle
        -- them. Credits alone cannot show these (a deferred turn emits none),
        -- so the metrics' pending count comes from here.
        create table deferred_turns (
            conversation_id text not null references conversations (conversation_id),
            turn_ref text not null,
            episode_id integer not null check (episode_id >= 0),
            model text,
            trace_id text,
            deferred_at timestamptz not null default now(),
            resolved_at timestamptz,
            primary key (conversation_id, turn_ref)
        );
        create index deferred_turns_pending on deferred_turns (model) where resolved_at is null;
        """
    )
