// The JSON shapes the gateway answers (DESIGN.md §4), as the console reads them.

export type AgentStatus = "live" | "partial" | "simulation" | "broken" | "unmerged" | "retired";

export type Agent = {
  id: string;
  name: string;
  class_ref: string;
  runtime: "engine" | "console";
  purpose: string;
  status: AgentStatus;
  status_note: string;
  has_autonomy_gate: boolean;
  autonomous: boolean;
  model: string | null;
  skill_count: number;
  tool_count: number;
};

export type ThresholdSpec = {
  type: "integer" | "number";
  min: number;
  max: number;
  step: number;
  default: number;
  description?: string;
};

export type Skill = {
  id: string;
  agent_id: string;
  title: string;
  category: string;
  description: string;
  sample_prompt: string;
  source: "engine" | "console" | "custom";
  enabled: boolean;
  disabled_reason: string | null;
  thresholds: Record<string, number>;
  thresholds_schema: Record<string, ThresholdSpec>;
  version: number;
  tool_names: string[];
  updated_by: string | null;
  updated_at: string | null;
};

export type Tool = {
  name: string;
  description: string;
  kind: "read" | "write" | "notify" | "event";
  target: string;
  requires_confirmation: boolean;
  owner_agents: string[];
  implemented_at: string;
  executor: string;
};

export type AgentDetail = Agent & { skills: Skill[]; tools: Tool[] };

export type AuditRow = {
  id: number;
  entity: string;
  entity_id: string;
  field: string;
  old: unknown;
  new: unknown;
  changed_by: string;
  changed_by_email: string;
  changed_at: string;
};

export type Decision = {
  id: string;
  decision_type: string;
  agent_id: string;
  subject_id: string;
  action: string;
  confidence: number;
  reasoning: string | null;
  model: string | null;
  decided_at: string;
  outcome: "success" | "failure" | "unknown" | null;
  outcome_reason: string | null;
  judged_at: string | null;
  judged_by: string | null;
};

export type OutcomeChange = {
  old_outcome: string | null;
  new_outcome: string;
  reason: string | null;
  judged_by: string;
  changed_by: string | null;
  changed_by_email: string | null;
  judged_at: string;
};

export type DecisionDetail = Decision & {
  history: OutcomeChange[];
  precedents: (Decision & { similarity: number })[];
  precedent_summary: { successes: number; failures: number; success_rate: number | null };
};

export type HumanDecision = {
  id: string;
  subject_id: string;
  kind: string;
  body: string;
  author: string;
  provider: string;
  external_id: string;
  written_at: string;
  observed_at: string;
  plan_ref: string | null;
  step: string | null;
};

export type AgentInsight = {
  agent_id: string;
  runs: number;
  failures: number;
  avg_ms: number | null;
  p95_ms: number | null;
  last_run_at: string | null;
  state: string;
  last_heartbeat_at: string | null;
  registered: boolean;
};

export type Insights = {
  window_days: number;
  receiving: boolean;
  last_received_at: string | null;
  agents: AgentInsight[];
  decisions: { decision_type: string; outcome: string; count: number }[];
  decisions_available: boolean;
  degraded: { source: string; reason: string }[];
};

export type SeriesPoint = { start: string; runs: number; failures: number };

export type RunSeries = {
  window_days: number;
  bucket_seconds: number;
  start: string;
  end: string;
  agents: { agent_id: string; points: SeriesPoint[] }[];
};

export type RoutingArm = {
  model: string;
  successes: number;
  failures: number;
  alpha: number;
  beta: number;
  posterior_mean: number;
  pick_probability: number;
  credit: { successes: number; failures: number };
  decisions: { successes: number; failures: number };
};

export type Routing = { key: string; pick: string | null; seed: number; arms: RoutingArm[] };

export type ConversationMetrics = {
  model: string | null;
  episodes: number;
  resolved: number;
  abandoned: number;
  ambiguous: number;
  ongoing: number;
  first_turn_resolutions: number;
  first_turn_resolution_rate: number;
  avg_turns_to_resolution: number;
  churn_rate: number;
  pending: number;
};

export type TraceStep = {
  turn: number;
  tool: string;
  input: unknown;
  outcome: string;
  reason: string;
  result: string;
  error: string | null;
  proposal: unknown;
  ms: number;
};

export type RunTrace = {
  id: string;
  agent_id: string;
  skill_id: string;
  model: string;
  prompt: string;
  turns: number;
  input_tokens: number;
  output_tokens: number;
  total_ms: number;
  final_text: string;
  status: "running" | "finished" | "interrupted";
  stop_reason: string;
  error: string | null;
  step_count: number;
  created_by: string;
  created_by_email: string;
  created_at: string;
  steps?: TraceStep[];
};

type Page<T> = { items: T[]; next_cursor: string | null };

/** What each GET route the console reads answers. */
export type GetResponses = {
  "/admin/ai/agents": Page<Agent>;
  "/admin/ai/agents/{agent_id}": AgentDetail;
  "/admin/ai/skills": Page<Skill>;
  "/admin/ai/audit": Page<AuditRow>;
  "/admin/ai/decisions": Page<Decision>;
  "/admin/ai/decisions/{decision_id}": DecisionDetail;
  "/admin/ai/subjects/{subject_id}/human-decisions": Page<HumanDecision>;
  "/admin/ai/insights": Insights;
  "/admin/ai/insights/series": RunSeries;
  "/admin/ai/routing": Routing;
  "/admin/ai/conversation-metrics": ConversationMetrics;
  "/admin/ai/playground/runs": Page<RunTrace>;
  "/admin/ai/playground/runs/{run_id}": RunTrace;
};

/** What each write route the console calls answers. */
export type WriteResponses = {
  "/admin/ai/skills": Skill;
  "/admin/ai/skills/{skill_id}": Skill;
  "/admin/ai/agents/{agent_id}": Agent;
  "/admin/ai/decisions/{decision_id}/outcome": Decision;
};
