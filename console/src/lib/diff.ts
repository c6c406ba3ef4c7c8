// What one audit row changed, as lines a person reads: the audit log and
// Agent Studio's recent changes show the same words for the same change.

/** One changed key of one audit row: its dotted path, and the value before and after in words. */
export type DiffLine = { key: string; before: string; after: string };

const NOTHING = "—";

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Every leaf of a value under its dotted path; a list is one leaf, an empty object none. */
function leaves(value: unknown, path: string, into: Map<string, unknown>): Map<string, unknown> {
  if (isRecord(value)) {
    for (const [key, inner] of Object.entries(value)) leaves(inner, path ? `${path}.${key}` : key, into);
  } else if (value !== null && value !== undefined) {
    into.set(path, value);
  }
  return into;
}

export function valueInWords(value: unknown): string {
  if (value === null || value === undefined) return NOTHING;
  if (typeof value === "string") return value === "" ? "“”" : value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return JSON.stringify(value);
}

/**
 * What one audit row changed: the keys whose value differs, old → new,
 * nested objects flattened to dotted keys under the row's field, in the
 * order the keys first appear. A key only before was removed (→ —), one
 * only after was added (— →).
 */
export function auditDiff(field: string, before: unknown, after: unknown): DiffLine[] {
  const old = leaves(before, field, new Map());
  const now = leaves(after, field, new Map());
  const keys = [...new Set([...old.keys(), ...now.keys()])];
  return keys
    .map((key) => ({ key, before: valueInWords(old.get(key)), after: valueInWords(now.get(key)) }))
    .filter((line) => line.before !== line.after);
}
