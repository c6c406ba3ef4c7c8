// The "Roll out gradually" form: what it starts from and the draft it sends.
// Guard and step defaults are the registry's (DESIGN §9), shown so an
// operator sees what they accept by leaving them alone.
import type { RolloutDraft } from "../../../api/resources";

export const SAFE_STEPS = [5, 25, 50, 100];
export const GUARD_DEFAULTS = { maxDrop: "0.05", confidenceLevel: "0.95", minJudged: "50" };

export type RolloutForm = {
  decisionType: string;
  steps: string;
  maxDrop: string;
  confidenceLevel: string;
  minJudged: string;
};

export function emptyRolloutForm(decisionType = ""): RolloutForm {
  return { decisionType, steps: SAFE_STEPS.join(", "), ...GUARD_DEFAULTS };
}

/** Steps from "5, 25, 50, 100": null unless strictly increasing whole percents ending at 100. */
export function parseSteps(text: string): number[] | null {
  const parts = text.split(/[\s,]+/).filter(Boolean);
  const steps = parts.map(Number);
  if (steps.length === 0 || steps.some((s) => !Number.isInteger(s) || s < 1 || s > 100)) return null;
  if (steps.some((s, i) => i > 0 && s <= (steps[i - 1] as number))) return null;
  return steps[steps.length - 1] === 100 ? steps : null;
}

/** The form's problems by field, and the draft when there are none. */
export function rolloutDraft(
  agentId: string,
  change: Record<string, unknown>,
  form: RolloutForm,
): { draft: RolloutDraft | null; problems: Partial<Record<keyof RolloutForm, string>> } {
  const problems: Partial<Record<keyof RolloutForm, string>> = {};
  const decisionType = form.decisionType.trim();
  if (!/^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$/.test(decisionType)) problems.decisionType = "lowercase_snake_case, as the agent records it";
  const steps = parseSteps(form.steps);
  if (steps === null) problems.steps = "whole percents from 1 to 100, each above the last, ending at 100";
  const maxDrop = Number(form.maxDrop);
  if (form.maxDrop.trim() === "" || !(maxDrop > 0 && maxDrop < 1)) problems.maxDrop = "a fraction above 0 and below 1";
  const confidence = Number(form.confidenceLevel);
  if (form.confidenceLevel.trim() === "" || !(confidence > 0.5 && confidence < 1)) problems.confidenceLevel = "above 0.5 and below 1";
  const minJudged = Number(form.minJudged);
  if (!Number.isInteger(minJudged) || minJudged < 1 || minJudged > 1_000_000) problems.minJudged = "a whole number from 1 to 1,000,000";
  if (Object.keys(problems).length > 0 || steps === null) return { draft: null, problems };
  return {
    draft: {
      agent_id: agentId,
      decision_type: decisionType,
      change,
      steps,
      guard: { max_drop: maxDrop, confidence, min_judged: minJudged },
    },
    problems,
  };
}
