import { useState, type SubmitEvent } from "react";
import { ApiError } from "../../../api/client";
import type { Rollout } from "../../../api/resources";
import { Dialog } from "../../../components/Dialog";
import { ErrorNotice } from "../../../components/States";
import { useCanWrite } from "../../../lib/SessionContext";
import { allowedActions } from "../logic/rollouts";
import { useRolloutAction } from "../api/queries";

/** Pause, resume and abort, for role 1 only; abort asks for a reason first, since it sends every subject back at once. */
export function RolloutActions({ rollout }: { rollout: Rollout }) {
  const canWrite = useCanWrite();
  const move = useRolloutAction(rollout.id);
  const [aborting, setAborting] = useState(false);
  const [reason, setReason] = useState("");
  if (!canWrite) return null;
  const actions = allowedActions(rollout.state);
  const conflict = move.error instanceof ApiError && move.error.status === 409 ? move.error : null;

  const abort = (event: SubmitEvent) => {
    event.preventDefault();
    move.mutate({ action: "abort", reason: reason.trim() }, { onSettled: () => setAborting(false) });
  };

  return (
    <div className="rollout-actions">
      {actions.includes("pause") ? (
        <button type="button" className="button" disabled={move.isPending} onClick={() => move.mutate({ action: "pause", reason: "" })}>
          Pause
        </button>
      ) : null}
      {actions.includes("resume") ? (
        <button type="button" className="button button-primary" disabled={move.isPending} onClick={() => move.mutate({ action: "resume", reason: "" })}>
          Resume
        </button>
      ) : null}
      {actions.includes("abort") ? (
        <button
          type="button"
          className="button button-danger"
          disabled={move.isPending}
          onClick={() => {
            move.reset();
            setReason("");
            setAborting(true);
          }}
        >
          Abort…
        </button>
      ) : null}
      {conflict ? (
        <p className="notice notice-warn" role="alert">
          This rollout changed while you were looking at it ({conflict.message}). Where it stands now is loaded; check it and
          try again.
        </p>
      ) : move.error ? (
        <ErrorNotice error={move.error} />
      ) : null}
      <Dialog open={aborting} title="Abort this rollout?" onClose={() => setAborting(false)}>
        <form onSubmit={abort} className="form">
          <p>Every subject goes back to the baseline at once, and the rollout cannot be resumed.</p>
          <label htmlFor="abort-reason">Reason (kept in its history)</label>
          <input id="abort-reason" value={reason} onChange={(event) => setReason(event.target.value)} maxLength={1000} autoComplete="off" />
          <div className="form-actions">
            <button type="button" className="button" onClick={() => setAborting(false)}>
              Cancel
            </button>
            <button type="submit" className="button button-danger" disabled={reason.trim() === "" || move.isPending}>
              Abort rollout
            </button>
          </div>
        </form>
      </Dialog>
    </div>
  );
}
