// Links into the run pages, from their own pages and from others (Insights).

/** Where a run's detail lives in the console. */
export function runPath(agentId: string, taskId: string): string {
  return `/runs/${encodeURIComponent(agentId)}/${encodeURIComponent(taskId)}`;
}

/**
 * The run list an Insights count stands for: the agent's runs (or failures)
 * that started in the span the count was read over; no `to` runs on to now.
 */
export function insightsRunsPath(agentId: string, span: { from: string; to: string }, failures = false): string {
  const search = new URLSearchParams({
    agent_id: agentId,
    ...(failures ? { status: "failed" } : {}),
    ...(span.from ? { from: span.from } : {}),
    ...(span.to ? { to: span.to } : {}),
  });
  return `/runs?${search.toString()}`;
}
