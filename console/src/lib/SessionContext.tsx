import { createContext, useCallback, useContext, useMemo, useState, type ReactNode } from "react";
import { connectSession } from "../api/client";
import { canWrite, readClaims, tokenFromFragment, tokenProblem, TOKEN_KEY, type Claims } from "./session";

type Session = {
  token: string | null;
  claims: Claims | null;
  /** Why the operator is on the sign-in page, when they were sent there. */
  reason: string | null;
  signIn: (token: string) => string | null;
  signOut: (reason?: string) => void;
};

const SessionContext = createContext<Session | null>(null);

function storedToken(): { token: string | null; reason: string | null } {
  // A token in the fragment wins and is removed from the address bar at once,
  // so it is neither bookmarked nor left on screen.
  const fromLink = tokenFromFragment(window.location.hash);
  if (fromLink !== null) {
    window.history.replaceState(null, "", window.location.pathname + window.location.search);
  }
  const token = fromLink ?? window.sessionStorage.getItem(TOKEN_KEY);
  if (token === null) return { token: null, reason: null };
  const problem = tokenProblem(token, Date.now() / 1000);
  if (problem !== null) {
    window.sessionStorage.removeItem(TOKEN_KEY);
    return { token: null, reason: problem };
  }
  window.sessionStorage.setItem(TOKEN_KEY, token);
  return { token, reason: null };
}

export function SessionProvider({ children }: { children: ReactNode }) {
  const [state, setState] = useState(storedToken);

  const signOut = useCallback((reason?: string) => {
    window.sessionStorage.removeItem(TOKEN_KEY);
    setState({ token: null, reason: reason ?? null });
  }, []);

  const signIn = useCallback((token: string) => {
    const trimmed = token.trim().replace(/^Bearer\s+/i, "");
    const problem = tokenProblem(trimmed, Date.now() / 1000);
    if (problem !== null) return problem;
    window.sessionStorage.setItem(TOKEN_KEY, trimmed);
    setState({ token: trimmed, reason: null });
    return null;
  }, []);

  // Wired during render, not in an effect: children's effects run before
  // their parent's, so the pages' first requests would leave without a token.
  connectSession(
    () => state.token,
    (message) => signOut(`The gateway refused your sign-in: ${message}`),
  );

  const value = useMemo<Session>(
    () => ({
      token: state.token,
      claims: state.token ? readClaims(state.token) : null,
      reason: state.reason,
      signIn,
      signOut,
    }),
    [state, signIn, signOut],
  );
  return <SessionContext.Provider value={value}>{children}</SessionContext.Provider>;
}

export function useSession(): Session {
  const session = useContext(SessionContext);
  if (session === null) throw new Error("useSession outside SessionProvider");
  return session;
}

/** Whether to draw write controls at all: absent, not disabled, for read-only staff. */
export function useCanWrite(): boolean {
  return canWrite(useSession().claims);
}
