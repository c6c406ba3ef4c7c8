"""Erasure of one subject's personal data.

An erased decision keeps its action, confidence, outcome, model and times
(so counts still add up) and loses its context, reasoning and embedding;
without an embedding it is in no precedent graph. An erased human decision
keeps its kind, author, source and times and loses its body. The erasures
table is the ledger of each erasure until its audit row is written in the
registry: a call that failed part-way is resumed by the next one, and the
audit row then counts what both cleared.
"""

from services.common.migrations import execute_script

revision = "decisions_0004"
down_revision = "decisions_0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    execute_script(
        """
        alter table decisions alter column embedding drop not null;
        alter table decisions add column erased_at timestamptz;
        -- Only an erasure takes an embedding away: a decision that lost it
        -- any other way would leave precedent search without anyone knowing.
        alter table decisions add constraint decisions_embedding_until_erased
            check ((embedding is null) = (erased_at is not null));
        -- Precedent search plans from the judged rows of each type in the
        -- graph; erased ones are no longer in it and are counted from here,
        -- an index as small as the erasures are few.
        create index decisions_erased_judged on decisions (decision_type)
            where erased_at is not null and outcome in ('success', 'failure');

        alter table human_decisions add column erased_at timestamptz;
        alter table human_decisions drop constraint human_decisions_body_check;
        alter table human_decisions add constraint human_decisions_body_check
            check (case when erased_at is null then btrim(body) <> '' else body = '' end);

        create table erasures (
            id uuid primary key,
            subject_id text not null check (subject_id <> ''),
            reason text not null check (btrim(reason) <> ''),
            decisions bigint not null default 0,
            human_inputs bigint not null default 0,
            facts bigint not null default 0,
            requested_at timestamptz not null default now(),
            audited_at timestamptz
        );
        -- One unfinished erasure per subject: a retry resumes it.
        create unique index erasures_unfinished on erasures (subject_id) where audited_at is null;
        """
    )
