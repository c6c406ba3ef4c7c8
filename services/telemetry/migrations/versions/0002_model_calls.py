"""Model calls: one row per GenAI model-call span received over OTLP."""

from services.common.migrations import execute_script

revision = "telemetry_0002"
down_revision = "telemetry_0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # (trace_id, span_id) is the span's own identity in OTLP, so it is the
    # idempotency key: an exporter's retry or a redelivery lands on the row
    # already there. The span's times are absolute instants (Unix
    # nanoseconds), so unlike an engine's run times they are stored as
    # timestamptz; windows still read received_at, the one server clock.
    # Token counts are null when the span did not report usage: unknown is
    # not zero. Prompt and completion text has no column, by design.
    execute_script(
        """
        create table model_calls (
            trace_id text not null,
            span_id text not null,
            agent_id text not null,
            operation text not null,
            provider text,
            request_model text,
            response_model text,
            input_tokens bigint check (input_tokens >= 0),
            output_tokens bigint check (output_tokens >= 0),
            status text not null check (status in ('succeeded', 'failed')),
            error_type text,
            started_at timestamptz not null,
            duration_ms double precision not null check (duration_ms >= 0),
            received_at timestamptz not null default now(),
            primary key (trace_id, span_id)
        );
        create index model_calls_received on model_calls (received_at);
        """
    )
