import { useState, type SubmitEvent } from "react";
import type { OutcomeIn } from "../../../api/resources";
import { PageHeader } from "../../../components/PageHeader";
import { useCanWrite } from "../../../lib/SessionContext";
import { OutcomeBadge } from "../../../components/Badges";
import { Empty, ErrorNotice, QueryView } from "../../../components/States";
import { Time } from "../../../components/Time";
import { formatRate } from "../../../lib/format";
import { Link } from "../../../lib/router";
import { useDecision, useRejudge } from "../api/queries";
import { isDecisionId, subjectListPath } from "../logic/filters";
import { RedactedContext } from "./RedactedContext";
import { AgentName } from "../../../components/AgentName";

export function DecisionPage({ decisionId }: { decisionId: string }) {
  const wellFormed = isDecisionId(decisionId);
  const decision = useDecision(decisionId, wellFormed);
  const canWrite = useCanWrite();
  return (
    <>
      <PageHeader title="Decision">
        <Link to="/decisions">All decisions</Link>
      </PageHeader>
      {!wellFormed ? (
        <div className="notice notice-error" role="alert">
          <p className="notice-title">Not a decision id</p>
          <p>
            “{decisionId}” is not a decision id: decision ids look like <code>795b0262-887a-468b-8d07-e1e403180cae</code>. Open
            the decision from the list of decisions.
          </p>
        </div>
      ) : (
      <QueryView query={decision} what="the decision">
        {(d) => (
          <>
            <section className="panel" aria-labelledby="decision-heading">
              <h2 id="decision-heading">
                {d.decision_type}: {d.action} <OutcomeBadge outcome={d.outcome} />
              </h2>
              <dl className="facts">
                <dt>Decided</dt>
                <dd>
                  <Time iso={d.decided_at} />
                </dd>
                <dt>Agent</dt>
                <dd>
                  <AgentName id={d.agent_id} link />
                </dd>
                <dt>Subject</dt>
                <dd>
                  <Link to={`/subjects/${encodeURIComponent(d.subject_id)}`}>{d.subject_id}</Link> (its human decisions) ·{" "}
                  <Link to={subjectListPath(d.subject_id)}>its decisions</Link>
                </dd>
                <dt>Confidence</dt>
                <dd>{formatRate(d.confidence)}</dd>
                <dt>Model</dt>
                <dd>{d.model ?? "—"}</dd>
                <dt>Reasoning</dt>
                <dd>{d.reasoning ?? "—"}</dd>
                <dt>Outcome</dt>
                <dd>
                  {d.outcome ? (
                    <>
                      {d.outcome} by {d.judged_by}, <Time iso={d.judged_at} />
                      {d.outcome_reason ? ` — ${d.outcome_reason}` : ""}
                    </>
                  ) : (
                    "pending: the outcome judge has not decided yet"
                  )}
                </dd>
                <dt>Id</dt>
                <dd>
                  <code>{d.id}</code>
                </dd>
              </dl>
            </section>

            {canWrite ? <RedactedContext decisionId={d.id} /> : null}

            {canWrite ? <Rejudge decisionId={d.id} current={d.outcome} /> : null}

            <section aria-labelledby="history-heading">
              <h2 id="history-heading">Outcome history</h2>
              {d.history.length === 0 ? (
                <Empty>Not judged yet.</Empty>
              ) : (
                <div className="table-wrap">
                  <table>
                    <thead>
                      <tr>
                        <th scope="col">When</th>
                        <th scope="col">From</th>
                        <th scope="col">To</th>
                        <th scope="col">By</th>
                        <th scope="col">Reason</th>
                      </tr>
                    </thead>
                    <tbody>
                      {d.history.map((change, index) => (
                        <tr key={index}>
                          <td>
                            <Time iso={change.judged_at} />
                          </td>
                          <td>{change.old_outcome ?? "pending"}</td>
                          <td>
                            <OutcomeBadge outcome={change.new_outcome} />
                          </td>
                          <td>
                            {change.judged_by === "human" ? `human judgement: ${change.changed_by_email || change.changed_by}` : change.judged_by}
                          </td>
                          <td>{change.reason ?? "—"}</td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </div>
              )}
            </section>

            <section aria-labelledby="precedents-heading">
              <h2 id="precedents-heading">Precedents</h2>
              <p className="hint">
                Judged decisions of the same type nearest to this one:{" "}
                {d.precedent_summary.successes} worked, {d.precedent_summary.failures} did not (
                {formatRate(d.precedent_summary.success_rate)} success).
              </p>
              {d.precedents.length === 0 ? (
                <Empty>No judged decision of this type to compare with yet.</Empty>
              ) : (
                <div className="table-wrap">
                  <table>
                    <thead>
                      <tr>
                        <th scope="col" className="num">
                          Similarity
                        </th>
                        <th scope="col">Decided</th>
                        <th scope="col">Subject</th>
                        <th scope="col">Action</th>
                        <th scope="col">Model</th>
                        <th scope="col">Outcome</th>
                      </tr>
                    </thead>
                    <tbody>
                      {d.precedents.map((p) => (
                        <tr key={p.id}>
                          <td className="num">{formatRate(p.similarity, 1)}</td>
                          <td>
                            <Link to={`/decisions/${p.id}`}>
                              <Time iso={p.decided_at} />
                            </Link>
                          </td>
                          <td>
                            <Link to={subjectListPath(p.subject_id)}>{p.subject_id}</Link>
                          </td>
                          <td>{p.action}</td>
                          <td>{p.model ?? "—"}</td>
                          <td>
                            <OutcomeBadge outcome={p.outcome} />
                          </td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </div>
              )}
            </section>
          </>
        )}
      </QueryView>
      )}
    </>
  );
}

const VERDICTS: OutcomeIn["outcome"][] = ["success", "failure", "unknown"];

function Rejudge({ decisionId, current }: { decisionId: string; current: string | null }) {
  const rejudge = useRejudge(decisionId);
  const [outcome, setOutcome] = useState<OutcomeIn["outcome"]>(current === "success" ? "failure" : "success");
  const [reason, setReason] = useState("");
  const [done, setDone] = useState(false);
  const submit = (event: SubmitEvent) => {
    event.preventDefault();
    setDone(false);
    rejudge.mutate({ outcome, reason }, { onSuccess: () => { setReason(""); setDone(true); } });
  };
  return (
    <section className="panel" aria-labelledby="rejudge-heading">
      <h2 id="rejudge-heading">Judge it yourself</h2>
      <form className="form form-inline" onSubmit={submit}>
        <div className="field">
          <label htmlFor="rejudge-outcome">Outcome</label>
          <select
            id="rejudge-outcome"
            value={outcome}
            onChange={(event) => setOutcome(VERDICTS.find((verdict) => verdict === event.target.value) ?? outcome)}
          >
            {VERDICTS.map((verdict) => (
              <option key={verdict} value={verdict}>
                {verdict}
              </option>
            ))}
          </select>
        </div>
        <div className="field field-grow">
          <label htmlFor="rejudge-reason">Reason (kept in the history)</label>
          <input id="rejudge-reason" value={reason} onChange={(event) => setReason(event.target.value)} autoComplete="off" />
        </div>
        <div className="form-actions">
          <button type="submit" className="button button-primary" disabled={!reason.trim() || rejudge.isPending}>
            Record judgement
          </button>
        </div>
      </form>
      {rejudge.error ? <ErrorNotice error={rejudge.error} /> : null}
      {done ? (
        <p role="status" className="hint">
          Recorded as a human judgement.
        </p>
      ) : null}
    </section>
  );
}
