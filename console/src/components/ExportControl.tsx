import { useState } from "react";
import { exportRows } from "../api/export";
import type { ExportFormat } from "../api/resources";
import { formatCount } from "../lib/format";
import { ErrorNotice } from "./States";

type State = { phase: "idle" } | { phase: "running"; rows: number } | { phase: "done"; rows: number } | { phase: "failed"; error: Error };

/** Export what a listing's filters select, every page of it, as CSV or JSON Lines; `noun` names its rows. */
export function ExportControl({
  path,
  query,
  noun,
}: {
  path: string;
  query: Record<string, unknown>;
  noun: string;
}) {
  const [state, setState] = useState<State>({ phase: "idle" });
  const start = (format: ExportFormat) => {
    setState({ phase: "running", rows: 0 });
    exportRows(path, query, format, (rows) => setState({ phase: "running", rows }))
      .then((rows) => setState({ phase: "done", rows }))
      .catch((error: unknown) => setState({ phase: "failed", error: error instanceof Error ? error : new Error(String(error)) }));
  };
  const running = state.phase === "running";
  return (
    <div className="export">
      <button type="button" className="button" disabled={running} onClick={() => start("csv")}>
        Export CSV
      </button>
      <button type="button" className="button" disabled={running} onClick={() => start("jsonl")}>
        Export JSON Lines
      </button>
      <p className="hint" role="status" aria-live="polite">
        {state.phase === "running"
          ? `Exporting… ${formatCount(state.rows)} ${noun} so far`
          : state.phase === "done"
            ? `Exported ${formatCount(state.rows)} ${noun}, every page the filters select.`
            : ""}
      </p>
      {state.phase === "failed" ? <ErrorNotice error={state.error} /> : null}
    </div>
  );
}
