import type { Rollout } from "../../../api/resources";
import { Freshness } from "../../../components/Freshness";
import { PageHeader } from "../../../components/PageHeader";
import { QueryView } from "../../../components/States";
import { Time } from "../../../components/Time";
import { formatCount, formatCredit, formatRate } from "../../../lib/format";
import { Link } from "../../../lib/router";
import { armPosterior, changeInWords, stepTimeline } from "../logic/rollouts";
import { useRollout } from "../api/queries";
import { ArmsChart } from "./ArmsChart";
import { HarmChart } from "./HarmChart";
import { RolloutActions } from "./RolloutActions";
import { RolloutStateBadge } from "./RolloutStateBadge";
import { AgentName } from "../../../components/AgentName";

export function RolloutPage({ rolloutId }: { rolloutId: string }) {
  const rollout = useRollout(rolloutId);
  return (
    <>
      <PageHeader title="Rollout">
        {rollout.data ? <Freshness fetchedAt={rollout.dataUpdatedAt} /> : null}
        <Link to="/rollouts">All rollouts</Link>
      </PageHeader>
      <QueryView query={rollout} what={`rollout ${rolloutId}`}>
        {(r) => (
          <>
            <section className="panel" aria-labelledby="rollout-heading">
              <h2 id="rollout-heading">
                {changeInWords(r.change, r.baseline)} <RolloutStateBadge state={r.state} />
              </h2>
              <dl className="facts">
                <dt>Agent</dt>
                <dd>
                  <AgentName id={r.agent_id} link />
                </dd>
                <dt>Decision type</dt>
                <dd>{r.decision_type}</dd>
                <dt>Share</dt>
                <dd>
                  {r.percent} % of subjects · steps {r.steps.join(" → ")} %
                </dd>
                <dt>Guard</dt>
                <dd>
                  halts when p_harm reaches {formatRate(r.guard.confidence)}; candidate may be at most {formatRate(r.guard.max_drop, 1)} worse;
                  {" "}
                  {formatCount(r.guard.min_judged)} judged per arm before a step
                </dd>
                <dt>p_harm</dt>
                <dd>{formatRate(r.p_harm, 1)}</dd>
                <dt>Why here</dt>
                <dd>{r.reason || "—"}</dd>
                <dt>Started</dt>
                <dd>
                  <Time iso={r.created_at} /> by {r.created_by}
                </dd>
              </dl>
              <RolloutActions rollout={r} />
            </section>
            <section aria-labelledby="arms-heading">
              <h2 id="arms-heading">Arms</h2>
              <ArmsChart arms={r.arms} />
              <ArmsTable arms={r.arms} />
            </section>
            <section aria-labelledby="harm-heading">
              <h2 id="harm-heading">The guard's looks</h2>
              <HarmChart history={r.history} confidence={r.guard.confidence} />
            </section>
            <section aria-labelledby="steps-heading">
              <h2 id="steps-heading">Steps</h2>
              <Timeline rollout={r} />
            </section>
          </>
        )}
      </QueryView>
    </>
  );
}

function ArmsTable({ arms }: { arms: Rollout["arms"] }) {
  const rows = [
    ["Control", arms.control],
    ["Candidate", arms.candidate],
  ] as const;
  return (
    <div className="table-wrap" tabIndex={0} role="region" aria-label="Evidence per arm, scrolls sideways on a narrow screen">
      <table>
        <thead>
          <tr>
            <th scope="col">Arm</th>
            <th scope="col" className="num">
              Judged
            </th>
            <th scope="col" className="num">
              Successes
            </th>
            <th scope="col" className="num">
              Failures
            </th>
            <th scope="col" className="num">
              Pending
            </th>
            <th scope="col" className="num">
              Unknown
            </th>
            <th scope="col">Posterior mean · 95 % interval</th>
          </tr>
        </thead>
        <tbody>
          {rows.map(([name, arm]) => {
            const posterior = armPosterior(arm);
            return (
              <tr key={name}>
                <th scope="row">{name}</th>
                <td className="num">{formatCredit(arm.judged)}</td>
                <td className="num">{formatCredit(arm.successes)}</td>
                <td className="num">{formatCredit(arm.failures)}</td>
                <td className="num">{formatCount(arm.pending)}</td>
                <td className="num">{formatCount(arm.unknown)}</td>
                <td>
                  {formatRate(posterior.mean, 1)} · {formatRate(posterior.low, 1)} – {formatRate(posterior.high, 1)}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

function Timeline({ rollout }: { rollout: Rollout }) {
  const steps = stepTimeline(rollout.history);
  if (steps.length === 0) return <p className="hint">No step has been recorded.</p>;
  return (
    <ol className="timeline" aria-label="Steps of this rollout">
      {steps.map((step, index) => (
        <li key={index} className="timeline-item">
          <p className="timeline-head">
            <strong>{step.event}</strong> at {step.percent} % · by {step.by} · <Time iso={step.at} />
          </p>
          {step.reason ? <p className="timeline-body">{step.reason}</p> : null}
        </li>
      ))}
    </ol>
  );
}
