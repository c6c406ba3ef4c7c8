import type { RunTrace, TraceStep } from "../../../api/resources";
import { Time } from "../../../components/Time";
import { formatCount, formatMs } from "../../../lib/format";
import { ENDING_BADGE, OUTCOME_LABEL, runEnding } from "../logic/trace";

function pretty(value: unknown): string {
  if (typeof value === "string") {
    try {
      return JSON.stringify(JSON.parse(value), null, 2);
    } catch {
      return value;
    }
  }
  return JSON.stringify(value, null, 2);
}

export function StepView({ step, index }: { step: TraceStep; index: number }) {
  return (
    <li className={`step step-${step.outcome}`}>
      <p className="step-head">
        <span className="step-number">{index + 1}.</span> turn {step.turn} · <code>{step.tool}</code>{" "}
        <span className={`badge outcome-step-${step.outcome}`}>{OUTCOME_LABEL[step.outcome] ?? step.outcome}</span>{" "}
        <span className="hint">{formatMs(step.ms)}</span>
      </p>
      {step.reason ? <p className="hint">{step.reason}</p> : null}
      <details open={index < 3}>
        <summary>Arguments{step.proposal ? " and proposal" : ""} and result</summary>
        <p className="label">Arguments</p>
        <pre tabIndex={0}>{pretty(step.input)}</pre>
        {step.proposal ? (
          <>
            <p className="label">Proposal (not executed; a person would confirm it)</p>
            <pre tabIndex={0}>{pretty(step.proposal)}</pre>
          </>
        ) : null}
        {step.result ? (
          <>
            <p className="label">Result as the model saw it (personal data redacted)</p>
            <pre tabIndex={0}>{pretty(step.result)}</pre>
          </>
        ) : null}
      </details>
      {step.error ? <p className="field-error">Error: {step.error}</p> : null}
    </li>
  );
}

export function TraceSummary({ trace }: { trace: RunTrace }) {
  const ending = runEnding(trace);
  return (
    <>
      {ending.explanation ? (
        <div className="notice notice-warn" role="status">
          <p className="notice-title">Ended early: {ending.label}</p>
          <p>{ending.explanation}</p>
        </div>
      ) : null}
      <dl className="facts">
        <dt>Model</dt>
        <dd>{trace.model}</dd>
        <dt>Agent · skill</dt>
        <dd>
          {trace.agent_id} · {trace.skill_id}
        </dd>
        <dt>Turns</dt>
        <dd>{trace.turns}</dd>
        <dt>Tokens</dt>
        <dd>
          {formatCount(trace.input_tokens)} in · {formatCount(trace.output_tokens)} out
        </dd>
        <dt>Latency</dt>
        <dd>{formatMs(trace.total_ms)}</dd>
        <dt>Ended</dt>
        <dd>
          <span className={ENDING_BADGE[ending.tone]}>{ending.label}</span>
        </dd>
        <dt>Run by</dt>
        <dd>
          {trace.created_by_email || trace.created_by}, <Time iso={trace.created_at} />
        </dd>
        {trace.error ? (
          <>
            <dt>Error</dt>
            <dd className="field-error">{trace.error}</dd>
          </>
        ) : null}
      </dl>
    </>
  );
}

export function FinalAnswer({ trace }: { trace: RunTrace }) {
  return trace.final_text ? (
    <section aria-labelledby="final-heading" className="panel">
      <h3 id="final-heading">The model's answer</h3>
      <p className="final-text">{trace.final_text}</p>
    </section>
  ) : null;
}
