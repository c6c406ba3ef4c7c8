"""The run series keeps what it computed for buckets that have ended.

A 30-day series at a million runs read half the table and sorted each
bucket for its percentiles, about 2 s every time the Insights page polled.
Buckets are aligned to whole multiples of their width since the epoch, so
an ended bucket is the same bucket on every read: its per-agent runs,
failures and percentiles, and its per-agent, per-model calls and tokens,
are kept once computed. series_buckets marks a (width, start) as kept; a
run or model call written later into that bucket (an engine reporting
late) or pruned from it removes the mark in the same transaction, and the
next read computes the bucket again. A mark with no rows is a bucket that
had none.
"""

from services.common.migrations import execute_script

revision = "telemetry_0005"
down_revision = "telemetry_0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    execute_script(
        """
        create table series_buckets (
            bucket_seconds integer not null,
            bucket_start timestamptz not null,
            kept_at timestamptz not null default now(),
            primary key (bucket_seconds, bucket_start)
        );
        create table series_runs (
            bucket_seconds integer not null,
            bucket_start timestamptz not null,
            agent_id text not null,
            runs integer not null,
            failures integer not null,
            p50_ms double precision not null,
            p95_ms double precision not null,
            primary key (bucket_seconds, bucket_start, agent_id)
        );
        create table series_calls (
            bucket_seconds integer not null,
            bucket_start timestamptz not null,
            agent_id text not null,
            model text not null,
            calls integer not null,
            reported_calls integer not null,
            input_tokens bigint not null,
            output_tokens bigint not null,
            primary key (bucket_seconds, bucket_start, agent_id, model)
        );
        """
    )
