// Links into the run pages, from their own pages and from others (Insights).
import { toInstant } from "./format";

/** Where a run's detail lives in the console. */
export function runPath(agentId: string, taskId: string): string {
  return `/runs/${encodeURIComponent(agentId)}/${encodeURIComponent(taskId)}`;
}

/**
 * The run list an Insights count stands for: the agent's runs (or failures)
 * since the window began, `days` before `nowMs`, rounded down to the minute
 * so no counted run is left out.
 */
export function insightsRunsPath(agentId: string, days: number, nowMs: number, failures = false): string {
  const from = toInstant(Math.floor((nowMs - days * 86_400_000) / 60_000) * 60_000);
  const search = new URLSearchParams({ agent_id: agentId, ...(failures ? { status: "failed" } : {}), from });
  return `/runs?${search.toString()}`;
}
