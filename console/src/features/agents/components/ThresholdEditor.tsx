import { useEffect, useState, type SubmitEvent } from "react";
import { ApiError } from "../../../api/client";
import type { Skill } from "../../../api/resources";
import { useCanWrite } from "../../../lib/SessionContext";
import { ErrorNotice } from "../../../components/States";
import { checkThreshold, formFromThresholds, serverProblems, thresholdLabel, thresholdPatch, type ThresholdForm } from "../logic/thresholds";
import { useUpdateSkill } from "../api/queries";
import { ConflictNotice } from "./ConflictNotice";

export function ThresholdEditor({ skill }: { skill: Skill }) {
  const canWrite = useCanWrite();
  const schema = skill.thresholds_schema;
  if (!canWrite) {
    return (
      <dl className="thresholds-readonly">
        {Object.entries(schema).map(([key, spec]) => (
          <div key={key}>
            <dt>
              {thresholdLabel(key)} <code className="threshold-key">{key}</code>
            </dt>
            <dd>
              {skill.thresholds[key] ?? spec.default}{" "}
              <span className="hint">
                ({spec.min}–{spec.max}, step {spec.step})
              </span>
            </dd>
          </div>
        ))}
      </dl>
    );
  }
  return <EditableThresholds skill={skill} />;
}

function EditableThresholds({ skill }: { skill: Skill }) {
  const schema = skill.thresholds_schema;
  const update = useUpdateSkill(skill);
  const [form, setForm] = useState<ThresholdForm>(() => formFromThresholds(schema, skill.thresholds));
  const [fromServer, setFromServer] = useState<Record<string, string>>({});
  const [conflict, setConflict] = useState(false);
  const [saved, setSaved] = useState(false);

  // A new version from the server (ours or someone else's) resets the form.
  useEffect(() => {
    setForm(formFromThresholds(schema, skill.thresholds));
  }, [skill.version]);

  const { patch, problems } = thresholdPatch(schema, skill.thresholds, form);
  const dirty = Object.keys(patch).length > 0;

  const submit = (event: SubmitEvent) => {
    event.preventDefault();
    setConflict(false);
    setSaved(false);
    setFromServer({});
    update.mutate(
      { thresholds: patch, version: skill.version },
      {
        onSuccess: () => setSaved(true),
        onError: (error) => {
          if (error instanceof ApiError && error.code === "VERSION_CONFLICT") setConflict(true);
          else if (error instanceof ApiError && error.status === 422) setFromServer(serverProblems(schema, error.details));
        },
      },
    );
  };

  return (
    <form className="thresholds" onSubmit={submit} noValidate aria-label={`Thresholds of ${skill.title}`}>
      {conflict ? <ConflictNotice /> : null}
      <div className="threshold-grid">
        {Object.entries(schema).map(([key, spec]) => {
          const id = `threshold-${skill.id}-${key}`;
          const local = checkThreshold(spec, form[key] ?? "").problem;
          const problem = fromServer[key] ?? local;
          return (
            <div key={key} className="field">
              <label htmlFor={id}>
                {thresholdLabel(key)} <code className="threshold-key">{key}</code>
              </label>
              <input
                id={id}
                name={key}
                type="number"
                inputMode="decimal"
                min={spec.min}
                max={spec.max}
                step={spec.step}
                value={form[key] ?? ""}
                aria-invalid={problem ? true : undefined}
                aria-describedby={`${id}-help${problem ? ` ${id}-problem` : ""}`}
                onChange={(event) => {
                  setSaved(false);
                  setFromServer(({ [key]: _, ...rest }) => rest);
                  setForm({ ...form, [key]: event.target.value });
                }}
              />
              <p id={`${id}-help`} className="hint">
                {spec.description ? `${spec.description} ` : ""}
                {spec.type === "integer" ? "Whole number" : "Number"} from {spec.min} to {spec.max}, step {spec.step}.
              </p>
              {problem ? (
                <p id={`${id}-problem`} className="field-error">
                  {fromServer[key] ? `Refused by the server: ${problem}` : problem}
                </p>
              ) : null}
            </div>
          );
        })}
      </div>
      {update.error && !conflict && Object.keys(fromServer).length === 0 ? <ErrorNotice error={update.error} /> : null}
      <div className="form-actions">
        <button type="submit" className="button button-primary" disabled={!dirty || Object.keys(problems).length > 0 || update.isPending}>
          Save thresholds
        </button>
        {saved && !dirty ? (
          <span role="status" className="hint">
            Saved as version {skill.version}.
          </span>
        ) : null}
      </div>
    </form>
  );
}
