import type { ReactNode } from "react";
import { ApiError } from "../api/client";

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

/** The gateway's own words for a failure: a 403 says why, never an empty page. */
export function ErrorNotice({ error, retry }: { error: unknown; retry?: () => void }) {
  const api = error instanceof ApiError ? error : null;
  const title =
    api?.status === 403 ? "Not allowed" : api?.status === 0 ? "Gateway unreachable" : api ? `Request failed (${api.status})` : "Something went wrong";
  return (
    <div className="notice notice-error" role="alert">
      <p className="notice-title">{title}</p>
      <p>{error instanceof Error ? error.message : String(error)}</p>
      {api && api.code ? <p className="notice-code">code: {api.code}</p> : null}
      {retry ? (
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
