import { useState, type SubmitEvent } from "react";
import { PageHeader } from "../../../components/PageHeader";
import { PageSizeSelect, Pager, useKeysetPages } from "../../../components/Pager";
import { pageSizeFromSearch, pageSizeToSearch } from "../../../components/pageSize";
import { Empty, QueryView } from "../../../components/States";
import { Time } from "../../../components/Time";
import { formatMs } from "../../../lib/format";
import { Link, useSearch } from "../../../lib/router";
import { runPath } from "../../../lib/runLinks";
import { activeFilterCount, filtersFromSearch, filtersToSearch, NO_FILTERS, STATUSES, type RunFilters } from "../logic/filters";
import { PAGE_SIZE, useRunAgents, useRuns } from "../api/queries";
import { RunStatusBadge } from "./RunStatusBadge";
import { AgentName } from "../../../components/AgentName";

export function RunsPage() {
  const [search] = useSearch();
  const filters = filtersFromSearch(search);
  const limit = pageSizeFromSearch(search, PAGE_SIZE);
  const withLimit = (next: Record<string, string>, size = limit) => ({ ...next, ...pageSizeToSearch(size, PAGE_SIZE) });
  const pages = useKeysetPages((cursor) => withLimit(filtersToSearch(filters, cursor)));
  const runs = useRuns(filters, pages.cursor, limit);

  return (
    <>
      <PageHeader title="Runs" />
      {/* Keyed by the URL's filters, so a link from Insights shows in the form too. */}
      <Filters key={JSON.stringify(filters)} filters={filters} onApply={(next) => pages.restart(withLimit(filtersToSearch(next)))} />
      <QueryView query={runs} what="runs">
        {(page) =>
          page.items.length === 0 ? (
            <Empty>{activeFilterCount(filters) > 0 ? "No run matches these filters." : "No agent has reported a run yet."}</Empty>
          ) : (
            <>
              <div className="table-wrap" tabIndex={0} role="region" aria-label="Runs, scrolls sideways on a narrow screen">
                <table aria-describedby="runs-note">
                  <caption id="runs-note" className="caption">
                    Newest first by when each run started, on the engine’s own clock.
                  </caption>
                  <thead>
                    <tr>
                      <th scope="col">Started</th>
                      <th scope="col">Agent</th>
                      <th scope="col">Task type</th>
                      <th scope="col">Status</th>
                      <th scope="col" className="num">
                        Duration
                      </th>
                      <th scope="col">Error</th>
                    </tr>
                  </thead>
                  <tbody>
                    {page.items.map((run) => (
                      <tr key={`${run.agent_id}\u0000${run.task_id}`}>
                        <td>
                          <Link to={runPath(run.agent_id, run.task_id)}>
                            <Time iso={run.started_at} />
                            <span className="visually-hidden"> run {run.task_id}</span>
                          </Link>
                        </td>
                        <td>
                          <AgentName id={run.agent_id} />
                        </td>
                        <td>{run.task_type}</td>
                        <td>
                          <RunStatusBadge status={run.status} />
                        </td>
                        <td className="num">{formatMs(run.duration_ms)}</td>
                        <td className="cell-clip">{run.error ?? "—"}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
              <Pager pages={pages} nextCursor={page.next_cursor} label="Run pages" previousLabel="Previous page" nextLabel="Next page">
                <span className="hint" aria-live="polite">
                  Page {pages.number} · {page.items.length} of at most {limit}
                </span>
                <PageSizeSelect id="runs-limit" value={limit} onChange={(size) => pages.restart(withLimit(filtersToSearch(filters), size))} />
              </Pager>
            </>
          )
        }
      </QueryView>
    </>
  );
}

function Filters({ filters, onApply }: { filters: RunFilters; onApply: (next: RunFilters) => void }) {
  const [draft, setDraft] = useState(filters);
  const agents = useRunAgents();
  const set = (field: keyof RunFilters) => (event: { target: { value: string } }) => setDraft({ ...draft, [field]: event.target.value });
  const submit = (event: SubmitEvent) => {
    event.preventDefault();
    onApply(draft);
  };
  return (
    <form className="filters" onSubmit={submit} aria-label="Filter runs">
      <div className="field">
        <label htmlFor="r-agent">Agent</label>
        <select id="r-agent" value={draft.agent_id} onChange={set("agent_id")}>
          <option value="">Any agent</option>
          {[...new Set([...(agents.data ?? []), ...(draft.agent_id ? [draft.agent_id] : [])])].map((a) => (
            <option key={a} value={a}>
              {a}
            </option>
          ))}
        </select>
      </div>
      <div className="field">
        <label htmlFor="r-status">Status</label>
        <select id="r-status" value={draft.status} onChange={set("status")}>
          <option value="">Any status</option>
          {STATUSES.map((s) => (
            <option key={s} value={s}>
              {s}
            </option>
          ))}
        </select>
      </div>
      <div className="field">
        <label htmlFor="r-type">Task type</label>
        <input id="r-type" value={draft.task_type} onChange={set("task_type")} placeholder="any type" autoComplete="off" />
      </div>
      <div className="field">
        <label htmlFor="r-from">Started from</label>
        <input id="r-from" type="datetime-local" value={draft.from} onChange={set("from")} />
      </div>
      <div className="field">
        <label htmlFor="r-to">Started before</label>
        <input id="r-to" type="datetime-local" value={draft.to} onChange={set("to")} />
      </div>
      <div className="form-actions">
        <button type="submit" className="button button-primary">
          Apply filters
        </button>
        <button
          type="button"
          className="button"
          onClick={() => {
            setDraft(NO_FILTERS);
            onApply(NO_FILTERS);
          }}
        >
          Clear
        </button>
      </div>
    </form>
  );
}
