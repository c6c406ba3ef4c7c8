import { useId, useState, type SubmitEvent } from "react";
import type { Agent } from "../../../api/resources";
import { useCanWrite } from "../../../lib/SessionContext";
import { Dialog } from "../../../components/Dialog";
import { ErrorNotice } from "../../../components/States";
import { evidenceNote, modelIdProblem } from "../logic/agents";
import { useAgentModels, useUpdateAgent } from "../api/queries";
import { pinAsked } from "../../../lib/pinLinks";
import { useSearch } from "../../../lib/router";

const ENGINE_DEFAULT = "";
const OTHER = "\u0000other";

function modelName(model: string | null): string {
  return model || "Engine default";
}

/**
 * The model pin, chosen from the models the platform has seen this agent use
 * (its decisions, routing, model calls) or typed as another id the deployment
 * allows. Choosing does not apply: a pin changes which model answers every
 * task, so the change is shown from → to and applied only on confirm.
 */
export function ModelPicker({ agent }: { agent: Agent }) {
  const canWrite = useCanWrite();
  const models = useAgentModels(agent.id, canWrite);
  const update = useUpdateAgent(agent.id);
  const id = useId();
  const current = agent.model ?? ENGINE_DEFAULT;
  // A model Routing sent the operator here to pin is chosen, still to be reviewed.
  const [search, setSearch] = useSearch();
  const asked = pinAsked(search);
  const [choice, setChoice] = useState(asked && asked !== current ? asked : current);
  const [other, setOther] = useState("");
  const [confirming, setConfirming] = useState<string | null>(null);

  if (!canWrite) {
    return (
      <>
        <dt>Model</dt>
        <dd>
          <span>{modelName(agent.model)}</span>
        </dd>
      </>
    );
  }

  const patterns = models.data?.allowed_patterns ?? [];
  const choices = models.data?.models ?? [];
  const typed = other.trim();
  const offered = (model: string) => model === ENGINE_DEFAULT || model === agent.model || choices.some((o) => o.model === model);
  // One asked for by a link and not among the evidence is held to the deployment's patterns as a typed one is.
  const fromLink = choice !== OTHER && !offered(choice) ? choice : null;
  const problem = choice === OTHER ? modelIdProblem(typed, patterns) : fromLink !== null ? modelIdProblem(fromLink, patterns) : null;
  const target = choice === OTHER ? typed : choice;

  const review = (event: SubmitEvent) => {
    event.preventDefault();
    if (problem || target === current) return;
    update.reset();
    setConfirming(target);
  };
  const apply = () => {
    if (confirming === null) return;
    update.mutate(
      { model: confirming || null },
      {
        onSuccess: () => {
          setConfirming(null);
          setChoice(confirming);
          setOther("");
          if (asked) {
            const { pin: _pin, ...rest } = Object.fromEntries(search);
            setSearch(rest);
          }
        },
      },
    );
  };

  return (
    <>
      <dt>
        <label htmlFor={id}>Model</label>
      </dt>
      <dd>
        <form className="model-picker" onSubmit={review}>
          <select
            id={id}
            value={choice}
            aria-busy={models.isPending || undefined}
            onChange={(event) => setChoice(event.target.value)}
          >
            <option value={ENGINE_DEFAULT}>Engine default</option>
            {choices.map((option) => (
              <option key={option.model} value={option.model}>
                {option.model} — {evidenceNote(option.seen_in)}
              </option>
            ))}
            {agent.model && !choices.some((option) => option.model === agent.model) ? (
              <option value={agent.model}>{agent.model} — pinned now</option>
            ) : null}
            {fromLink !== null ? <option value={fromLink}>{fromLink} — from Routing</option> : null}
            <option value={OTHER}>Other model id…</option>
          </select>
          {fromLink !== null && problem ? <p className="field-error">{problem}</p> : null}
          {choice === OTHER ? (
            <>
              <label htmlFor={`${id}-other`}>Other model id</label>
              <input
                id={`${id}-other`}
                value={other}
                onChange={(event) => setOther(event.target.value)}
                autoComplete="off"
                spellCheck={false}
                aria-invalid={typed !== "" && problem !== null}
                aria-describedby={`${id}-other-hint`}
              />
              <p id={`${id}-other-hint`} className={typed && problem ? "field-error" : "hint"}>
                {typed && problem ? problem : patterns.length ? `Allowed: ${patterns.join(", ")}` : null}
              </p>
            </>
          ) : null}
          <button type="submit" className="button" disabled={target === current || problem !== null}>
            Review change
          </button>
        </form>
        {models.error ? <ErrorNotice error={models.error} retry={() => void models.refetch()} /> : null}
        <Dialog open={confirming !== null} title={`Change ${agent.name}'s model?`} onClose={() => setConfirming(null)}>
          <div className="form">
            <p className="model-change">
              <span>From</span> <code>{modelName(agent.model)}</code> <span>to</span>{" "}
              <code>{modelName(confirming)}</code>
            </p>
            <p>The engine uses the new model for every task {agent.id} takes from its next registry refresh.</p>
            {update.error ? <ErrorNotice error={update.error} /> : null}
            <div className="form-actions">
              <button type="button" className="button" onClick={() => setConfirming(null)}>
                Cancel
              </button>
              <button type="button" className="button button-primary" onClick={apply} disabled={update.isPending}>
                Apply
              </button>
            </div>
          </div>
        </Dialog>
      </dd>
    </>
  );
}
