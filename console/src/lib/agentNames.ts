// Agent ids are what engines write; people know agents by name. The
// registry's list answers both, and one map serves every page.

type Listed = { items: readonly { id: string; name: string }[] };

/** Names by agent id, from the registry's agent list. */
export function namesById(list: Listed): Record<string, string> {
  return Object.fromEntries(list.items.map((agent) => [agent.id, agent.name]));
}

/** An agent as plain text (an option, a chart's summary): its name with its id, or the id alone. */
export function agentLabel(names: Readonly<Record<string, string>>, id: string): string {
  const name = nameOf(names, id);
  return name ? `${name} (${id})` : id;
}

/** The name to show beside an id, or null: the registry does not know it, or names it by its id. */
export function nameOf(names: Readonly<Record<string, string>>, id: string): string | null {
  const name = Object.hasOwn(names, id) ? names[id]?.trim() : undefined;
  return name && name !== id ? name : null;
}
