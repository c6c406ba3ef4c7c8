import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { apiGet, apiPatch, apiPost } from "../../../api/client";
import type { Skill } from "../../../api/resources";
import { agentKeys, keysChangedByAgentUpdate, keysChangedBySkillCreation, keysChangedBySkillUpdate } from "./keys";

export function useAgents() {
  return useQuery({
    queryKey: agentKeys.list(),
    queryFn: () => apiGet("/admin/ai/agents"),
  });
}

export function useAgent(id: string) {
  return useQuery({
    queryKey: agentKeys.detail(id),
    queryFn: () => apiGet("/admin/ai/agents/{agent_id}", { path: { agent_id: id } }),
  });
}

/** Each agent's live state (silent / idle / running) from the last day's insights. */
export function useLiveStates() {
  return useQuery({
    queryKey: agentKeys.live(),
    queryFn: async () => {
      const insights = await apiGet("/admin/ai/insights", { query: { days: 1 } });
      return Object.fromEntries(insights.agents.map((a) => [a.agent_id, a.state])) as Record<string, string>;
    },
  });
}

export function useHistory(entity: "agent" | "skill", id: string, enabled: boolean) {
  return useQuery({
    queryKey: agentKeys.history(entity, id),
    queryFn: () => apiGet("/admin/ai/audit", { query: { entity, entity_id: id, limit: 10 } }),
    enabled,
  });
}

export type SkillChange = { enabled?: boolean; thresholds?: Record<string, number>; version: number };

export function useUpdateSkill(skill: Skill) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (change: SkillChange) =>
      apiPatch("/admin/ai/skills/{skill_id}", change, { path: { skill_id: skill.id } }),
    // Also after a refusal: a 409 means the stored skill moved on, and the
    // page must show what is stored now.
    onSettled: () =>
      Promise.all(keysChangedBySkillUpdate(skill.agent_id, skill.id).map((queryKey) => client.invalidateQueries({ queryKey }))),
  });
}

export type AgentChange = { autonomous?: boolean; confirm?: string; model?: string | null };

export function useUpdateAgent(agentId: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (change: AgentChange) => apiPatch("/admin/ai/agents/{agent_id}", change, { path: { agent_id: agentId } }),
    onSuccess: () =>
      Promise.all(keysChangedByAgentUpdate(agentId).map((queryKey) => client.invalidateQueries({ queryKey }))),
  });
}

export type SkillDraft = {
  id: string;
  agent_id: string;
  title: string;
  category: string;
  description: string;
  sample_prompt: string;
  tool_names: string[];
  enabled: boolean;
};

export function useCreateSkill(agentId: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (draft: SkillDraft) => apiPost("/admin/ai/skills", draft),
    onSuccess: () =>
      Promise.all(keysChangedBySkillCreation(agentId).map((queryKey) => client.invalidateQueries({ queryKey }))),
  });
}
