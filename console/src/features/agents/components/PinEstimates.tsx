import { useId, useState } from "react";
import type { Agent } from "../../../api/resources";
import { ErrorNotice, Loading } from "../../../components/States";
import { formatCount, formatRate } from "../../../lib/format";
import { useDecisionTypes } from "../api/rollouts";
import { useEvaluations } from "../api/evidence";
import { useAgentModels } from "../api/queries";
import { rateWithInterval } from "../logic/evidence";

/**
 * Beside the model pin: what each model the picker offers would have scored
 * had every judged decision of one type gone to it (self-normalised inverse
 * propensity), next to the logged policy's own rate — evidence before a pin.
 */
export function PinEstimates({ agent }: { agent: Agent }) {
  const id = useId();
  const types = useDecisionTypes(agent.runtime === "engine");
  const [decisionType, setDecisionType] = useState("");
  // The models the pin offers: those this agent has evidence for.
  const offered = useAgentModels(agent.id, agent.runtime === "engine");
  const models = (offered.data?.models ?? []).map((m) => m.model);
  const evaluations = useEvaluations(decisionType.trim(), models);
  if (agent.runtime !== "engine") return null;
  const logged = evaluations.find((e) => e.data)?.data?.logged;
  return (
    <>
      <dt>Estimates</dt>
      <dd className="evidence">
        <div className="field">
          <label htmlFor={`${id}-type`}>Decision type to estimate</label>
          <input
            id={`${id}-type`}
            value={decisionType}
            list={`${id}-types`}
            autoComplete="off"
            aria-describedby={`${id}-hint`}
            onChange={(event) => setDecisionType(event.target.value)}
          />
          <datalist id={`${id}-types`}>
            {(types.data ?? []).map((t) => (
              <option key={t} value={t} />
            ))}
          </datalist>
          <p id={`${id}-hint`} className="hint">
            Each model's success rate had every judged decision of this type gone to it.
          </p>
        </div>
        {decisionType.trim() === "" ? null : evaluations.some((e) => e.isPending) ? (
          <Loading what="estimates" />
        ) : evaluations.find((e) => e.error) ? (
          <ErrorNotice error={evaluations.find((e) => e.error)?.error} />
        ) : (
          <div className="table-wrap" tabIndex={0} role="region" aria-label="Estimates per model, scrolls sideways on a narrow screen">
            <table className="estimates">
              <caption className="caption">
                Logged policy: {logged?.mean === null || logged?.mean === undefined ? "no judged decision" : formatRate(logged.mean, 1)} over{" "}
                {formatCount(logged?.judged)} judged of {formatCount(logged?.decisions)} decisions ({formatCount(logged?.with_propensity)} with a
                propensity).
              </caption>
              <thead>
                <tr>
                  <th scope="col">Model</th>
                  <th scope="col">Estimate (95 %)</th>
                  <th scope="col" className="num">
                    Matched
                  </th>
                  <th scope="col" className="num">
                    Effective size
                  </th>
                </tr>
              </thead>
              <tbody>
                {evaluations.map((e, i) => {
                  const model = models[i] as string;
                  const data = e.data;
                  return (
                    <tr key={model}>
                      <th scope="row">
                        <code>{model}</code>
                      </th>
                      <td>
                        {data?.estimate ? (
                          <>
                            {rateWithInterval(data.estimate.mean, data.estimate.low, data.estimate.high)}
                            <div className="cell-note">{data.reason}</div>
                          </>
                        ) : (
                          <span className="cell-note">No estimate: {data?.reason}</span>
                        )}
                      </td>
                      <td className="num">{formatCount(data?.matched)}</td>
                      <td className="num">{data ? data.effective_sample_size.toFixed(1) : "—"}</td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
        )}
      </dd>
    </>
  );
}
