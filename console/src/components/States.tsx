import type { ReactNode } from "react";
import { ApiError } from "../api/client";
import { errorTitle, operatorMessage, requestIdOf, retryable } from "../lib/errors";

export function Loading({ what }: { what: string }) {
  return (
    <p className="state state-loading" role="status">
      <span className="spinner" aria-hidden="true" /> Loading {what}…
    </p>
  );
}

export function Empty({ children }: { children: ReactNode }) {
  return <p className="state state-empty">{children}</p>;
}

/**
 * A failure in an operator's words: a 403 says why, never an empty page. "Try
 * again" shows only where asking again can succeed (unreachable, 5xx), not on
 * a refusal that will answer the same.
 */
export function ErrorNotice({ error, retry }: { error: unknown; retry?: () => void }) {
  const api = error instanceof ApiError ? error : null;
  const requestId = requestIdOf(error);
  return (
    <div className="notice notice-error" role="alert">
      <p className="notice-title">{errorTitle(error)}</p>
      <p>{operatorMessage(error)}</p>
      {api && api.code ? <p className="notice-code">code: {api.code}</p> : null}
      {requestId ? (
        <p className="notice-code">
          request id: <code>{requestId}</code> (quote it when reporting this)
        </p>
      ) : null}
      {retry && retryable(error) ? (
        <button type="button" className="button" onClick={retry}>
          Try again
        </button>
      ) : null}
    </div>
  );
}

type QueryLike<T> = { data: T | undefined; error: unknown; isPending: boolean; refetch: () => unknown };

/** Loading, error, or the page: every data region goes through one of these. */
export function QueryView<T>({
  query,
  what,
  children,
}: {
  query: QueryLike<T>;
  what: string;
  children: (data: T) => ReactNode;
}) {
  if (query.isPending) return <Loading what={what} />;
  if (query.error || query.data === undefined) return <ErrorNotice error={query.error} retry={() => void query.refetch()} />;
  return <>{children(query.data)}</>;
}
