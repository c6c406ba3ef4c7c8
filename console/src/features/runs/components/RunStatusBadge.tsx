import type { TaskRun } from "../../../api/resources";

/** A run's or a model call's status, in words and colour. */
export function RunStatusBadge({ status }: { status: TaskRun["status"] }) {
  return <span className={`badge badge-outcome run-${status}`}>{status}</span>;
}
