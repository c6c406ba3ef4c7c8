import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useCallback, useRef, useState } from "react";
import { ApiError, apiGet, authHeaders, failure, type BodyOf } from "../../../api/client";
import { sseParser } from "../../../lib/sse";
import { applyEvent, failRun, IDLE, startRun, type RunState } from "../logic/trace";
import { keysChangedByRun, playgroundKeys } from "./keys";

export function usePlaygroundStatus() {
  return useQuery({ queryKey: playgroundKeys.status(), queryFn: () => apiGet("/admin/ai/playground/status") });
}

export function useRuns() {
  return useQuery({
    queryKey: playgroundKeys.runs(),
    queryFn: () => apiGet("/admin/ai/playground/runs", { query: { limit: 20 } }),
  });
}

export function useRun(id: string) {
  return useQuery({
    queryKey: playgroundKeys.run(id),
    queryFn: () => apiGet("/admin/ai/playground/runs/{run_id}", { path: { run_id: id } }),
    staleTime: Infinity,
  });
}

export function usePlaygroundAgents() {
  return useQuery({ queryKey: playgroundKeys.agents(), queryFn: () => apiGet("/admin/ai/agents") });
}

export function useAgentSkills(agentId: string) {
  return useQuery({
    queryKey: playgroundKeys.skills(agentId),
    queryFn: () => apiGet("/admin/ai/skills", { query: { agent: agentId } }),
    enabled: agentId !== "",
  });
}

const RUN_PATH = "/admin/ai/playground/run";

/** Run a prompt and follow its trace over Server-Sent Events as each step happens. */
export function useRunStream() {
  const client = useQueryClient();
  const [state, setState] = useState<RunState>(IDLE);
  const abort = useRef<AbortController | null>(null);

  const run = useCallback(
    async (body: BodyOf<typeof RUN_PATH, "post">) => {
      abort.current?.abort();
      const controller = new AbortController();
      abort.current = controller;
      let current = startRun();
      setState(current);
      const update = (next: RunState) => {
        current = next;
        setState(next);
      };
      try {
        const response = await fetch(RUN_PATH, {
          method: "POST",
          headers: { "Content-Type": "application/json", Accept: "text/event-stream", ...authHeaders() },
          body: JSON.stringify(body),
          signal: controller.signal,
        });
        if (!response.ok || !response.body) {
          const error = await failure(response);
          update(failRun(current, error.code, error.message, error.details));
          return;
        }
        const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
        const parse = sseParser();
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          for (const event of parse(value)) update(applyEvent(current, event.event, JSON.parse(event.data)));
        }
        if (current.status === "running") update(failRun(current, "STREAM_CLOSED", "the stream ended before the run finished"));
      } catch (error) {
        if (controller.signal.aborted) return;
        const message = error instanceof ApiError ? error.message : "the gateway could not be reached";
        update(failRun(current, "NETWORK", message));
      } finally {
        await Promise.all(keysChangedByRun().map((queryKey) => client.invalidateQueries({ queryKey })));
      }
    },
    [client],
  );

  // Stopping closes the stream, which ends the run on the server; it is
  // stored as cancelled with the steps taken so far.
  const cancel = useCallback(() => {
    abort.current?.abort();
    setState((current) =>
      current.status === "running"
        ? failRun(current, "STOPPED", "You stopped the run. It is stored, cancelled, with the steps taken so far.")
        : current,
    );
  }, []);
  return { state, run, cancel };
}
