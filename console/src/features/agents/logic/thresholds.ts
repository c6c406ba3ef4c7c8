// The threshold editor's checks, the same rules the registry applies: a
// finite number, whole for integer keys, within [min, max], and min plus a
// whole number of steps. Checking here lets the operator fix a value before
// saving; the server checks again and its answer is shown on the field.
import { fieldProblems } from "../../../api/client";
import type { ThresholdSpec } from "../../../api/resources";

// The registry's tolerance for floating-point steps (0.1 + 0.2 is on a 0.1 grid).
const STEP_TOLERANCE = 1e-9;

export type Checked = { value: number; problem: null } | { value: null; problem: string };

function onStep(value: number, spec: ThresholdSpec): boolean {
  if (!(spec.step > 0)) return true;
  const steps = (value - spec.min) / spec.step;
  return Math.abs(steps - Math.round(steps)) <= STEP_TOLERANCE * Math.max(1, Math.abs(steps));
}

/**
 * A threshold key in words for its label: "stallMinutes" reads "Stall
 * minutes". The key itself stays beside it, since it is what engines and the
 * audit log name.
 */
export function thresholdLabel(key: string): string {
  const words = key
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1 $2")
    .split(/[\s_-]+/)
    .filter(Boolean)
    .map((word, index) => (/^[A-Z0-9]+$/.test(word) && word.length > 1 ? word : index === 0 ? word.charAt(0).toUpperCase() + word.slice(1).toLowerCase() : word.toLowerCase()));
  return words.join(" ") || key;
}

/** One field as typed (a string from an input) against its schema entry. */
export function checkThreshold(spec: ThresholdSpec, raw: string): Checked {
  const text = raw.trim();
  if (text === "") return { value: null, problem: "required" };
  const value = Number(text);
  if (!Number.isFinite(value)) return { value: null, problem: "must be a finite number" };
  if (spec.type === "integer" && !Number.isInteger(value)) return { value: null, problem: `must be a whole number, got ${text}` };
  if (value < spec.min || value > spec.max) return { value: null, problem: `must be between ${spec.min} and ${spec.max}, got ${text}` };
  if (!onStep(value, spec)) return { value: null, problem: `must be ${spec.min} plus a multiple of ${spec.step}, got ${text}` };
  return { value, problem: null };
}

export type ThresholdForm = Record<string, string>;

export function formFromThresholds(schema: Record<string, ThresholdSpec>, values: Record<string, number>): ThresholdForm {
  return Object.fromEntries(Object.keys(schema).map((key) => [key, String(values[key] ?? schema[key]?.default ?? "")]));
}

/**
 * The patch to send (only keys whose value changed) and the problems per key.
 * A patch is sent only when there are no problems: the registry applies a
 * thresholds patch all or nothing, and so does the form.
 */
export function thresholdPatch(
  schema: Record<string, ThresholdSpec>,
  saved: Record<string, number>,
  form: ThresholdForm,
): { patch: Record<string, number>; problems: Record<string, string> } {
  const patch: Record<string, number> = {};
  const problems: Record<string, string> = {};
  for (const [key, spec] of Object.entries(schema)) {
    const checked = checkThreshold(spec, form[key] ?? "");
    if (checked.problem !== null) problems[key] = checked.problem;
    else if (checked.value !== saved[key]) patch[key] = checked.value;
  }
  return { patch, problems };
}

/** The server's 422 reasons, keyed by threshold, for the fields of this form.
 * The gateway names each refused field by its path: `thresholds.<key>`. */
export function serverProblems(schema: Record<string, ThresholdSpec>, details: Record<string, unknown>): Record<string, string> {
  const fields = fieldProblems(details);
  const problems: Record<string, string> = {};
  for (const key of Object.keys(schema)) {
    const reason = fields[`thresholds.${key}`];
    if (reason !== undefined) problems[key] = reason;
  }
  return problems;
}
