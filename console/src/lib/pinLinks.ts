// A link from the evidence for a model to the place its pin is changed: the
// agent's studio with the model chosen in its picker, still to be reviewed
// and confirmed there. A link never changes a pin by itself.

/** The agent's studio with `model` chosen in its model picker. */
export function pinPath(agentId: string, model: string): string {
  return `/agents/${encodeURIComponent(agentId)}?${new URLSearchParams({ pin: model }).toString()}`;
}

/** The model a link asked the picker to choose, or "" for none. */
export function pinAsked(search: URLSearchParams): string {
  return (search.get("pin") ?? "").trim();
}
