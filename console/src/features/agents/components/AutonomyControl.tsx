import { useState, type SubmitEvent } from "react";
import { ApiError } from "../../../api/client";
import type { Agent } from "../../../api/resources";
import { useCanWrite } from "../../../lib/SessionContext";
import { Dialog } from "../../../components/Dialog";
import { ErrorNotice } from "../../../components/States";
import { Switch } from "../../../components/Switch";
import { useUpdateAgent } from "../api/queries";

/**
 * Autonomy lets the agent act without a person. Switching it on needs the
 * agent's id typed out, as the registry demands: a click alone is too easy to
 * make by mistake for a change that reaches riders and customers.
 */
export function AutonomyControl({ agent }: { agent: Agent }) {
  const canWrite = useCanWrite();
  const update = useUpdateAgent(agent.id);
  const [confirming, setConfirming] = useState(false);
  const [typed, setTyped] = useState("");

  const turnOn = (event: SubmitEvent) => {
    event.preventDefault();
    update.mutate({ autonomous: true, confirm: typed }, { onSuccess: () => setConfirming(false) });
  };

  return (
    <>
      <dt id="autonomy-label">Autonomy</dt>
      <dd>
        {canWrite ? (
          <Switch
            checked={agent.autonomous}
            label={`Autonomy of ${agent.id}`}
            busy={update.isPending}
            onChange={(next) => {
              update.reset();
              if (next) {
                setTyped("");
                setConfirming(true);
              } else {
                update.mutate({ autonomous: false });
              }
            }}
          />
        ) : (
          <span>{agent.autonomous ? "On" : "Off"}</span>
        )}
        <span className="hint">
          {agent.autonomous ? " Acts without waiting for a person." : " Every write waits for a person to confirm."}
        </span>
        {update.error && !confirming ? <ErrorNotice error={update.error} /> : null}
        <Dialog open={confirming} title={`Let ${agent.name} act on its own?`} onClose={() => setConfirming(false)}>
          <form onSubmit={turnOn} className="form">
            <p>
              With autonomy on, {agent.id} reassigns riders and messages customers without a person confirming. Type{" "}
              <code>{agent.id}</code> to confirm.
            </p>
            <label htmlFor="autonomy-confirm">Agent id</label>
            <input
              id="autonomy-confirm"
              value={typed}
              onChange={(event) => setTyped(event.target.value)}
              autoComplete="off"
              spellCheck={false}
            />
            {update.error ? (
              <p className="field-error" role="alert">
                {update.error instanceof ApiError ? update.error.message : String(update.error)}
              </p>
            ) : null}
            <div className="form-actions">
              <button type="button" className="button" onClick={() => setConfirming(false)}>
                Cancel
              </button>
              <button type="submit" className="button button-danger" disabled={typed !== agent.id || update.isPending}>
                Turn autonomy on
              </button>
            </div>
          </form>
        </Dialog>
      </dd>
    </>
  );
}
