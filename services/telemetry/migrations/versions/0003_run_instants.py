"""Runs are placed by their own time: started_at and finished_at become instants.

Until now they were the engine's text, and insights placed a run by when it
was received; a batch of the morning's runs received at noon showed as one
bar at noon. The text the ingest accepted is ISO 8601, with or without an
offset; one without is read as UTC, as the ingest now reads it. A row whose
text does not parse here (written before the ingest checked it, or naming
an instant outside years 1 to 9999) keeps its received time for both, and
the migration's log says how many did. Durations are kept as computed.

Windows read the run's own time now, so runs are indexed on it; model calls
had their instants already and trade their received index for a started one.
runs keeps its received index: "is telemetry arriving" reads the newest.
"""

import logging

from alembic import op
from sqlalchemy import text

from services.common.migrations import execute_script

revision = "telemetry_0003"
down_revision = "telemetry_0002"
branch_labels = None
depends_on = None

# Named, not __name__: alembic loads this file under a name of its own.
_log = logging.getLogger("services.telemetry.migrations")

# The ingest's own shape check (rules._DATETIME), so text Postgres would read
# but the ingest never accepted ('yesterday', 'epoch') does not parse here either.
_INSTANT_FUNCTION = r"""
create function pg_temp.run_instant(raw text) returns timestamptz language plpgsql stable as $$
declare
    written text := btrim(raw);
    parsed timestamptz;
begin
    if written !~ '^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:?\d{2})?$' then
        return null;
    end if;
    if written ~ '([Zz]|[+-]\d{2}:?\d{2})$' then
        parsed := cast(written as timestamptz);
    else
        parsed := cast(written as timestamp) at time zone 'UTC';
    end if;
    -- Postgres holds instants a Python datetime cannot: such a row would
    -- break every read of the table that meets it.
    if parsed < timestamptz '0001-01-01 00:00:00+00' or parsed >= timestamptz '10000-01-01 00:00:00+00' then
        return null;
    end if;
    return parsed;
exception when data_exception then
    -- A field out of range: February 30th, hour 25.
    return null;
end
$$;
"""

_BOTH_PARSE = "pg_temp.run_instant(started_at) is not null and pg_temp.run_instant(finished_at) is not null"


def upgrade() -> None:
    execute_script(_INSTANT_FUNCTION)
    bind = op.get_bind()
    total = bind.execute(text("select count(*) from runs")).scalar_one()
    unparsed = bind.execute(text(f"select count(*) from runs where not ({_BOTH_PARSE})")).scalar_one()
    execute_script(
        f"""
        alter table runs
            alter column started_at type timestamptz using
                case when {_BOTH_PARSE} then pg_temp.run_instant(started_at) else received_at end,
            alter column finished_at type timestamptz using
                case when {_BOTH_PARSE} then pg_temp.run_instant(finished_at) else received_at end;
        create index runs_started on runs (started_at);
        drop index model_calls_received;
        create index model_calls_started on model_calls (started_at);
        drop function pg_temp.run_instant(text);
        """
    )
    _log.log(
        logging.WARNING if unparsed else logging.INFO,
        "runs placed by their own time",
        extra={"runs": total, "kept_received_time": unparsed},
    )
