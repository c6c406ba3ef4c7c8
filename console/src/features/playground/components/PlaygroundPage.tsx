import { useState, type SubmitEvent } from "react";
import { PageHeader } from "../../../components/PageHeader";
import { useCanWrite } from "../../../lib/SessionContext";
import { Empty, QueryView } from "../../../components/States";
import { Time } from "../../../components/Time";
import { formatMs } from "../../../lib/format";
import { Link, useSearch } from "../../../lib/router";
import { ENDING_BADGE, explainFailure, promptBudget, PROMPT_LIMIT, runEnding } from "../logic/trace";
import { useAgentSkills, usePlaygroundAgents, usePlaygroundStatus, useRunStream, useRuns } from "../api/queries";
import { FinalAnswer, StepView, TraceSummary } from "./TraceView";

export function PlaygroundPage() {
  const canWrite = useCanWrite();
  const status = usePlaygroundStatus();
  const unconfigured = status.data && !status.data.configured ? status.data.reason : null;
  return (
    <>
      <PageHeader title="Playground" />
      <p className="hint">
        Runs one prompt through a skill's tools with the real model. Read tools run against Outrider's backend with
        personal data redacted; write tools are only proposed, never executed.
      </p>
      {unconfigured ? (
        <div className="notice notice-warn" role="status">
          <p className="notice-title">Runs are switched off here</p>
          <p>{sentence(unconfigured)}, then restart Outrider. Past runs are below.</p>
        </div>
      ) : canWrite ? (
        <RunForm defaultModel={status.data?.default_model} />
      ) : (
        <p className="notice notice-info">Only role 1 may run prompts; past runs are below.</p>
      )}
      <PastRuns />
    </>
  );
}

/** The service's reason opens a sentence here. */
function sentence(reason: string): string {
  return reason.charAt(0).toUpperCase() + reason.slice(1);
}

function RunForm({ defaultModel }: { defaultModel: string | undefined }) {
  const [search] = useSearch();
  const agents = usePlaygroundAgents();
  const [agentId, setAgentId] = useState(search.get("agent") ?? "");
  const [skillId, setSkillId] = useState(search.get("skill") ?? "");
  const [prompt, setPrompt] = useState("");
  const skills = useAgentSkills(agentId);
  const { state, run, cancel } = useRunStream();
  const budget = promptBudget(prompt);

  const submit = (event: SubmitEvent) => {
    event.preventDefault();
    void run({ agent_id: agentId, skill_id: skillId, prompt });
  };

  return (
    <>
      <form className="form panel" onSubmit={submit} aria-label="Run a prompt">
        <div className="form-row">
          <div className="field">
            <label htmlFor="pg-agent">Agent</label>
            <select
              id="pg-agent"
              value={agentId}
              onChange={(event) => {
                setAgentId(event.target.value);
                setSkillId("");
              }}
            >
              <option value="">Choose an agent</option>
              {agents.data?.items
                .filter((a) => a.skill_count > 0)
                .map((a) => (
                  <option key={a.id} value={a.id}>
                    {a.name} ({a.status})
                  </option>
                ))}
            </select>
          </div>
          <div className="field">
            <label htmlFor="pg-skill">Skill</label>
            <select id="pg-skill" value={skillId} onChange={(event) => setSkillId(event.target.value)} disabled={!agentId}>
              <option value="">{skills.data && skills.data.items.length === 1 ? "Its only skill" : "Choose a skill"}</option>
              {skills.data?.items.map((s) => (
                <option key={s.id} value={s.id}>
                  {s.title}
                </option>
              ))}
            </select>
          </div>
        </div>
        <div className="field">
          <label htmlFor="pg-prompt">Prompt</label>
          <textarea
            id="pg-prompt"
            rows={5}
            value={prompt}
            onChange={(event) => setPrompt(event.target.value)}
            aria-describedby="pg-budget"
            aria-invalid={budget.over ? true : undefined}
          />
          <p id="pg-budget" className={budget.over ? "field-error" : "hint"} aria-live="polite">
            {budget.used} / {PROMPT_LIMIT} characters{budget.over ? ` — ${-budget.left} over the limit` : ""}
          </p>
        </div>
        {defaultModel ? (
          <p className="hint">
            An agent without a pinned model runs on <code>{defaultModel}</code>.
          </p>
        ) : null}
        <div className="form-actions">
          <button
            type="submit"
            className="button button-primary"
            disabled={!agentId || !prompt.trim() || budget.over || state.status === "running"}
          >
            Run
          </button>
          {state.status === "running" ? (
            <button type="button" className="button" onClick={cancel}>
              Stop
            </button>
          ) : null}
        </div>
      </form>

      {state.status !== "idle" ? (
        <section aria-labelledby="trace-heading" className="trace">
          <h2 id="trace-heading">Trace</h2>
          {state.started ? (
            <p className="hint">
              Run <code>{state.started.id}</code> · {state.started.agent_id} · {state.started.skill_id} · {state.started.model}
            </p>
          ) : null}
          <p role="status" className="hint">
            {state.status === "running"
              ? `Running… ${state.steps.length} ${state.steps.length === 1 ? "step" : "steps"} so far`
              : state.status === "done"
                ? `Finished in ${formatMs(state.trace?.total_ms)} with ${state.steps.length} ${state.steps.length === 1 ? "step" : "steps"}.`
                : "The run did not finish."}
          </p>
          {state.error ? (
            <div className="notice notice-error" role="alert">
              <p className="notice-title">{state.error.code}</p>
              <p>{explainFailure(state.error)}</p>
            </div>
          ) : null}
          {state.steps.length > 0 ? (
            <ol className="steps">
              {state.steps.map((step, index) => (
                <StepView key={index} step={step} index={index} />
              ))}
            </ol>
          ) : state.status === "done" ? (
            <Empty>The model answered without calling a tool.</Empty>
          ) : null}
          {state.trace ? (
            <>
              <FinalAnswer trace={state.trace} />
              <TraceSummary trace={state.trace} />
            </>
          ) : null}
        </section>
      ) : null}
    </>
  );
}

function PastRuns() {
  const runs = useRuns();
  return (
    <section aria-labelledby="past-runs">
      <h2 id="past-runs">Past runs</h2>
      <QueryView query={runs} what="past runs">
        {(page) =>
          page.items.length === 0 ? (
            <Empty>No prompt has been run yet.</Empty>
          ) : (
            <div className="table-wrap">
              <table>
                <thead>
                  <tr>
                    <th scope="col">When</th>
                    <th scope="col">Agent · skill</th>
                    <th scope="col">Prompt</th>
                    <th scope="col" className="num">
                      Steps
                    </th>
                    <th scope="col" className="num">
                      Time
                    </th>
                    <th scope="col">Ended</th>
                    <th scope="col">By</th>
                  </tr>
                </thead>
                <tbody>
                  {page.items.map((r) => (
                    <tr key={r.id}>
                      <td>
                        <Link to={`/playground/runs/${r.id}`}>
                          <Time iso={r.created_at} />
                        </Link>
                      </td>
                      <td>
                        {r.agent_id} · {r.skill_id}
                      </td>
                      <td className="cell-clip">{r.prompt}</td>
                      <td className="num">{r.step_count}</td>
                      <td className="num">{formatMs(r.total_ms)}</td>
                      <td>
                        <span className={ENDING_BADGE[runEnding(r).tone]}>{runEnding(r).label}</span>
                      </td>
                      <td>{r.created_by_email || r.created_by}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )
        }
      </QueryView>
    </section>
  );
}
