"""Decision memory: decisions with their embedding, and every outcome change.

The embedding column's dimension is fixed here, at the first migration, from
the `outrider.embedding_dim` setting the runner passes in (384 when unset).
A later change of the deployment setting cannot resize stored vectors:
vectors of two sizes cannot be compared, so one table holds one size.
"""

from alembic import op
from sqlalchemy import text

from services.common.migrations import execute_script

revision = "decisions_0001"
down_revision = None
branch_labels = None
depends_on = None

DEFAULT_DIMENSION = 384
# pgvector indexes at most 2,000 dimensions; a wider column could be stored
# but never searched through HNSW.
MAX_INDEXED_DIMENSION = 2000


def _dimension() -> int:
    raw = op.get_bind().execute(text("select current_setting('outrider.embedding_dim', true)")).scalar()
    if raw is None or not str(raw).strip():
        return DEFAULT_DIMENSION
    try:
        value = int(str(raw).strip())
    except ValueError:
        raise ValueError(f"outrider.embedding_dim must be an integer, got {raw!r}") from None
    if not 2 <= value <= MAX_INDEXED_DIMENSION:
        raise ValueError(f"outrider.embedding_dim must be between 2 and {MAX_INDEXED_DIMENSION}, got {value}")
    return value


def upgrade() -> None:
    dimension = _dimension()
    execute_script(
        f"""
        create table decisions (
            id uuid primary key,
            decision_type text not null,
            agent_id text not null,
            subject_id text not null,
            context jsonb not null default '{{}}'::jsonb,
            action text not null,
            confidence double precision not null check (confidence >= 0 and confidence <= 1),
            reasoning text,
            model text,
            embedding vector({dimension}) not null,
            decided_at timestamptz not null default now(),
            recorded_at timestamptz not null default now(),
            outcome text check (outcome in ('success', 'failure', 'unknown')),
            outcome_reason text,
            judged_at timestamptz,
            judged_by text check (judged_by in ('sweeper', 'human', 'api')),
            check ((outcome is null) = (judged_at is null) and (outcome is null) = (judged_by is null))
        );
        -- Admin listing, newest first, keyset on (decided_at, id).
        create index decisions_decided on decisions (decided_at desc, id desc);
        create index decisions_type_decided on decisions (decision_type, decided_at desc, id desc);
        create index decisions_agent_decided on decisions (agent_id, decided_at desc, id desc);
        -- The outcome judge walks pending decisions oldest first; judged rows
        -- are most of the table and never interest it.
        create index decisions_pending on decisions (decided_at, id) where outcome is null;
        -- Precedent search only ever looks at judged rows, so the graph holds
        -- only those: a filter applied after an unfiltered HNSW scan would
        -- drop pending rows from a fixed-size candidate list and return
        -- fewer than k neighbours (pgvector 0.6 has no iterative scan).
        create index decisions_judged_embedding on decisions
            using hnsw (embedding vector_cosine_ops)
            where outcome in ('success', 'failure');
        -- Exact search for a decision type too rare for the shared graph.
        create index decisions_judged_type on decisions (decision_type)
            where outcome in ('success', 'failure');
        create table outcome_history (
            id bigserial primary key,
            decision_id uuid not null references decisions(id) on delete cascade,
            old_outcome text,
            new_outcome text not null,
            reason text,
            judged_by text not null,
            -- The person behind a human verdict, from the console token.
            changed_by text not null default '',
            changed_by_email text not null default '',
            judged_at timestamptz not null default now()
        );
        create index outcome_history_decision on outcome_history (decision_id, id);
        """
    )
