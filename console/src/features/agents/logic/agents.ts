import type { Agent } from "../../../api/resources";

/** Where the page opens: the first agent that has skills, not one with nothing to show. */
export function firstAgentWithSkills(agents: Agent[]): string | undefined {
  return (agents.find((agent) => agent.skill_count > 0) ?? agents[0])?.id;
}

/**
 * The agents a search finds: every word of it in the agent's name or id, in
 * any case and order, so "dispatch express" finds EXPRESS_DISPATCH_AGENT.
 */
export function agentsMatching(agents: Agent[], search: string): Agent[] {
  const words = search.toLowerCase().split(/[\s_]+/).filter(Boolean);
  if (words.length === 0) return agents;
  return agents.filter((agent) => {
    const text = `${agent.name} ${agent.id}`.toLowerCase();
    return words.every((word) => text.includes(word));
  });
}

/** The model ids the registry accepts as a pin (its MODEL_ID_PATTERN). */
const MODEL_ID = /^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$/;

/** A shell-style pattern (`*`, `?`, `[...]`) as the registry's fnmatchcase reads it. */
function patternRegex(pattern: string): RegExp {
  let source = "";
  for (let i = 0; i < pattern.length; i++) {
    const char = pattern.charAt(i);
    if (char === "*") source += ".*";
    else if (char === "?") source += ".";
    else if (char === "[") {
      const end = pattern.indexOf("]", i + 2);
      if (end < 0) {
        source += "\\[";
        continue;
      }
      const body = pattern.slice(i + 1, end);
      source += `[${body.startsWith("!") ? "^" + body.slice(1) : body.replace(/\\/g, "\\\\")}]`;
      i = end;
    } else source += char.replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&");
  }
  return new RegExp(`^${source}$`);
}

/**
 * Why a typed model id would be refused, in the operator's words, or null when
 * the registry will take it. Checked here so the confirm step never offers a
 * change the PATCH refuses; the registry still checks it again.
 */
export function modelIdProblem(model: string, allowedPatterns: string[]): string | null {
  if (!model) return "Type a model id.";
  if (!MODEL_ID.test(model)) return "A model id is letters, digits and . _ : @ - only, starting with a letter or digit.";
  if (!allowedPatterns.some((pattern) => patternRegex(pattern).test(model)))
    return `This deployment only allows models matching ${allowedPatterns.join(", ")}.`;
  return null;
}

const EVIDENCE_WORDS: Record<string, string> = {
  pin: "pinned now",
  decisions: "in its decisions",
  routing: "in routing",
  telemetry: "in model calls",
};

/** Where a model was seen, as an option's note: "in its decisions, in routing". */
export function evidenceNote(seenIn: string[]): string {
  return seenIn.map((where) => EVIDENCE_WORDS[where] ?? where).join(", ");
}

/**
 * Where an agent's routing is read: an engine's decisions are routed by
 * their decision type, which its skills are named after; a console agent's
 * conversations by skill. Its first skill is the one opened.
 */
export function routingPath(agent: { runtime: string; skills: { id: string }[] }): string {
  const first = agent.skills[0]?.id;
  if (first === undefined) return "/routing";
  const by = agent.runtime === "engine" ? "decision_type" : "skill";
  return `/routing?${new URLSearchParams({ [by]: first }).toString()}`;
}
