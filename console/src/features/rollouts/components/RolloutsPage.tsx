import { ChoiceField, FilterForm } from "../../../components/FilterForm";
import { Freshness } from "../../../components/Freshness";
import { PageHeader } from "../../../components/PageHeader";
import { PageSizeSelect, Pager, useKeysetPages } from "../../../components/Pager";
import { pageSizeFromSearch, pageSizeToSearch } from "../../../components/pageSize";
import { Empty, QueryView } from "../../../components/States";
import { Time } from "../../../components/Time";
import { useAgentNames } from "../../../components/AgentName";
import { nameOf } from "../../../lib/agentNames";
import { formatRate } from "../../../lib/format";
import { Link, useSearch } from "../../../lib/router";
import { changeInWords, filtersFromSearch, filtersToSearch, ROLLOUT_STATES, type RolloutFilters } from "../logic/rollouts";
import { PAGE_SIZE, useRollouts } from "../api/queries";
import { RolloutStateBadge } from "./RolloutStateBadge";

export function RolloutsPage() {
  const [search] = useSearch();
  const filters = filtersFromSearch(search);
  const limit = pageSizeFromSearch(search, PAGE_SIZE);
  const withLimit = (next: Record<string, string>, size = limit) => ({ ...next, ...pageSizeToSearch(size, PAGE_SIZE) });
  const pages = useKeysetPages((cursor) => withLimit(filtersToSearch(filters, cursor)));
  const rollouts = useRollouts(filters, pages.cursor, limit);
  const names = useAgentNames();

  return (
    <>
      <PageHeader title="Rollouts">{rollouts.data ? <Freshness fetchedAt={rollouts.dataUpdatedAt} /> : null}</PageHeader>
      <p className="hint">
        A change rolled out to a share of subjects, advanced step by step or halted by its guard on judged outcomes. Start
        one from an agent's page with “Roll out gradually”.
      </p>
      <Filters key={`${filters.agent}|${filters.state}`} filters={filters} agents={Object.keys(names)} onApply={(next) => pages.restart(withLimit(filtersToSearch(next)))} />
      <QueryView query={rollouts} what="rollouts">
        {(page) =>
          page.items.length === 0 ? (
            <Empty>{filters.agent || filters.state ? "No rollout matches these filters." : "No change has been rolled out yet."}</Empty>
          ) : (
            <>
              <div className="table-wrap" tabIndex={0} role="region" aria-label="Rollouts, scrolls sideways on a narrow screen">
                <table>
                  <caption className="caption">Newest first.</caption>
                  <thead>
                    <tr>
                      <th scope="col">Agent</th>
                      <th scope="col">Decision type</th>
                      <th scope="col">Change</th>
                      <th scope="col" className="num">
                        Share
                      </th>
                      <th scope="col">State</th>
                      <th scope="col" className="num">
                        p_harm
                      </th>
                      <th scope="col">Updated</th>
                    </tr>
                  </thead>
                  <tbody>
                    {page.items.map((rollout) => (
                      <tr key={rollout.id}>
                        <td>
                          <Link to={`/rollouts/${rollout.id}`}>{nameOf(names, rollout.agent_id) ?? rollout.agent_id}</Link>
                          {nameOf(names, rollout.agent_id) ? (
                            <div className="cell-note">
                              <code>{rollout.agent_id}</code>
                            </div>
                          ) : null}
                        </td>
                        <td>{rollout.decision_type}</td>
                        <td className="cell-change">{changeInWords(rollout.change, rollout.baseline)}</td>
                        <td className="num">{rollout.percent} %</td>
                        <td>
                          <RolloutStateBadge state={rollout.state} />
                        </td>
                        <td className="num">{formatRate(rollout.p_harm, 1)}</td>
                        <td>
                          <Time iso={rollout.updated_at} />
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
              <Pager pages={pages} nextCursor={page.next_cursor} label="Rollout pages" previousLabel="Previous page" nextLabel="Next page">
                <span className="hint" aria-live="polite">
                  Page {pages.number} · {page.items.length} of at most {limit}
                </span>
                <PageSizeSelect id="rollouts-limit" value={limit} onChange={(size) => pages.restart(withLimit(filtersToSearch(filters), size))} />
              </Pager>
            </>
          )
        }
      </QueryView>
    </>
  );
}

function Filters({ filters, agents, onApply }: { filters: RolloutFilters; agents: string[]; onApply: (next: RolloutFilters) => void }) {
  return (
    <FilterForm label="Filter rollouts" filters={filters} onApply={onApply}>
      {({ draft, set }) => (
        <>
          <ChoiceField id="ro-agent" label="Agent" value={draft.agent} anyLabel="Any agent" choices={[...agents].sort()} onChange={(value) => set("agent", value)} />
          <ChoiceField id="ro-state" label="State" value={draft.state} anyLabel="Any state" choices={ROLLOUT_STATES} onChange={(value) => set("state", value)} />
        </>
      )}
    </FilterForm>
  );
}
