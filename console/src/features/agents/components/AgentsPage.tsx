import { useEffect, useState } from "react";
import { PageHeader } from "../../../components/PageHeader";
import { StateBadge, StatusBadge } from "../../../components/Badges";
import { Empty, QueryView } from "../../../components/States";
import { Link, navigate } from "../../../lib/router";
import { agentsMatching, firstAgentWithSkills } from "../logic/agents";
import { useAgents, useLiveStates } from "../api/queries";
import { AgentStudio } from "./AgentStudio";
import { BadgeLegend } from "../../../components/BadgeLegend";

export function AgentsPage({ agentId }: { agentId?: string }) {
  const agents = useAgents();
  const live = useLiveStates();
  const [search, setSearch] = useState("");
  const opening = agentId === undefined && agents.data ? firstAgentWithSkills(agents.data.items) : undefined;

  useEffect(() => {
    if (opening) navigate(`/agents/${encodeURIComponent(opening)}`, { replace: true });
  }, [opening]);

  return (
    <div className="split">
      <section className="split-list" aria-labelledby="agents-heading">
        <PageHeader title="Agents" />
        <h2 id="agents-heading" className="visually-hidden">
          All agents
        </h2>
        <QueryView query={agents} what="agents">
          {(page) =>
            page.items.length === 0 ? (
              <Empty>The registry lists no agents yet. Run `outrider seed` to load the example inventory.</Empty>
            ) : (
              <>
                <div className="field list-search">
                  <label htmlFor="agent-search">Find an agent</label>
                  <input
                    id="agent-search"
                    type="search"
                    value={search}
                    onChange={(event) => setSearch(event.target.value)}
                    placeholder="name or id"
                    autoComplete="off"
                    aria-keyshortcuts="/"
                    data-page-search=""
                  />
                </div>
                {agentsMatching(page.items, search).length === 0 ? <Empty>No agent's name or id has {search}.</Empty> : null}
                <ul className="agent-list">
                  {agentsMatching(page.items, search).map((agent) => (
                    <li key={agent.id}>
                      <Link
                        to={`/agents/${encodeURIComponent(agent.id)}`}
                        className="agent-item"
                        aria-current={agent.id === agentId ? "page" : undefined}
                      >
                        <span className="agent-item-head">
                          <span className="agent-name">{agent.name}</span>
                          <StatusBadge status={agent.status} />
                        </span>
                        <span className="agent-item-meta">
                          <span>{agent.runtime}</span>
                          <span>
                            {agent.skill_count} {agent.skill_count === 1 ? "skill" : "skills"} · {agent.tool_count}{" "}
                            {agent.tool_count === 1 ? "tool" : "tools"}
                          </span>
                          <span>{agent.model ?? (agent.runtime === "engine" ? "engine default" : "no model")}</span>
                          {live.data ? <StateBadge state={live.data[agent.id] ?? "silent"} /> : null}
                          {agent.autonomous ? <span className="badge badge-autonomous">autonomous</span> : null}
                        </span>
                      </Link>
                    </li>
                  ))}
                </ul>
              </>
            )
          }
        </QueryView>
        {live.error ? <p className="hint">Live state unavailable: {live.error.message}</p> : null}
        <BadgeLegend kinds={["status", "state"]} />
      </section>
      <section className="split-detail" aria-label="Agent Studio">
        {agentId ? <AgentStudio agentId={agentId} /> : agents.data ? <Empty>Choose an agent.</Empty> : null}
      </section>
    </div>
  );
}
