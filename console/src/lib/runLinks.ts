// Links into the run pages, from their own pages and from others (Insights).

/** Where a run's detail lives in the console. */
export function runPath(agentId: string, taskId: string): string {
  return `/runs/${encodeURIComponent(agentId)}/${encodeURIComponent(taskId)}`;
}

/**
 * The run list an Insights count stands for: the agent's runs (or failures)
 * since the window began, `days` before `nowMs`. The start is written to the
 * minute, as the time filter takes it, rounded down so no counted run is left out.
 */
export function insightsRunsPath(agentId: string, days: number, nowMs: number, failures = false): string {
  const start = new Date(nowMs - days * 86_400_000);
  const pad = (n: number) => String(n).padStart(2, "0");
  const from = `${start.getFullYear()}-${pad(start.getMonth() + 1)}-${pad(start.getDate())}T${pad(start.getHours())}:${pad(start.getMinutes())}`;
  const search = new URLSearchParams({ agent_id: agentId, ...(failures ? { status: "failed" } : {}), from });
  return `/runs?${search.toString()}`;
}
