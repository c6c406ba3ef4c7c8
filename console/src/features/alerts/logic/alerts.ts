// How an alert reads: its rule in words, and what it measured against what.

const RULE_WORDS: Record<string, string> = {
  judged_success_drop: "Judged success dropped",
  agent_silent: "Agent silent",
  ingest_lag: "Ingest behind",
  stream_full: "Stream filling up",
  rollout_halted: "Rollout halted",
};

export function ruleInWords(rule: string): string {
  return RULE_WORDS[rule] ?? rule;
}

/** The measured value and the threshold in the rule's own unit. */
export function valueAgainstThreshold(rule: string, value: number, threshold: number): string {
  if (rule === "agent_silent" || rule === "ingest_lag") return `${Math.round(value)} s (threshold ${Math.round(threshold)} s)`;
  if (rule === "judged_success_drop" || rule === "stream_full")
    return `${(value * 100).toFixed(1)} % (threshold ${(threshold * 100).toFixed(1)} %)`;
  if (rule === "rollout_halted") return "its guard halted it";
  return `${value} (threshold ${threshold})`;
}

/** The decisions listing filtered to an alert's agent and decision type. */
export function decisionsLink(agentId: string | null, decisionType: string | null): string | null {
  if (!decisionType) return null;
  const search = new URLSearchParams({ decision_type: decisionType });
  if (agentId) search.set("agent_id", agentId);
  return `/decisions?${search.toString()}`;
}
