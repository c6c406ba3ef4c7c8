import { useCanWrite } from "../../../lib/SessionContext";
import { KindBadge, StatusBadge } from "../../../components/Badges";
import { Empty, QueryView } from "../../../components/States";
import { Link } from "../../../lib/router";
import { Freshness } from "../../../components/Freshness";
import { useAgent } from "../api/queries";
import { AutonomyControl } from "./AutonomyControl";
import { AutonomyEvidence } from "./AutonomyEvidence";
import { History } from "./History";
import { ModelPicker } from "./ModelPicker";
import { PinEstimates } from "./PinEstimates";
import { RolloutLauncher } from "./RolloutLauncher";
import { SkillCard } from "./SkillCard";
import { routingPath } from "../logic/agents";

export function AgentStudio({ agentId }: { agentId: string }) {
  const agent = useAgent(agentId);
  const canWrite = useCanWrite();
  return (
    <QueryView query={agent} what={`agent ${agentId}`}>
      {(detail) => (
        <article className="studio">
          <header className="studio-header">
            <h2>
              {detail.name} <StatusBadge status={detail.status} />
            </h2>
            <p className="hint" aria-live="off">
              <Freshness fetchedAt={agent.dataUpdatedAt} />
            </p>
            <p className="studio-id">
              <code>{detail.id}</code> · runs in the {detail.runtime} · <code>{detail.class_ref}</code>
            </p>
            <nav aria-label={`Views of ${detail.name}`} className="studio-links">
              <Link to={`/decisions?${new URLSearchParams({ agent_id: detail.id }).toString()}`}>Decisions</Link>
              {" · "}
              <Link to={`/runs?${new URLSearchParams({ agent_id: detail.id }).toString()}`}>Runs</Link>
              {" · "}
              <Link to={`/insights?${new URLSearchParams({ agent: detail.id }).toString()}`}>Insights</Link>
              {" · "}
              <Link to={routingPath(detail)}>Routing</Link>
              {" · "}
              <Link to={`/audit?${new URLSearchParams({ entity: "agent", entity_id: detail.id }).toString()}`}>Audit</Link>
            </nav>
            {detail.status === "simulation" ? (
              <p className="notice notice-warn">Simulation: this agent runs on invented data. Nothing it reports is real.</p>
            ) : null}
            {detail.status_note ? <p className="status-note">{detail.status_note}</p> : null}
            <p>{detail.purpose}</p>
          </header>

          <section aria-labelledby="config-heading" className="panel">
            <h3 id="config-heading">Configuration</h3>
            <dl className="facts">
              {detail.has_autonomy_gate ? (
                <AutonomyControl agent={detail} />
              ) : (
                <>
                  <dt>Autonomy</dt>
                  <dd>No autonomy gate: this agent never acts without a person.</dd>
                </>
              )}
              <AutonomyEvidence agent={detail} />
              {detail.runtime === "engine" ? (
                <ModelPicker agent={detail} />
              ) : (
                <>
                  <dt>Model</dt>
                  <dd>Runs in the console; it reads no model pin.</dd>
                </>
              )}
              <PinEstimates agent={detail} />
            </dl>
            <RolloutLauncher agent={detail} />
            <History entity="agent" id={detail.id} />
          </section>

          <section aria-labelledby="skills-heading">
            <div className="section-head">
              <h3 id="skills-heading">Skills</h3>
              {canWrite && detail.runtime === "console" ? (
                <Link to={`/agents/${encodeURIComponent(detail.id)}/skills/new`} className="button">
                  New skill
                </Link>
              ) : null}
            </div>
            {detail.skills.length === 0 ? (
              <Empty>This agent has no skills.</Empty>
            ) : (
              detail.skills.map((skill) => <SkillCard key={skill.id} skill={skill} tools={detail.tools} />)
            )}
          </section>

          <section aria-labelledby="tools-heading">
            <h3 id="tools-heading">Tools</h3>
            {detail.tools.length === 0 ? (
              <Empty>This agent uses no tools.</Empty>
            ) : (
              <div className="table-wrap" tabIndex={0} role="region" aria-label="Tools, scrolls sideways on a narrow screen">
                <table>
                  <thead>
                    <tr>
                      <th scope="col">Tool</th>
                      <th scope="col">Kind</th>
                      <th scope="col">Target</th>
                      <th scope="col">Needs a person</th>
                    </tr>
                  </thead>
                  <tbody>
                    {detail.tools.map((tool) => (
                      <tr key={tool.name}>
                        <td>
                          <code>{tool.name}</code>
                          <div className="cell-note">{tool.description}</div>
                        </td>
                        <td>
                          <KindBadge kind={tool.kind} />
                        </td>
                        <td>{tool.target}</td>
                        <td>{tool.requires_confirmation ? "yes" : "no"}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            )}
          </section>
        </article>
      )}
    </QueryView>
  );
}
