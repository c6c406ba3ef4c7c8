import type { Insights } from "../../../api/resources";

type AgentFigures = Pick<Insights["agents"][number], "runs" | "failures" | "avg_ms" | "last_run_at">;

export type AgentTotals = { runs: number; failures: number; avgMs: number | null; lastRunAt: string | null };

/**
 * The fleet's line under the per-agent table: runs and failures add up, the
 * average is over every run (each agent's average weighted by its runs), and
 * the last run is the latest of any agent. A p95 does not add up, so there is none.
 */
export function agentTotals(agents: readonly AgentFigures[]): AgentTotals {
  let runs = 0;
  let failures = 0;
  let timedRuns = 0;
  let timedMs = 0;
  let lastRunAt: string | null = null;
  for (const agent of agents) {
    runs += agent.runs;
    failures += agent.failures;
    if (agent.avg_ms !== null && agent.runs > 0) {
      timedRuns += agent.runs;
      timedMs += agent.avg_ms * agent.runs;
    }
    if (agent.last_run_at && (lastRunAt === null || Date.parse(agent.last_run_at) > Date.parse(lastRunAt))) lastRunAt = agent.last_run_at;
  }
  return { runs, failures, avgMs: timedRuns > 0 ? timedMs / timedRuns : null, lastRunAt };
}
