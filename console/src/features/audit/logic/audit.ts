// The audit log's filters as the URL keeps them, each row's change as
// lines a person reads, and where each changed thing is shown. Kept apart
// from React so it can be tested with plain values.
import { localInputToInstant } from "../../../lib/format";

export const AUDIT_ENTITIES = ["agent", "skill", "rollout", "decision", "subject", "run"] as const;
export type AuditEntityName = (typeof AUDIT_ENTITIES)[number];

/** The listing's filters as the URL keeps them: times as local input values. */
export type AuditFilters = { entity: string; entity_id: string; actor: string; from: string; to: string };

const FIELDS: (keyof AuditFilters)[] = ["entity", "entity_id", "actor", "from", "to"];

export function filtersFromSearch(search: URLSearchParams): AuditFilters {
  return Object.fromEntries(FIELDS.map((field) => [field, search.get(field) ?? ""])) as AuditFilters;
}

/** Only the filters set, so a shared link carries no empty parameters. */
export function filtersToSearch(filters: AuditFilters, cursor = ""): Record<string, string> {
  const set = Object.entries({ ...filters, cursor }).filter(([, value]) => value !== "");
  return Object.fromEntries(set);
}

/** The gateway's query: the operator's wall times become instants with an offset. */
export function filtersToQuery(filters: AuditFilters) {
  return {
    entity: AUDIT_ENTITIES.find((entity) => entity === filters.entity),
    entity_id: filters.entity_id,
    actor: filters.actor,
    from: localInputToInstant(filters.from) || undefined,
    to: localInputToInstant(filters.to) || undefined,
  };
}

/** Why a time range cannot be asked for, or null when it can. */
export function rangeProblem(filters: AuditFilters): string | null {
  const from = localInputToInstant(filters.from);
  const to = localInputToInstant(filters.to);
  if (from && to && to <= from) return "“Changed before” must be later than “Changed from”.";
  return null;
}

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

/** Where the thing an audit row changed is shown; a skill is shown in its agent's studio. */
export function entityPath(entity: string, id: string, skillAgents: Record<string, string>): string | null {
  const encoded = encodeURIComponent(id);
  switch (entity) {
    case "agent":
      return `/agents/${encoded}`;
    case "skill": {
      const agent = skillAgents[id];
      return agent ? `/agents/${encodeURIComponent(agent)}` : null;
    }
    case "rollout":
      return `/rollouts/${encoded}`;
    case "decision":
      return `/decisions/${encoded}`;
    case "subject":
      return `/decisions?subject_id=${encoded}`;
    case "run":
      return `/playground/runs/${encoded}`;
    default:
      return null;
  }
}
