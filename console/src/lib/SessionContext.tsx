import { createContext, useCallback, useContext, useEffect, useMemo, useRef, useState, type ReactNode } from "react";
import { connectSession } from "../api/client";
import { askOpenTabs, serveOpenTabs, type Serving } from "./handover";
import { canWrite, readClaims, tokenFromFragment, tokenProblem, TOKEN_KEY, type Claims } from "./session";

type Session = {
  token: string | null;
  claims: Claims | null;
  /** Why the operator is on the sign-in page, when they were sent there. */
  reason: string | null;
  /** True while a new tab asks the open console tabs for their session (see handover.ts). */
  pending: boolean;
  signIn: (token: string) => string | null;
  signOut: (reason?: string) => void;
};

const SessionContext = createContext<Session | null>(null);

type State = { token: string | null; reason: string | null; pending: boolean };

function storedToken(): State {
  // A token in the fragment wins and is removed from the address bar at once,
  // so it is neither bookmarked nor left on screen.
  const fromLink = tokenFromFragment(window.location.hash);
  if (fromLink !== null) {
    window.history.replaceState(null, "", window.location.pathname + window.location.search);
  }
  const token = fromLink ?? window.sessionStorage.getItem(TOKEN_KEY);
  if (token === null) return { token: null, reason: null, pending: typeof BroadcastChannel !== "undefined" };
  const problem = tokenProblem(token, Date.now() / 1000);
  if (problem !== null) {
    window.sessionStorage.removeItem(TOKEN_KEY);
    return { token: null, reason: problem, pending: false };
  }
  window.sessionStorage.setItem(TOKEN_KEY, token);
  return { token, reason: null, pending: false };
}

export function SessionProvider({ children }: { children: ReactNode }) {
  const [state, setState] = useState(storedToken);
  const token = useRef(state.token);
  token.current = state.token;
  const serving = useRef<Serving | null>(null);

  const dropSession = useCallback((reason: string | null) => {
    window.sessionStorage.removeItem(TOKEN_KEY);
    setState({ token: null, reason, pending: false });
  }, []);

  // Signing out by choice (no reason) ends the session in every tab; a token
  // the gateway refused is refused in the other tabs' next call anyway.
  const signOut = useCallback(
    (reason?: string) => {
      if (reason === undefined) serving.current?.signOutEverywhere();
      dropSession(reason ?? null);
    },
    [dropSession],
  );

  const signIn = useCallback((entered: string) => {
    const trimmed = entered.trim().replace(/^Bearer\s+/i, "");
    const problem = tokenProblem(trimmed, Date.now() / 1000);
    if (problem !== null) return problem;
    window.sessionStorage.setItem(TOKEN_KEY, trimmed);
    setState({ token: trimmed, reason: null, pending: false });
    return null;
  }, []);

  // A link pasted into a tab already on the console differs from the page
  // only in its fragment, so the page does not load again: its token is read
  // here, as a load would read it.
  useEffect(() => {
    const onLink = () => {
      const fromLink = tokenFromFragment(window.location.hash);
      if (fromLink === null) return;
      window.history.replaceState(null, "", window.location.pathname + window.location.search);
      const problem = signIn(fromLink);
      if (problem !== null) dropSession(problem);
    };
    window.addEventListener("hashchange", onLink);
    return () => window.removeEventListener("hashchange", onLink);
  }, [signIn, dropSession]);

  useEffect(() => {
    if (!state.pending) return;
    let current = true;
    void askOpenTabs().then((handed) => {
      if (!current) return;
      if (handed !== null && tokenProblem(handed, Date.now() / 1000) === null) {
        window.sessionStorage.setItem(TOKEN_KEY, handed);
        setState({ token: handed, reason: null, pending: false });
      } else {
        setState((was) => ({ ...was, pending: false }));
      }
    });
    return () => {
      current = false;
    };
  }, [state.pending]);

  useEffect(() => {
    const served = serveOpenTabs(
      () => token.current,
      () => dropSession("You signed out in another tab."),
    );
    serving.current = served;
    return () => {
      served.stop();
      serving.current = null;
    };
  }, [dropSession]);

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
      pending: state.pending,
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
