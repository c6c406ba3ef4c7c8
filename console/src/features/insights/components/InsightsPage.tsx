import type { Insights } from "../../../api/resources";
import { AgentName } from "../../../components/AgentName";
import { Freshness } from "../../../components/Freshness";
import { PageHeader } from "../../../components/PageHeader";
import { SortHeader, useSortedRows, type SortColumn } from "../../../components/SortableTable";
import { StateBadge } from "../../../components/Badges";
import { Empty, ErrorNotice, Loading, QueryView } from "../../../components/States";
import { Time } from "../../../components/Time";
import { formatCount, formatMs, formatRate } from "../../../lib/format";
import { Link, useSearch } from "../../../lib/router";
import { insightsRunsPath } from "../../../lib/runLinks";
import { agentTotals } from "../logic/agentTotals";
import { outcomeGrid, outcomeListPath } from "../logic/chart";
import { useInsights, useRunSeries } from "../api/queries";
import { readSpan, windowOf, withWindow, type InsightsWindow, type ReadSpan } from "../logic/window";
import { FleetCharts } from "./FleetCharts";
import { JudgedSuccessChart } from "./JudgedSuccessChart";
import { RunChart } from "./RunChart";
import { RangeForm, useWindowTitle, WindowPicker } from "./WindowPicker";

export function InsightsPage() {
  const [search, setSearch] = useSearch();
  const window = windowOf(search);
  const insights = useInsights(window);
  const series = useRunSeries(window);
  const title = useWindowTitle(window);
  // What the counts stand for is the span the gateway read, not one worked out here.
  const span = readSpan(window, insights.data?.window_start ?? null, insights.data?.window_end ?? null);
  const choose = (next: InsightsWindow) => setSearch(withWindow(search, next));

  return (
    <>
      <PageHeader title="Insights">
        {insights.data ? <Freshness fetchedAt={insights.dataUpdatedAt} /> : null}
        <WindowPicker window={window} span={span} onChange={choose} />
      </PageHeader>
      {window.kind === "range" ? <RangeForm window={window} onApply={choose} /> : null}
      <QueryView query={insights} what="insights">
        {(data) => (
          <>
            {!data.receiving ? (
              <div className="notice notice-error banner" role="alert">
                <p className="notice-title">Telemetry is not arriving</p>
                <p>
                  No run and no heartbeat reached Outrider in the last 5 minutes
                  {data.last_received_at ? (
                    <>
                      ; the last run arrived <Time iso={data.last_received_at} />
                    </>
                  ) : (
                    "; none has ever arrived"
                  )}
                  . The figures below are what was received, not a quiet fleet: check that the engines publish to this
                  Outrider's NATS.
                </p>
              </div>
            ) : null}
            {data.degraded.map((d) => (
              <p key={d.source} className="notice notice-warn">
                {d.source} did not answer ({d.reason}); its part of this page is missing, not zero.
              </p>
            ))}

            <section aria-labelledby="agents-runs">
              <h2 id="agents-runs">Agents, {title}</h2>
              {data.agents.length === 0 ? (
                <Empty>No agent is registered or reporting.</Empty>
              ) : (
                <AgentsTable agents={data.agents} span={span} />
              )}
            </section>

            <section aria-labelledby="runs-over-time">
              <h2 id="runs-over-time">Runs and failures over time</h2>
              {series.isPending ? (
                <Loading what="the run series" />
              ) : series.error ? (
                <ErrorNotice error={series.error} retry={() => void series.refetch()} />
              ) : series.data.agents.length === 0 ? (
                <Empty>No agent ran in this window.</Empty>
              ) : (
                <div className="charts">
                  {series.data.agents.map((s) => (
                    <RunChart key={s.agent_id} agentId={s.agent_id} points={s.points} bucketSeconds={series.data.bucket_seconds} />
                  ))}
                </div>
              )}
            </section>

            <section aria-labelledby="fleet-charts">
              <h2 id="fleet-charts">Runs, latency, tokens and cost over time</h2>
              {series.data ? <FleetCharts data={series.data} /> : null}
            </section>

            <section aria-labelledby="decision-outcomes">
              <h2 id="decision-outcomes">Decisions by type and outcome</h2>
              <DecisionGrid data={data} span={span} />
            </section>

            <section aria-labelledby="judged-success">
              <h2 id="judged-success">Judged success over time</h2>
              <JudgedSuccessChart window={window} decisionTypes={data.decisions.map((d) => d.decision_type)} />
            </section>
          </>
        )}
      </QueryView>
    </>
  );
}

type AgentRow = Insights["agents"][number];

const AGENT_COLUMNS = {
  agent: { value: (a) => a.agent_id },
  state: { value: (a) => a.state },
  runs: { value: (a) => a.runs, first: "descending" },
  failures: { value: (a) => a.failures, first: "descending" },
  avg: { value: (a) => a.avg_ms, first: "descending" },
  p95: { value: (a) => a.p95_ms, first: "descending" },
  last: { value: (a) => (a.last_run_at ? Date.parse(a.last_run_at) : null), first: "descending" },
} satisfies Record<string, SortColumn<AgentRow>>;

function AgentsTable({ agents, span }: { agents: AgentRow[]; span: ReadSpan }) {
  const table = useSortedRows(agents, AGENT_COLUMNS);
  const totals = agentTotals(agents);
  return (
    <div className="table-wrap">
      <table>
        <thead>
          <tr>
            <SortHeader table={table} column="agent">
              Agent
            </SortHeader>
            <SortHeader table={table} column="state">
              State
            </SortHeader>
            <SortHeader table={table} column="runs" numeric>
              Runs
            </SortHeader>
            <SortHeader table={table} column="failures" numeric>
              Failures
            </SortHeader>
            <SortHeader table={table} column="avg" numeric>
              Average
            </SortHeader>
            <SortHeader table={table} column="p95" numeric>
              p95
            </SortHeader>
            <SortHeader table={table} column="last">
              Last run
            </SortHeader>
          </tr>
        </thead>
        <tbody>
          {table.rows.map((a) => (
            <tr key={a.agent_id} className={a.runs === 0 ? "row-quiet" : undefined}>
              <td>
                <AgentName id={a.agent_id} link={a.registered} />
                {!a.registered ? <span className="hint"> (not in the registry)</span> : null}
              </td>
              <td>
                <StateBadge state={a.state} />
              </td>
              <td className="num">
                <Link to={insightsRunsPath(a.agent_id, span)} aria-label={`${formatCount(a.runs)} runs of ${a.agent_id}`}>
                  {formatCount(a.runs)}
                </Link>
              </td>
              <td className="num">
                <Link to={insightsRunsPath(a.agent_id, span, true)} aria-label={`${formatCount(a.failures)} failed runs of ${a.agent_id}`}>
                  {formatCount(a.failures)}
                </Link>
                {a.runs > 0 ? <span className="hint"> ({formatRate(a.failures / a.runs)})</span> : null}
              </td>
              <td className="num">{formatMs(a.avg_ms)}</td>
              <td className="num">{formatMs(a.p95_ms)}</td>
              <td>
                <Time iso={a.last_run_at} empty="no run in this window" />
              </td>
            </tr>
          ))}
        </tbody>
        <tfoot>
          <tr>
            <th scope="row">All agents</th>
            <td />
            <td className="num">{formatCount(totals.runs)}</td>
            <td className="num">
              {formatCount(totals.failures)}
              {totals.runs > 0 ? <span className="hint"> ({formatRate(totals.failures / totals.runs)})</span> : null}
            </td>
            <td className="num">{formatMs(totals.avgMs)}</td>
            <td className="num">—</td>
            <td>
              <Time iso={totals.lastRunAt} empty="no run in this window" />
            </td>
          </tr>
        </tfoot>
      </table>
    </div>
  );
}

function DecisionGrid({ data, span }: { data: Pick<Insights, "decisions_available" | "decisions">; span: ReadSpan }) {
  if (!data.decisions_available) return <p className="notice notice-warn">Decision memory did not answer; these counts are missing.</p>;
  const grid = outcomeGrid(data.decisions);
  if (grid.rows.length === 0) return <Empty>No decision was recorded in this window.</Empty>;
  return (
    <div className="table-wrap">
      <table>
        <thead>
          <tr>
            <th scope="col">Type</th>
            {grid.outcomes.map((o) => (
              <th key={o} scope="col" className="num">
                {o}
              </th>
            ))}
            <th scope="col" className="num">
              total
            </th>
          </tr>
        </thead>
        <tbody>
          {grid.rows.map((row) => (
            <tr key={row.type}>
              <th scope="row">
                <Link to={`/decisions?decision_type=${encodeURIComponent(row.type)}`}>{row.type}</Link>
              </th>
              {grid.outcomes.map((o) => {
                const count = row.cells[o] ?? 0;
                return (
                  <td key={o} className="num">
                    {count > 0 ? (
                      <Link to={outcomeListPath(row.type, o, span)} aria-label={`${formatCount(count)} ${row.type} decisions ${o}: open them`}>
                        {formatCount(count)}
                      </Link>
                    ) : (
                      formatCount(count)
                    )}
                  </td>
                );
              })}
              <td className="num">{formatCount(row.total)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
