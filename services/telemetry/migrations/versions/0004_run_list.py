"""The run list reads runs newest first, with or without one agent's filter.

A page is a walk down an index from the cursor: (started_at, agent_id,
task_id) is the list's whole sort key, so no page sorts what it skipped.
It also serves every window and the retention prune that read started_at,
so it replaces runs_started instead of adding a second index on the column.
One agent's runs have their own index, led by the agent. A run's model
calls are found by trace (the primary key) or, for a run without one, by
the agent's calls in the run's span of time: that read gets its index too.
"""

from services.common.migrations import execute_script

revision = "telemetry_0004"
down_revision = "telemetry_0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    execute_script(
        """
        create index runs_newest on runs (started_at, agent_id, task_id);
        create index runs_agent_newest on runs (agent_id, started_at, task_id);
        drop index runs_started;
        create index model_calls_agent_started on model_calls (agent_id, started_at);
        """
    )
