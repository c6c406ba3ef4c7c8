import type { Agent } from "../../../api/resources";

/** Where the page opens: the first agent that has skills, not one with nothing to show. */
export function firstAgentWithSkills(agents: Agent[]): string | undefined {
  return (agents.find((agent) => agent.skill_count > 0) ?? agents[0])?.id;
}

/** The model pins the picker offers: these, the agent's current pin, and the engine default. */
export const MODEL_CHOICES = ["claude-opus-5-5", "claude-sonnet-5-5", "claude-opus-4-8"];

export function modelOptions(current: string | null): string[] {
  return current && !MODEL_CHOICES.includes(current) ? [...MODEL_CHOICES, current] : MODEL_CHOICES;
}
