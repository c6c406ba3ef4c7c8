// The audit log's filters as the URL keeps them, and where each changed
// thing is shown. Kept apart from React so it can be tested with plain
// values.
import { urlInstant } from "../../../lib/format";

export const AUDIT_ENTITIES = ["agent", "skill", "rollout", "decision", "subject", "run"] as const;
export type AuditEntityName = (typeof AUDIT_ENTITIES)[number];

/** The listing's filters as the URL keeps them: times as RFC 3339 instants. */
export type AuditFilters = { entity: string; entity_id: string; actor: string; from: string; to: string };

const FIELDS: (keyof AuditFilters)[] = ["entity", "entity_id", "actor", "from", "to"];

export const NO_FILTERS: AuditFilters = { entity: "", entity_id: "", actor: "", from: "", to: "" };

export function filtersFromSearch(search: URLSearchParams): AuditFilters {
  const filters = Object.fromEntries(FIELDS.map((field) => [field, search.get(field) ?? ""])) as AuditFilters;
  return { ...filters, from: urlInstant(filters.from), to: urlInstant(filters.to) };
}

/** Only the filters set, so a shared link carries no empty parameters. */
export function filtersToSearch(filters: AuditFilters, cursor = ""): Record<string, string> {
  const set = Object.entries({ ...filters, cursor }).filter(([, value]) => value !== "");
  return Object.fromEntries(set);
}

/** The gateway's query. */
export function filtersToQuery(filters: AuditFilters) {
  return {
    entity: AUDIT_ENTITIES.find((entity) => entity === filters.entity),
    entity_id: filters.entity_id,
    actor: filters.actor,
    from: filters.from || undefined,
    to: filters.to || undefined,
  };
}

/** Why a time range cannot be asked for, or null when it can. */
export function rangeProblem(filters: AuditFilters): string | null {
  const { from, to } = filters;
  if (from && to && Date.parse(to) <= Date.parse(from)) return "“Changed before” must be later than “Changed from”.";
  return null;
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
