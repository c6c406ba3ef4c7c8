// A failure as an operator reads it: the gateway names fields by their API
// names (decided_to) and patterns by their regex; the console speaks of the
// controls and things on its pages instead.
import { ApiError, fieldProblems } from "../api/client";

/** API field names as the console's pages label them. */
const FIELD_WORDS: Record<string, string> = {
  decided_from: "“Decided from”",
  decided_to: "“Decided before”",
  decision_type: "Type",
  started_from: "“Started from”",
  started_to: "“Started before”",
  task_type: "Task type",
  task_id: "The task id",
  agent_id: "Agent",
  outcome: "Outcome",
  model: "Model",
  cursor: "The page link",
  decision_id: "The decision id",
  subject_id: "The subject id",
  limit: "The page size",
  start: "“From”",
  end: "“To”",
  days: "The window",
};

const PATTERN_REASON = /^String should match pattern/;

function inWords(text: string): string {
  // Mid-sentence, "The page link" reads as "the page link".
  return text.replace(/\b[a-z]+(?:_[a-z]+)+\b/g, (name) => (FIELD_WORDS[name] ?? name).replace(/^The /, "the "));
}

function sentence(text: string): string {
  const trimmed = text.trim();
  return /[.!?]$/.test(trimmed) ? trimmed : `${trimmed}.`;
}

/** Whether asking again can succeed: not when the gateway has said no (403), there is nothing (404) or the ask is wrong (4xx). */
export function retryable(error: unknown): boolean {
  if (!(error instanceof ApiError)) return true;
  if (error.status === 0 || error.status >= 500) return true;
  return error.status === 408 || error.status === 429;
}

/** The gateway's id for a failed request, to quote when reporting it: a 5xx is the platform's fault, and its log line carries the same id. */
export function requestIdOf(error: unknown): string | null {
  if (!(error instanceof ApiError) || error.status < 500) return null;
  const id = error.details.request_id;
  return typeof id === "string" && id !== "" ? id : null;
}

export function errorTitle(error: unknown): string {
  if (!(error instanceof ApiError)) return "Something went wrong";
  if (error.status === 0) return "Gateway unreachable";
  if (error.status === 403) return "Not allowed";
  if (error.status === 404) return "Not found";
  if (error.status === 409) return "Changed by someone else";
  if (error.status === 422) return "This cannot be asked that way";
  if (error.status === 503) return "A service is not answering";
  return `Request failed (${error.status})`;
}

/** The failure in an operator's words: fields by their labels, a pattern refusal as what the value is not. */
export function operatorMessage(error: unknown): string {
  if (!(error instanceof ApiError)) return error instanceof Error ? error.message : String(error);
  if (error.status === 0) return "The gateway could not be reached. Check the connection, then try again.";
  const fields = Object.entries(fieldProblems(error.details));
  if (error.status === 422 && fields.length > 0) {
    return fields
      .map(([field, reason]) => {
        const name = FIELD_WORDS[field] ?? field;
        if (PATTERN_REASON.test(reason)) return `${name} is not in the form it takes.`;
        return sentence(`${name} ${inWords(reason)}`);
      })
      .join(" ");
  }
  return inWords(error.message);
}
