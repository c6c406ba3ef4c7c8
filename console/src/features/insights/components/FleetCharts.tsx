import { useState } from "react";
import type { RunSeries, UsagePoint } from "../../../api/resources";
import { useAgentNames } from "../../../components/AgentName";
import { agentLabel } from "../../../lib/agentNames";
import { formatCount, formatMs } from "../../../lib/format";
import { useSearch } from "../../../lib/router";
import { formatTokens, formatUsd, latency, latencyByAgent, runsAndFailures, usageMeasure, type Series } from "../logic/scales";
import { TimeChart } from "./TimeChart";

const ALL = "";
// More stacked series than this stop being told apart by colour.
const MOST_SERIES = 5;
const SERIES_CLASSES = ["series-1", "series-2", "series-3", "series-4", "series-5"];
const PRICE_SOURCES: Record<string, string> = {
  default: "built-in list-price estimates for Claude Sonnet 4.5 and Claude Haiku 4.5 (set OUTRIDER_MODEL_PRICES for your own rates)",
  configured: "the price table in OUTRIDER_MODEL_PRICES",
  none: "no price table (OUTRIDER_MODEL_PRICES is empty), so no cost is estimated",
};

const totalOf = (series: Series[]) => series.reduce((sum, s) => sum + s.values.reduce<number>((acc, v) => acc + (v ?? 0), 0), 0);

/** Runs, latency, tokens and estimated cost over the window, full width. */
export function FleetCharts({ data }: { data: RunSeries }) {
  // In the URL, so Agent Studio can open Insights on its own agent.
  const [search, setSearch] = useSearch();
  const agentId = search.get("agent") ?? ALL;
  const setAgentId = (id: string) => setSearch({ ...Object.fromEntries(search), agent: id });
  const names = useAgentNames();
  const [usageBy, setUsageBy] = useState<"model" | "agent">("model");
  const chosen = data.agents.find((a) => a.agent_id === agentId);
  const starts = (data.agents[0]?.points ?? data.usage_by_model[0]?.points ?? []).map((p) => p.start);
  const bucketSeconds = data.bucket_seconds;
  const scope = chosen ? agentLabel(names, chosen.agent_id) : "all agents";

  const runs = runsAndFailures(chosen ? [chosen] : data.agents);
  const [succeeded, failed] = runs.map((s) => totalOf([s]));
  const lines = chosen ? latency(chosen) : latencyByAgent(data.agents, MOST_SERIES);
  const usage = usageBy === "model" ? data.usage_by_model : data.usage_by_agent;
  const tokens = usageMeasure(usage, (p: UsagePoint) => p.input_tokens + p.output_tokens, MOST_SERIES);
  const cost = usageMeasure(usage, (p: UsagePoint) => p.estimated_cost, MOST_SERIES);
  const calls = data.usage_by_agent.flatMap((s) => s.points).reduce((acc, p) => ({ calls: acc.calls + p.calls, reported: acc.reported + p.reported_calls }), { calls: 0, reported: 0 });
  const unpriced = data.usage_by_model.filter((s) => s.points.every((p) => p.estimated_cost === null)).map((s) => s.name || "(model not reported)");
  const knownCost = totalOf(cost);

  return (
    <div className="fleet-charts">
      <div className="toolbar">
        <div className="field">
          <label htmlFor="chart-agent">Runs and latency of</label>
          <select id="chart-agent" value={agentId} onChange={(event) => setAgentId(event.target.value)}>
            <option value={ALL}>All agents</option>
            {data.agents.map((a) => (
              <option key={a.agent_id} value={a.agent_id}>
                {agentLabel(names, a.agent_id)}
              </option>
            ))}
          </select>
        </div>
        <fieldset className="segmented">
          <legend className="visually-hidden">Tokens and cost by</legend>
          {(["model", "agent"] as const).map((by) => (
            <label key={by} className={by === usageBy ? "segment segment-on" : "segment"}>
              <input type="radio" name="usage-by" value={by} checked={by === usageBy} onChange={() => setUsageBy(by)} />
              Tokens and cost by {by}
            </label>
          ))}
        </fieldset>
      </div>
      {data.agents.length > 0 ? (
        <>
          <TimeChart
            title={`Runs and failures, ${scope}`}
            unit="runs per bucket"
            starts={starts}
            bucketSeconds={bucketSeconds}
            series={runs}
            kind="bars"
            classes={["bar-runs", "bar-failures"]}
            format={formatCount}
            whole
            summary={`Runs of ${scope} per bucket: ${formatCount(succeeded)} succeeded and ${formatCount(failed)} failed in the window.`}
          />
          <TimeChart
            title={chosen ? `Run latency, ${scope}` : "Run latency p95, busiest agents"}
            unit="duration, ms or s"
            starts={starts}
            bucketSeconds={bucketSeconds}
            series={lines}
            kind="lines"
            classes={SERIES_CLASSES}
            format={formatMs}
            summary={`${lines.map((s) => s.name).join(", ")} per bucket; a gap is a bucket without runs.`}
          />
        </>
      ) : null}
      {usage.length > 0 ? (
        <>
          <TimeChart
            title={`Tokens per ${usageBy}`}
            unit="input and output tokens"
            starts={starts}
            bucketSeconds={bucketSeconds}
            series={tokens}
            kind="bars"
            classes={SERIES_CLASSES}
            format={formatTokens}
            whole
            summary={`Tokens per ${usageBy} per bucket: ${tokens.map((s) => `${s.name} ${formatTokens(totalOf([s]))}`).join(", ")}.`}
          />
          <p className="hint">
            Tokens count only the calls that reported usage: {formatCount(calls.reported)} of {formatCount(calls.calls)} model calls in this window.
          </p>
          <TimeChart
            title={`Estimated cost per ${usageBy}`}
            unit="USD, estimated"
            starts={starts}
            bucketSeconds={bucketSeconds}
            series={cost}
            kind="bars"
            classes={SERIES_CLASSES}
            format={formatUsd}
            summary={`Estimated cost per ${usageBy} per bucket, ${formatUsd(knownCost)} in all where priced.`}
          />
          <p className="hint">
            Estimated from {PRICE_SOURCES[data.price_source] ?? data.price_source}.
            {unpriced.length > 0 ? ` No price for ${unpriced.join(", ")}: its cost is unknown, not zero.` : ""}
          </p>
        </>
      ) : (
        <p className="hint">No model call was reported in this window, so there are no tokens or cost to chart.</p>
      )}
    </div>
  );
}
