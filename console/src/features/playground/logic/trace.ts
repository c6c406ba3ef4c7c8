// A playground run as it streams in: one pure reducer over the server's
// events, so the page only renders state.
import type { ErrorBody, ErrorEnvelope, RunTrace, TraceStep } from "../../../api/resources";

export const PROMPT_LIMIT = 2000;

/** The prompt's length as the server counts it (Unicode code points, not UTF-16 units). */
export function promptBudget(prompt: string): { used: number; left: number; over: boolean } {
  // eslint-disable-next-line @typescript-eslint/no-misused-spread -- code points are what the server's limit counts, not graphemes
  const used = [...prompt].length;
  return { used, left: PROMPT_LIMIT - used, over: used > PROMPT_LIMIT };
}

export type RunState = {
  status: "idle" | "running" | "done" | "failed";
  /** The "started" event: which run, and what it runs. */
  started: Pick<RunTrace, "id" | "agent_id" | "skill_id" | "model"> | null;
  steps: TraceStep[];
  trace: RunTrace | null;
  error: ErrorBody | null;
};

export const IDLE: RunState = { status: "idle", started: null, steps: [], trace: null, error: null };

export function startRun(): RunState {
  return { ...IDLE, status: "running" };
}

export function applyEvent(state: RunState, event: string, data: unknown): RunState {
  switch (event) {
    case "started":
      return { ...state, started: data as RunState["started"] };
    case "step":
      return { ...state, steps: [...state.steps, data as TraceStep] };
    case "done": {
      const trace = data as RunTrace;
      return { ...state, status: "done", trace, steps: trace.steps };
    }
    case "error": {
      const body = (data as Partial<ErrorEnvelope>).error;
      return { ...state, status: "failed", error: body ?? { code: "UNKNOWN", message: "the run failed", details: {} } };
    }
    default:
      return state;
  }
}

export function failRun(state: RunState, code: string, message: string, details: Record<string, unknown> = {}): RunState {
  return { ...state, status: "failed", error: { code, message, details } };
}

/** What the operator should read for a refused or failed run. */
export function explainFailure(error: ErrorBody): string {
  switch (error.code) {
    case "PLAYGROUND_NOT_CONFIGURED":
      return "The playground is not configured on this Outrider: it needs ANTHROPIC_API_KEY to call the model. Nothing was run.";
    case "RATE_LIMITED": {
      const wait = error.details.retry_after_s;
      return `Rate limit reached: ${error.message}${typeof wait === "number" ? ` Try again in ${Math.ceil(wait / 60)} min.` : ""}`;
    }
    case "PROMPT_TOO_LONG":
      return `The prompt is too long: ${error.message}`;
    default:
      return error.message;
  }
}

export const OUTCOME_LABEL: Record<string, string> = {
  executed: "executed",
  proposed: "proposal — not executed",
  unavailable: "unavailable in the playground",
  rejected: "refused",
};

export type RunEnding = { label: string; tone: "running" | "finished" | "early"; explanation: string | null };

/** How a stored run ended, said plainly; `early` when it did not end on its own. */
export function runEnding(run: Pick<RunTrace, "status" | "stop_reason">): RunEnding {
  if (run.status === "running") return { label: "running", tone: "running", explanation: null };
  if (run.status === "interrupted") {
    return {
      label: "interrupted",
      tone: "early",
      explanation: "The playground stopped before this run ended. The steps below are the ones stored until then.",
    };
  }
  switch (run.stop_reason) {
    case "cancelled":
      return {
        label: "cancelled",
        tone: "early",
        explanation:
          "The run was cancelled before it ended: the console closed its stream, or the playground shut down. The steps below are the ones taken until then.",
      };
    case "deadline":
      return { label: "deadline passed", tone: "early", explanation: "The run passed its deadline and was stopped there." };
    case "error":
      return { label: "failed", tone: "early", explanation: "The run failed; the error below says how." };
    case "turn_limit":
      return { label: "turn limit", tone: "early", explanation: "The model still wanted tools after its last allowed turn." };
    case "end_turn":
      return { label: "finished", tone: "finished", explanation: null };
    default:
      return { label: run.stop_reason || "finished", tone: "finished", explanation: null };
  }
}

export const ENDING_BADGE: Record<RunEnding["tone"], string> = {
  running: "badge badge-partial",
  finished: "badge badge-state",
  early: "badge badge-broken",
};
