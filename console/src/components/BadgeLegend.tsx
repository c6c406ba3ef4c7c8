import type { ReactNode } from "react";
import { OUTCOME_HELP, OutcomeBadge, STATE_HELP, STATUS_HELP, StateBadge, StatusBadge } from "./Badges";

type Kind = "status" | "state" | "outcome";

const GROUPS: Record<Kind, { title: string; help: Record<string, string>; badge: (word: string) => ReactNode }> = {
  status: { title: "Status: how far an agent is built", help: STATUS_HELP, badge: (word) => <StatusBadge status={word} /> },
  state: { title: "State: what it is doing now", help: STATE_HELP, badge: (word) => <StateBadge state={word} /> },
  outcome: { title: "Outcome: how a decision turned out", help: OUTCOME_HELP, badge: (word) => <OutcomeBadge outcome={word} /> },
};

/** A closed "what the badges mean" beside the tables that show them, each badge drawn as it appears. */
export function BadgeLegend({ kinds }: { kinds: Kind[] }) {
  return (
    <details className="badge-legend">
      <summary>What the badges mean</summary>
      {kinds.map((kind) => (
        <div key={kind} className="badge-legend-group">
          <p className="badge-legend-title">{GROUPS[kind].title}</p>
          <dl className="badge-legend-list">
            {Object.entries(GROUPS[kind].help).map(([word, help]) => (
              <div key={word} className="badge-legend-row">
                <dt>{GROUPS[kind].badge(word)}</dt>
                <dd>{help}</dd>
              </div>
            ))}
          </dl>
        </div>
      ))}
    </details>
  );
}
