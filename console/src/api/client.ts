// The one way the console reaches the gateway: JSON over fetch with the
// session's Bearer token. A route's path, query, request body and answer are
// all read from the generated OpenAPI types, so a route renamed or reshaped
// on the server fails the type check here.
import type { ErrorEnvelope } from "./resources";
import type { paths } from "./schema";

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
/** The console's routes (under /admin) that answer `M`; the engine's are not for it. */
type PathWith<M extends Method> = {
  [P in keyof paths]: P extends `/admin/${string}` ? (paths[P] extends Record<M, object> ? P : never) : never;
}[keyof paths];
type QueryOf<P extends keyof paths, M extends Method> = paths[P][M] extends {
  parameters: { query?: infer Q };
}
  ? NonNullable<Q>
  : never;
type JsonOf<T> = T extends { content: { "application/json": infer Body } } ? Body : never;

/** The JSON a route answers on success: 200, or 201 for a creation. */
export type ResponseOf<P extends PathWith<M>, M extends Method> = paths[P][M] extends { responses: infer R }
  ? JsonOf<R[Extract<keyof R, 200 | 201>]>
  : never;

/** The JSON body a write route takes. */
export type BodyOf<P extends PathWith<M>, M extends "post" | "patch"> = paths[P][M] extends { requestBody?: infer B }
  ? JsonOf<NonNullable<B>>
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
  let body: Partial<ErrorEnvelope>;
  try {
    body = (await response.json()) as Partial<ErrorEnvelope>;
  } catch {
    body = {};
  }
  const error = body.error;
  // The gateway quotes a 5xx's request id in its envelope and its header; a
  // body that is not the envelope (a proxy's page) may still carry the header.
  const header = response.headers.get("X-Request-Id");
  const quoted = header ? { request_id: header } : {};
  const apiError = error
    ? // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- a proxy before the gateway may answer JSON that is not its envelope
      new ApiError(response.status, error.code, error.message, { ...quoted, ...(error.details ?? {}) })
    : new ApiError(response.status, "HTTP_ERROR", `the gateway answered ${response.status} ${response.statusText}`, quoted);
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

export function apiGet<P extends PathWith<"get">>(
  path: P,
  options: { path?: Record<string, string>; query?: QueryOf<P, "get"> } = {},
): Promise<ResponseOf<P, "get">> {
  return send("GET", fillPath(path, options.path) + queryString(options.query as Record<string, unknown>));
}

export function apiPost<P extends PathWith<"post">>(
  path: P,
  body: BodyOf<P, "post">,
  options: { path?: Record<string, string> } = {},
): Promise<ResponseOf<P, "post">> {
  return send("POST", fillPath(path, options.path), body);
}

export function apiPatch<P extends PathWith<"patch">>(
  path: P,
  body: BodyOf<P, "patch">,
  options: { path?: Record<string, string> } = {},
): Promise<ResponseOf<P, "patch">> {
  return send("PATCH", fillPath(path, options.path), body);
}
