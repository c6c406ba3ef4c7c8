import type { Alert } from "../../../api/resources";
import { PageHeader } from "../../../components/PageHeader";
import { Pager, useKeysetPages } from "../../../components/Pager";
import { Empty, QueryView } from "../../../components/States";
import { Time } from "../../../components/Time";
import { Link } from "../../../lib/router";
import { useFiringAlerts, useResolvedAlerts } from "../api/queries";
import { decisionsLink, ruleInWords, valueAgainstThreshold } from "../logic/alerts";
import { AgentName } from "../../../components/AgentName";

export function AlertsPage() {
  const pages = useKeysetPages((cursor): Record<string, string> => (cursor ? { cursor } : {}));
  const firing = useFiringAlerts();
  const resolved = useResolvedAlerts(pages.cursor);
  return (
    <>
      <PageHeader title="Alerts" />
      <p className="hint">What the platform's rules raised: a drop in judged success, a silent agent, ingest behind, a stream filling up, a halted rollout.</p>
      <section aria-labelledby="firing-heading">
        <h3 id="firing-heading">Firing</h3>
        <QueryView query={firing} what="firing alerts">
          {(page) => (page.items.length === 0 ? <Empty>Nothing is firing.</Empty> : <AlertList alerts={page.items} />)}
        </QueryView>
      </section>
      <section aria-labelledby="resolved-heading">
        <h3 id="resolved-heading">Resolved</h3>
        <QueryView query={resolved} what="resolved alerts">
          {(page) =>
            page.items.length === 0 ? (
              <Empty>No alert has resolved yet.</Empty>
            ) : (
              <>
                <AlertList alerts={page.items} />
                <Pager pages={pages} nextCursor={page.next_cursor} label="Resolved alerts pages" previousLabel="Newer" nextLabel="Older">
                  <span>Page {pages.number}</span>
                </Pager>
              </>
            )
          }
        </QueryView>
      </section>
    </>
  );
}

function AlertList({ alerts }: { alerts: Alert[] }) {
  return (
    <ul className="alerts">
      {alerts.map((alert) => {
        const decisions = decisionsLink(alert.agent_id, alert.decision_type);
        return (
          <li key={alert.id} className={`alert alert-${alert.state}`}>
            <p className="alert-rule">
              <span className={`badge alert-state-${alert.state}`}>{alert.state}</span>{" "}
              <strong>{ruleInWords(alert.rule)}</strong> <code>{alert.rule}</code>
            </p>
            <p>{alert.summary}</p>
            <dl className="facts">
              <dt>Measured</dt>
              <dd>{valueAgainstThreshold(alert.rule, alert.value, alert.threshold)}</dd>
              <dt>Started</dt>
              <dd>
                <Time iso={alert.started_at} />
              </dd>
              <dt>Resolved</dt>
              <dd>
                <Time iso={alert.resolved_at} empty="not yet" />
              </dd>
            </dl>
            <p className="alert-links">
              {alert.agent_id ? (
                <Link to={`/agents/${encodeURIComponent(alert.agent_id)}`}>
                  <AgentName id={alert.agent_id} /> in Agent Studio
                </Link>
              ) : null}
              {decisions ? <Link to={decisions}>Decisions of {alert.decision_type}</Link> : null}
              {alert.rollout_id ? <Link to={`/rollouts/${encodeURIComponent(alert.rollout_id)}`}>The rollout</Link> : null}
            </p>
          </li>
        );
      })}
    </ul>
  );
}
