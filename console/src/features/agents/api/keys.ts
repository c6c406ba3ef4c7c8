// One key factory for the agents feature. A write invalidates exactly the
// queries whose answer it changes, listed beside it here so a test pins them.
import type { AuditEntity } from "../../../api/resources";
import { AGENT_LIST_KEY } from "../../../components/AgentName";

export const agentKeys = {
  all: ["agents"] as const,
  // Shared with the names shown beside agent ids on every page.
  list: () => AGENT_LIST_KEY,
  detail: (id: string) => [...agentKeys.all, "detail", id] as const,
  models: (id: string) => [...agentKeys.all, "models", id] as const,
  live: () => [...agentKeys.all, "live"] as const,
  history: (entity: AuditEntity, id: string) => [...agentKeys.all, "history", entity, id] as const,
};

export type QueryKey = readonly unknown[];

/** Enabling a skill or tuning it changes that agent's detail and that skill's history. */
export function keysChangedBySkillUpdate(agentId: string, skillId: string): QueryKey[] {
  return [agentKeys.detail(agentId), agentKeys.history("skill", skillId)];
}

/** Autonomy and the model pin show in the list as well as the detail; the pin heads the model choices. */
export function keysChangedByAgentUpdate(agentId: string): QueryKey[] {
  return [agentKeys.list(), agentKeys.detail(agentId), agentKeys.history("agent", agentId), agentKeys.models(agentId)];
}

/** A new skill changes the agent's skill count (list) and its skills (detail). */
export function keysChangedBySkillCreation(agentId: string): QueryKey[] {
  return [agentKeys.list(), agentKeys.detail(agentId)];
}
