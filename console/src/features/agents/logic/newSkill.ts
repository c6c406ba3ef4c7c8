import type { SkillDraft } from "../../../api/resources";

/** What the new-skill form fills in: every field of a draft but the thresholds, which a console skill starts without. */
export type SkillForm = Required<Omit<SkillDraft, "thresholds" | "thresholds_schema">>;

// The registry's id rule: lowercase words joined by single underscores.
const SKILL_ID = /^[a-z][a-z0-9]*(_[a-z0-9]+)*$/;
const MAX_ID = 64;

export function emptyDraft(agentId: string): SkillForm {
  return { id: "", agent_id: agentId, title: "", category: "custom", description: "", sample_prompt: "", tool_names: [], enabled: false };
}

/** What the form can tell before asking the registry, which checks again. */
export function draftProblems(draft: SkillForm): Record<string, string> {
  const problems: Record<string, string> = {};
  if (!draft.id) problems.id = "required: a lowercase snake_case id";
  else if (draft.id.length > MAX_ID) problems.id = `at most ${MAX_ID} characters, got ${draft.id.length}`;
  else if (!SKILL_ID.test(draft.id)) problems.id = "must be lowercase snake_case: letters, digits and single underscores, starting with a letter";
  if (!draft.title.trim()) problems.title = "required";
  if (draft.tool_names.length === 0) problems.tool_names = "choose at least one tool";
  return problems;
}
