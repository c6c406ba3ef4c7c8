import type { DecisionFilters } from "../logic/filters";

export const decisionKeys = {
  all: ["decisions"] as const,
  lists: () => [...decisionKeys.all, "list"] as const,
  list: (filters: DecisionFilters, cursor: string, limit: number) => [...decisionKeys.lists(), filters, cursor, limit] as const,
  detail: (id: string) => [...decisionKeys.all, "detail", id] as const,
  choices: () => [...decisionKeys.all, "choices"] as const,
  // Apart from detail(id): a verdict refreshes the detail, and every read of
  // a context is an audit row, so nothing but the person's click reads it.
  context: (id: string) => [...decisionKeys.all, "context", id] as const,
};

/**
 * A human verdict changes that decision's detail and every listing, since an
 * outcome filter may now include or exclude it. Other decisions' details are
 * untouched: a decision's precedents are judged decisions of other subjects,
 * and a re-judged precedent shows its new outcome when its page is next read.
 */
export function keysChangedByRejudge(decisionId: string): (readonly unknown[])[] {
  return [decisionKeys.detail(decisionId), decisionKeys.lists()];
}
