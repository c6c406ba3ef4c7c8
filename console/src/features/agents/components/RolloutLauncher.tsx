import { useId, useState, type SubmitEvent } from "react";
import { ApiError } from "../../../api/client";
import type { Agent, Rollout, Skill } from "../../../api/resources";
import { Dialog } from "../../../components/Dialog";
import { ErrorNotice } from "../../../components/States";
import { Link } from "../../../lib/router";
import { useCanWrite } from "../../../lib/SessionContext";
import { modelIdProblem } from "../logic/agents";
import { useAgentModels } from "../api/queries";
import { emptyRolloutForm, rolloutDraft, type RolloutForm } from "../logic/rolloutDraft";
import { useCreateRollout, useDecisionTypes } from "../api/rollouts";

type Target = { agent: Agent; skill?: undefined } | { agent?: undefined; skill: Skill };
type Kind = "model" | "autonomy" | "skill";

/**
 * "Roll out gradually": the same change the control beside it makes at once,
 * given to a share of subjects first and advanced by the guard on judged
 * outcomes. Drawn for role 1 only, like every write control.
 */
export function RolloutLauncher(target: Target) {
  const canWrite = useCanWrite();
  const [open, setOpen] = useState(false);
  const kinds: Kind[] = target.skill
    ? ["skill"]
    : [...(target.agent.runtime === "engine" ? (["model"] as const) : []), ...(target.agent.has_autonomy_gate ? (["autonomy"] as const) : [])];
  if (!canWrite || kinds.length === 0) return null;
  const name = target.skill ? target.skill.title : target.agent.name;
  return (
    <div className="rollout-launch">
      <button type="button" className="button" onClick={() => setOpen(true)} aria-haspopup="dialog">
        Roll out gradually
      </button>
      <Dialog open={open} title={`Roll out a change to ${name} gradually`} onClose={() => setOpen(false)}>
        <RolloutDialogBody target={target} kinds={kinds} onClose={() => setOpen(false)} />
      </Dialog>
    </div>
  );
}

function RolloutDialogBody({ target, kinds, onClose }: { target: Target; kinds: Kind[]; onClose: () => void }) {
  const id = useId();
  const agentId = target.skill ? target.skill.agent_id : target.agent.id;
  const create = useCreateRollout();
  const types = useDecisionTypes(true);
  const [kind, setKind] = useState<Kind>(kinds[0] ?? "model");
  const [form, setForm] = useState<RolloutForm>(() => emptyRolloutForm());
  // The candidates the model pin offers: the models this agent has evidence
  // for, or any id the deployment allows, typed.
  const models = useAgentModels(agentId, kind === "model");
  const suggestions = (models.data?.models ?? []).map((m) => m.model).filter((m) => m !== (target.agent?.model ?? ""));
  const [model, setModel] = useState("");
  const [typedId, setTypedId] = useState("");
  const [enabled, setEnabled] = useState("");
  const [thresholds, setThresholds] = useState<Record<string, string>>(() =>
    Object.fromEntries(Object.entries(target.skill?.thresholds_schema ?? {}).map(([key, spec]) => [key, String(target.skill?.thresholds[key] ?? spec.default)])),
  );
  const [tried, setTried] = useState(false);
  const [started, setStarted] = useState<Rollout | null>(null);

  const autonomyOn = !(target.agent?.autonomous ?? false);
  const change: Record<string, unknown> | null =
    kind === "model"
      ? { model: model.trim() || null }
      : kind === "autonomy"
        ? autonomyOn
          ? { autonomous: true, confirm: typedId }
          : { autonomous: false }
        : skillChange(target.skill, enabled, thresholds);
  const { draft, problems } = rolloutDraft(agentId, change ?? {}, form);
  const changeProblem =
    change === null
      ? "change the switch or at least one threshold"
      : kind === "autonomy" && autonomyOn && typedId !== agentId
        ? `type ${agentId} to confirm`
        : kind === "model" && (model.trim() || null) === (target.agent?.model ?? null)
          ? "choose a model other than the current pin"
          : kind === "model" && model.trim() && models.data
            ? modelIdProblem(model.trim(), models.data.allowed_patterns)
            : null;

  const submit = (event: SubmitEvent) => {
    event.preventDefault();
    setTried(true);
    if (draft === null || changeProblem !== null) return;
    create.mutate(draft, { onSuccess: setStarted });
  };
  const field = (key: keyof RolloutForm, label: string, hint: string, inputMode: "decimal" | "numeric" | "text" = "decimal") => {
    const problem = tried ? problems[key] : undefined;
    return (
      <div className="field">
        <label htmlFor={`${id}-${key}`}>{label}</label>
        <input
          id={`${id}-${key}`}
          value={form[key]}
          inputMode={inputMode}
          autoComplete="off"
          list={key === "decisionType" ? `${id}-types` : undefined}
          aria-invalid={problem ? true : undefined}
          aria-describedby={`${id}-${key}-hint`}
          onChange={(event) => setForm({ ...form, [key]: event.target.value })}
        />
        <p id={`${id}-${key}-hint`} className={problem ? "field-error" : "hint"}>
          {problem ?? hint}
        </p>
      </div>
    );
  };

  if (started) {
    return (
      <div className="form">
        <p role="status">
          Rolling out to {started.percent} % of {started.decision_type} subjects.{" "}
          <Link to={`/rollouts/${started.id}`}>Open the rollout</Link>
        </p>
        <div className="form-actions">
          <button type="button" className="button" onClick={onClose}>
            Close
          </button>
        </div>
      </div>
    );
  }

  const exists = create.error instanceof ApiError && create.error.code === "ROLLOUT_EXISTS" ? create.error : null;
  const inTheWay = typeof exists?.details.rollout_id === "string" ? exists.details.rollout_id : null;
  return (
    <form className="form" onSubmit={submit} noValidate>
      {kinds.length > 1 ? (
        <fieldset className="segmented-choice">
          <legend>What changes</legend>
          {kinds.map((k) => (
            <label key={k} className="check">
              <input type="radio" name={`${id}-kind`} value={k} checked={kind === k} onChange={() => setKind(k)} /> {k === "model" ? "Model pin" : "Autonomy"}
            </label>
          ))}
        </fieldset>
      ) : null}
      {kind === "model" ? (
        <div className="field">
          <label htmlFor={`${id}-model`}>Candidate model (now {target.agent?.model ?? "the engine default"})</label>
          <input
            id={`${id}-model`}
            list={`${id}-models`}
            value={model}
            onChange={(event) => setModel(event.target.value)}
            placeholder="empty for the engine default"
            autoComplete="off"
            spellCheck={false}
          />
          <datalist id={`${id}-models`}>
            {suggestions.map((m) => (
              <option key={m} value={m} />
            ))}
          </datalist>
        </div>
      ) : null}
      {kind === "autonomy" ? (
        autonomyOn ? (
          <div className="field">
            <label htmlFor={`${id}-confirm`}>Agent id, typed out to let it act on its own</label>
            <input id={`${id}-confirm`} value={typedId} onChange={(event) => setTypedId(event.target.value)} autoComplete="off" spellCheck={false} />
            <p className="hint">
              In the candidate arm, {agentId} acts without a person confirming. Type <code>{agentId}</code>.
            </p>
          </div>
        ) : (
          <p>The candidate arm waits for a person to confirm every write again.</p>
        )
      ) : null}
      {kind === "skill" && target.skill ? (
        <>
          <div className="field">
            <label htmlFor={`${id}-enabled`}>Switch (now {target.skill.enabled ? "on" : "off"})</label>
            <select id={`${id}-enabled`} value={enabled} onChange={(event) => setEnabled(event.target.value)}>
              <option value="">Leave as it is</option>
              <option value={target.skill.enabled ? "off" : "on"}>Turn {target.skill.enabled ? "off" : "on"}</option>
            </select>
          </div>
          {Object.entries(target.skill.thresholds_schema).map(([key, spec]) => (
            <div key={key} className="field">
              <label htmlFor={`${id}-t-${key}`}>{key}</label>
              <input
                id={`${id}-t-${key}`}
                type="number"
                min={spec.min}
                max={spec.max}
                step={spec.step}
                value={thresholds[key] ?? ""}
                onChange={(event) => setThresholds({ ...thresholds, [key]: event.target.value })}
              />
            </div>
          ))}
        </>
      ) : null}
      {tried && changeProblem ? (
        <p className="field-error" role="alert">
          {changeProblem}
        </p>
      ) : null}
      {field("decisionType", "Decision type", "the decisions this rollout gates")}
      <datalist id={`${id}-types`}>
        {(types.data ?? []).map((t) => (
          <option key={t} value={t} />
        ))}
      </datalist>
      {field("steps", "Steps (% of subjects)", "the safe default is 5, 25, 50, 100", "text")}
      <div className="form-row">
        {field("maxDrop", "Largest drop allowed", "default 0.05")}
        {field("confidenceLevel", "Confidence", "default 0.95")}
        {field("minJudged", "Judged per arm before a step", "default 50", "numeric")}
      </div>
      {exists ? (
        <p className="notice notice-warn" role="alert">
          {exists.message}.{" "}
          {inTheWay ? <Link to={`/rollouts/${inTheWay}`}>Open the rollout in the way</Link> : null}
        </p>
      ) : create.error ? (
        <ErrorNotice error={create.error} />
      ) : null}
      <div className="form-actions">
        <button type="button" className="button" onClick={onClose}>
          Cancel
        </button>
        <button type="submit" className="button button-primary" disabled={create.isPending}>
          Start rollout
        </button>
      </div>
    </form>
  );
}

/** A skill's change: the switch if flipped, and the thresholds that differ from now; null when nothing would change. */
function skillChange(skill: Skill | undefined, enabled: string, thresholds: Record<string, string>): Record<string, unknown> | null {
  if (!skill) return null;
  const changed = Object.fromEntries(
    Object.entries(thresholds)
      .filter(([key, value]) => value.trim() !== "" && Number(value) !== Number(skill.thresholds[key] ?? skill.thresholds_schema[key]?.default))
      .map(([key, value]) => [key, Number(value)]),
  );
  if (enabled === "" && Object.keys(changed).length === 0) return null;
  return {
    skill_id: skill.id,
    ...(enabled === "" ? {} : { enabled: enabled === "on" }),
    ...(Object.keys(changed).length > 0 ? { thresholds: changed } : {}),
  };
}
