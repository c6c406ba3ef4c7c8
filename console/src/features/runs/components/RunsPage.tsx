import { ChoiceField, FilterForm, InstantField, TextField } from "../../../components/FilterForm";
import { ExportControl } from "../../../components/ExportControl";
import { Freshness } from "../../../components/Freshness";
import { PageHeader } from "../../../components/PageHeader";
import { PageSizeSelect, Pager, useKeysetPages } from "../../../components/Pager";
import { pageSizeFromSearch, pageSizeToSearch } from "../../../components/pageSize";
import { Empty, QueryView } from "../../../components/States";
import { Time } from "../../../components/Time";
import { formatMs } from "../../../lib/format";
import { Link, useSearch } from "../../../lib/router";
import { runPath } from "../../../lib/runLinks";
import {
  activeFilterCount,
  filtersFromSearch,
  filtersToQuery,
  filtersToSearch,
  NO_FILTERS,
  STATUSES,
  type RunFilters,
  type RunOrder,
} from "../logic/filters";
import { PAGE_SIZE, useReportingAgents, useRuns } from "../api/queries";
import { RunStatusBadge } from "./RunStatusBadge";
import { AgentName, useAgentNames } from "../../../components/AgentName";

export function RunsPage() {
  const [search] = useSearch();
  const filters = filtersFromSearch(search);
  const limit = pageSizeFromSearch(search, PAGE_SIZE);
  const withLimit = (next: Record<string, string>, size = limit) => ({ ...next, ...pageSizeToSearch(size, PAGE_SIZE) });
  const pages = useKeysetPages((cursor) => withLimit(filtersToSearch(filters, cursor)));
  const runs = useRuns(filters, pages.cursor, limit);
  // A new order starts from its first page: a cursor holds to the order it came from.
  const reorder = (order: RunOrder) => pages.restart(withLimit(filtersToSearch({ ...filters, order })));

  return (
    <>
      <PageHeader title="Runs">
        {runs.data ? <Freshness fetchedAt={runs.dataUpdatedAt} /> : null}
        <ExportControl path="/admin/ai/runs/export" query={filtersToQuery(filters)} noun="runs" />
      </PageHeader>
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
                    {filters.order === "slowest"
                      ? "Longest first, every run the filters select."
                      : "Newest first by when each run started, on the engine’s own clock."}
                  </caption>
                  <thead>
                    <tr>
                      <OrderHeader order="" current={filters.order} onOrder={reorder} label="Started" />
                      <th scope="col">Agent</th>
                      <th scope="col">Task type</th>
                      <th scope="col">Status</th>
                      <OrderHeader order="slowest" current={filters.order} onOrder={reorder} label="Duration" numeric />
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

/**
 * A column the whole list can be ordered by, on the server across every
 * page: the newest start first, or the longest run first. Each reads one
 * way only, so the header says which it is and whether it is in force.
 */
function OrderHeader({
  order,
  current,
  onOrder,
  numeric = false,
  label,
}: {
  order: RunOrder;
  current: RunOrder;
  onOrder: (order: RunOrder) => void;
  numeric?: boolean;
  label: string;
}) {
  const on = order === current;
  return (
    <th scope="col" className={numeric ? "num" : undefined} aria-sort={on ? "descending" : undefined}>
      <button
        type="button"
        className="sort-button"
        onClick={() => onOrder(order)}
        aria-pressed={on}
        aria-label={`${label}, ${order === "slowest" ? "longest first" : "newest first"}`}
      >
        {label}
        <span className="sort-mark" aria-hidden="true">
          {on ? "▼" : "↕"}
        </span>
      </button>
    </th>
  );
}

function Filters({ filters, onApply }: { filters: RunFilters; onApply: (next: RunFilters) => void }) {
  // The registry's agents (the names list every page shares) and those that
  // reported runs without being registered; one older than the facets' month
  // can still be typed into the URL and stays offered.
  const registered = Object.keys(useAgentNames());
  const reporting = useReportingAgents().data ?? [];
  const agents = [...new Set([...registered, ...reporting])].sort();
  return (
    <FilterForm label="Filter runs" filters={filters} empty={NO_FILTERS} onApply={onApply}>
      {({ draft, set }) => (
        <>
          <ChoiceField id="r-agent" label="Agent" value={draft.agent_id} anyLabel="Any agent" choices={agents} onChange={(value) => set("agent_id", value)} />
          <ChoiceField id="r-status" label="Status" value={draft.status} anyLabel="Any status" choices={STATUSES} onChange={(value) => set("status", value)} />
          <TextField id="r-type" label="Task type" value={draft.task_type} onChange={(value) => set("task_type", value)} placeholder="any type" />
          <InstantField id="r-from" label="Started from" value={draft.from} onChange={(value) => set("from", value)} />
          <InstantField id="r-to" label="Started before" value={draft.to} onChange={(value) => set("to", value)} />
        </>
      )}
    </FilterForm>
  );
}
