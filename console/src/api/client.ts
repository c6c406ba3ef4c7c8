// The one way the console reaches the gateway: JSON over fetch with the
// session's Bearer token. Paths are checked against the generated OpenAPI
// types, so a route renamed on the server fails the type check here.
import type { GetResponses, WriteResponses } from "./resources";
import type { paths } from "./schema";

export type ErrorBody = { error: { code: string; message: string; details: Record<string, unknown> } };

export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly details: Record<string, unknown>;

  constructor(status: number, code: string, message: string, details: Record<string, unknown> = {}) {
    super(message);
    this.status = status;
    this.code = code;
    this.details = details;
  }
}

type Method = "get" | "post" | "patch";
type PathWith<M extends Method> = {
  [P in keyof paths]: paths[P] extends Record<M, object> ? P : never;
}[keyof paths];
type QueryOf<P extends keyof paths, M extends Method> = paths[P][M] extends {
  parameters: { query?: infer Q };
}
  ? NonNullable<Q>
  : never;

let tokenSource: () => string | null = () => null;
let onUnauthorized: (reason: string) => void = () => undefined;

/** Wire the client to the session: where the token comes from, what a 401 does. */
export function connectSession(source: () => string | null, unauthorized: (reason: string) => void): void {
  tokenSource = source;
  onUnauthorized = unauthorized;
}

/** A 422's reasons by field path, from the envelope's `details.fields`. */
export function fieldProblems(details: Record<string, unknown>): Record<string, string> {
  const fields = details.fields;
  if (typeof fields !== "object" || fields === null) return {};
  return Object.fromEntries(
    Object.entries(fields as Record<string, unknown>).filter((entry): entry is [string, string] => typeof entry[1] === "string"),
  );
}

/** A path template with its {placeholders} filled, each value escaped. */
export function fillPath(template: string, params: Record<string, string> = {}): string {
  return template.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const value = params[name];
    if (value === undefined) throw new Error(`missing path parameter ${name}`);
    return encodeURIComponent(value);
  });
}

/** A query string from defined, non-empty values; arrays repeat their key. */
export function queryString(query: Record<string, unknown> = {}): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined || value === null || value === "") continue;
    for (const item of Array.isArray(value) ? value : [value]) search.append(key, String(item));
  }
  const text = search.toString();
  return text ? `?${text}` : "";
}

export function authHeaders(): Record<string, string> {
  const token = tokenSource();
  return token ? { Authorization: `Bearer ${token}` } : {};
}

/** Turn a non-2xx answer into an ApiError carrying the gateway's envelope. */
export async function failure(response: Response): Promise<ApiError> {
  let body: Partial<ErrorBody> = {};
  try {
    body = (await response.json()) as Partial<ErrorBody>;
  } catch {
    body = {};
  }
  const error = body.error;
  const apiError = error
    ? new ApiError(response.status, error.code, error.message, error.details ?? {})
    : new ApiError(response.status, "HTTP_ERROR", `the gateway answered ${response.status} ${response.statusText}`);
  if (response.status === 401) onUnauthorized(apiError.message);
  return apiError;
}

async function send<T>(method: string, url: string, body?: unknown): Promise<T> {
  let response: Response;
  try {
    response = await fetch(url, {
      method,
      headers: { Accept: "application/json", ...authHeaders(), ...(body === undefined ? {} : { "Content-Type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new ApiError(0, "NETWORK", "the gateway could not be reached");
  }
  if (!response.ok) throw await failure(response);
  return (await response.json()) as T;
}

// Each route's response type comes from resources.ts; its path and query
// parameters from the generated OpenAPI types, so both sides are checked.
export function apiGet<P extends PathWith<"get"> & keyof GetResponses>(
  path: P,
  options: { path?: Record<string, string>; query?: QueryOf<P, "get"> } = {},
): Promise<GetResponses[P]> {
  return send("GET", fillPath(path, options.path) + queryString(options.query as Record<string, unknown>));
}

export function apiPost<P extends PathWith<"post"> & keyof WriteResponses>(
  path: P,
  body: unknown,
  options: { path?: Record<string, string> } = {},
): Promise<WriteResponses[P]> {
  return send("POST", fillPath(path, options.path), body);
}

export function apiPatch<P extends PathWith<"patch"> & keyof WriteResponses>(
  path: P,
  body: unknown,
  options: { path?: Record<string, string> } = {},
): Promise<WriteResponses[P]> {
  return send("PATCH", fillPath(path, options.path), body);
}

/** The list envelope every paged route answers. */
export type Page<T> = { items: T[]; next_cursor: string | null };
