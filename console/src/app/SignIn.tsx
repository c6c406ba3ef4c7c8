import { useState, type SubmitEvent } from "react";
import { useSession } from "../lib/SessionContext";

export function SignIn() {
  const { reason, signIn } = useSession();
  const [token, setToken] = useState("");
  const [problem, setProblem] = useState<string | null>(null);

  const submit = (event: SubmitEvent) => {
    event.preventDefault();
    setProblem(signIn(token));
  };

  return (
    <main id="content" className="signin">
      <h1>Sign in to the Outrider console</h1>
      {reason ? (
        <div className="notice notice-error" role="alert">
          <p>{reason}</p>
        </div>
      ) : null}
      <p>
        Open the link <code>outrider up</code> printed, or run <code>outrider token --console</code> for a fresh one.
        In production, your platform's sign-in sends you here with a token.
      </p>
      <form onSubmit={submit} className="form">
        <label htmlFor="token">Console token (JWT)</label>
        <textarea
          id="token"
          rows={4}
          value={token}
          onChange={(event) => setToken(event.target.value)}
          aria-describedby={problem ? "token-problem" : undefined}
          aria-invalid={problem ? true : undefined}
          autoComplete="off"
          spellCheck={false}
        />
        {problem ? (
          <p id="token-problem" className="field-error">
            {problem}
          </p>
        ) : null}
        <button type="submit" className="button button-primary" disabled={!token.trim()}>
          Sign in
        </button>
      </form>
      <p className="hint">The token is kept for this browser tab only and sent as a Bearer header.</p>
    </main>
  );
}
