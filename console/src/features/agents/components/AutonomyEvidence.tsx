import { useId, useState } from "react";
import type { Agent } from "../../../api/resources";
import { QueryView } from "../../../components/States";
import { formatCount, formatRate } from "../../../lib/format";
import { useDecisionTypes } from "../api/rollouts";
import { useAutonomyEvidence } from "../api/evidence";
import { EXECUTION_WORDS, EXECUTIONS, rateWithInterval, recommendationInWords } from "../logic/evidence";

/**
 * Beside the autonomy switch: judged success of the agent's actions by how
 * they were carried out, how often people agreed with it, and whether the
 * evidence says it may act alone.
 */
export function AutonomyEvidence({ agent }: { agent: Agent }) {
  const id = useId();
  const types = useDecisionTypes(agent.has_autonomy_gate);
  const [decisionType, setDecisionType] = useState("");
  const evidence = useAutonomyEvidence(agent.id, decisionType.trim());
  if (!agent.has_autonomy_gate) return null;
  return (
    <>
      <dt>Autonomy evidence</dt>
      <dd className="evidence">
        <div className="field">
          <label htmlFor={`${id}-type`}>Decision type</label>
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
            Empty: every decision type of the agent together.
          </p>
        </div>
        <QueryView query={evidence} what="autonomy evidence">
          {(found) => {
            const words = recommendationInWords(found.recommendation);
            return (
              <>
                <p className="recommendation">
                  <span className={`badge badge-tone tone-${words.tone}`}>{words.label}</span> {found.reason}
                </p>
                <p>Agreement: {formatRate(found.agreement_rate, 1)} of confirmed or overridden actions were confirmed.</p>
                <div className="table-wrap" tabIndex={0} role="region" aria-label="Judged success per execution, scrolls sideways on a narrow screen">
                  <table>
                    <thead>
                      <tr>
                        <th scope="col">Execution</th>
                        <th scope="col">Judged success (95 %)</th>
                        <th scope="col" className="num">
                          Judged
                        </th>
                        <th scope="col" className="num">
                          Unknown / pending
                        </th>
                      </tr>
                    </thead>
                    <tbody>
                      {EXECUTIONS.map((execution) => {
                        const row = found.by_execution[execution];
                        return (
                          <tr key={execution}>
                            <th scope="row">{EXECUTION_WORDS[execution]}</th>
                            <td>{rateWithInterval(row?.mean, row?.low, row?.high)}</td>
                            <td className="num">{formatCount(row?.judged ?? 0)}</td>
                            <td className="num">
                              {formatCount(row?.unknown ?? 0)} / {formatCount(row?.pending ?? 0)}
                            </td>
                          </tr>
                        );
                      })}
                    </tbody>
                  </table>
                </div>
              </>
            );
          }}
        </QueryView>
      </dd>
    </>
  );
}
