import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { apiGet, apiPatch, apiPost } from "../../../api/client";
import type { AgentPatch, AuditEntity, Skill, SkillPatch } from "../../../api/resources";
import type { SkillForm } from "../logic/newSkill";
import { agentKeys, keysChangedByAgentUpdate, keysChangedBySkillCreation, keysChangedBySkillUpdate } from "./keys";

export function useAgents() {
  return useQuery({
    queryKey: agentKeys.list(),
    queryFn: () => apiGet("/admin/ai/agents"),
  });
}

/**
 * How often an open Agent Studio looks again, so a colleague's change shows
 * without a reload. Cheap: the gateway answers an unchanged agent 304 to the
 * browser's If-None-Match (its ETag), so nothing is sent or redrawn.
 */
export const AGENT_REFRESH_MS = 10_000;

export function useAgent(id: string) {
  return useQuery({
    queryKey: agentKeys.detail(id),
    queryFn: () => apiGet("/admin/ai/agents/{agent_id}", { path: { agent_id: id } }),
    refetchInterval: AGENT_REFRESH_MS,
  });
}

/** The models this agent has evidence for, and the patterns any other pin must match. */
export function useAgentModels(id: string, enabled: boolean) {
  return useQuery({
    queryKey: agentKeys.models(id),
    queryFn: () => apiGet("/admin/ai/agents/{agent_id}/models", { path: { agent_id: id } }),
    enabled,
  });
}

/** Each agent's live state (silent / idle / running) from the last day's insights. */
export function useLiveStates() {
  return useQuery({
    queryKey: agentKeys.live(),
    queryFn: async () => {
      const insights = await apiGet("/admin/ai/insights", { query: { days: 1 } });
      return Object.fromEntries(insights.agents.map((a) => [a.agent_id, a.state]));
    },
  });
}

export function useHistory(entity: AuditEntity, id: string, enabled: boolean) {
  return useQuery({
    queryKey: agentKeys.history(entity, id),
    queryFn: () => apiGet("/admin/ai/audit", { query: { entity, entity_id: id, limit: 10 } }),
    enabled,
  });
}

/** A skill's change always carries the version it was made on, so a concurrent change is refused (409). */
export type SkillChange = SkillPatch & Required<Pick<SkillPatch, "version">>;

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

export function useUpdateAgent(agentId: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (change: AgentPatch) => apiPatch("/admin/ai/agents/{agent_id}", change, { path: { agent_id: agentId } }),
    onSuccess: () =>
      Promise.all(keysChangedByAgentUpdate(agentId).map((queryKey) => client.invalidateQueries({ queryKey }))),
  });
}

export function useCreateSkill(agentId: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (draft: SkillForm) => apiPost("/admin/ai/skills", draft),
    onSuccess: () =>
      Promise.all(keysChangedBySkillCreation(agentId).map((queryKey) => client.invalidateQueries({ queryKey }))),
  });
}
