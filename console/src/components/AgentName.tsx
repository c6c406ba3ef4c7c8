import { useQuery } from "@tanstack/react-query";
import { apiGet } from "../api/client";
import { nameOf, namesById } from "../lib/agentNames";
import { Link } from "../lib/router";

// The agents feature's list key: every page reading names shares the one
// cached answer with the Agents page, and an agent's update refreshes both.
export const AGENT_LIST_KEY = ["agents", "list"] as const;

/** Names by agent id; empty until the registry answers (ids show alone meanwhile). */
export function useAgentNames(): Record<string, string> {
  const names = useQuery({
    queryKey: AGENT_LIST_KEY,
    queryFn: () => apiGet("/admin/ai/agents"),
    select: namesById,
    staleTime: 60_000,
  });
  return names.data ?? {};
}

/** An agent by name with its id beside it; an id the registry does not know shows alone. */
export function AgentName({ id, link = false }: { id: string; link?: boolean }) {
  const name = nameOf(useAgentNames(), id);
  const shown = name ? (
    <>
      {name} <code className="agent-ref-id">{id}</code>
    </>
  ) : (
    <code className="agent-ref-id">{id}</code>
  );
  return (
    <span className="agent-ref">
      {link ? <Link to={`/agents/${encodeURIComponent(id)}`}>{shown}</Link> : shown}
    </span>
  );
}
