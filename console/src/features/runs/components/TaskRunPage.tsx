import type { ModelCall } from "../../../api/resources";
import { PageHeader } from "../../../components/PageHeader";
import { Empty, QueryView } from "../../../components/States";
import { Time } from "../../../components/Time";
import { formatCount, formatMs } from "../../../lib/format";
import { Link } from "../../../lib/router";
import { useRun } from "../api/queries";
import { RunStatusBadge } from "./RunStatusBadge";
import { SpanTimeline } from "./SpanTimeline";
import { AgentName } from "../../../components/AgentName";

const MATCHED_BY = {
  trace: "the calls of this run’s own trace",
  window: "this agent’s calls that started while the run did (the run names no trace, so calls of another task running at the same time show here too)",
};

export function TaskRunPage({ agentId, taskId }: { agentId: string; taskId: string }) {
  const run = useRun(agentId, taskId);
  return (
    <>
      <PageHeader title="Run">
        <Link to={`/runs?agent_id=${encodeURIComponent(agentId)}`}>Runs of {agentId}</Link>
      </PageHeader>
      <QueryView query={run} what="the run">
        {(detail) => (
          <>
            <section className="panel" aria-labelledby="run-heading">
              <h2 id="run-heading">
                {detail.run.task_type} <RunStatusBadge status={detail.run.status} />
              </h2>
              <dl className="facts facts-wrap">
                <dt>Agent</dt>
                <dd>
                  <AgentName id={detail.run.agent_id} link />
                </dd>
                <dt>Task</dt>
                <dd>
                  <code>{detail.run.task_id}</code>
                </dd>
                <dt>Started</dt>
                <dd>
                  <Time iso={detail.run.started_at} />
                </dd>
                <dt>Finished</dt>
                <dd>
                  <Time iso={detail.run.finished_at} />
                </dd>
                <dt>Duration</dt>
                <dd>{formatMs(detail.run.duration_ms)}</dd>
                <dt>Error</dt>
                <dd>{detail.run.error ?? "—"}</dd>
                <dt>Trace</dt>
                <dd>{detail.run.trace_id ? <code>{detail.run.trace_id}</code> : "none: reported on telemetry.task"}</dd>
              </dl>
            </section>

            <section aria-labelledby="calls-heading">
              <h2 id="calls-heading">Model calls</h2>
              <p className="hint">
                Shown: {MATCHED_BY[detail.matched_by]}.
                {detail.model_calls_truncated ? ` Only the first ${formatCount(detail.model_calls.length)} are listed.` : ""}
              </p>
              {detail.model_calls.length === 0 ? (
                <Empty>No model call was reported for this run.</Empty>
              ) : (
                <>
                  <SpanTimeline run={detail.run} calls={detail.model_calls} />
                  <CallTable calls={detail.model_calls} />
                </>
              )}
            </section>
          </>
        )}
      </QueryView>
    </>
  );
}

function tokens(value: number | null): string {
  return value === null ? "not reported" : formatCount(value);
}

function CallTable({ calls }: { calls: ModelCall[] }) {
  return (
    <div className="table-wrap" tabIndex={0} role="region" aria-label="Model calls, scrolls sideways on a narrow screen">
      <table>
        <caption className="caption">Oldest first. Tokens a call did not report are unknown, not zero.</caption>
        <thead>
          <tr>
            <th scope="col">Started</th>
            <th scope="col">Model</th>
            <th scope="col" className="num">
              Input tokens
            </th>
            <th scope="col" className="num">
              Output tokens
            </th>
            <th scope="col" className="num">
              Latency
            </th>
            <th scope="col">Status</th>
          </tr>
        </thead>
        <tbody>
          {calls.map((call) => (
            <tr key={`${call.trace_id}-${call.span_id}`}>
              <td>
                <Time iso={call.started_at} />
              </td>
              <td>
                {call.model ?? "not reported"}
                <span className="cell-note"> {call.operation}</span>
              </td>
              <td className="num">{tokens(call.input_tokens)}</td>
              <td className="num">{tokens(call.output_tokens)}</td>
              <td className="num">{formatMs(call.duration_ms)}</td>
              <td>
                <RunStatusBadge status={call.status} />
                {call.error_type ? <span className="cell-note"> {call.error_type}</span> : null}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
