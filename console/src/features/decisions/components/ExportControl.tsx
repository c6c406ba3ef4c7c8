import { useState } from "react";
import { ErrorNotice } from "../../../components/States";
import { formatCount } from "../../../lib/format";
import type { ExportFormat } from "../../../api/resources";
import { exportDecisions } from "../api/export";
import type { DecisionFilters } from "../logic/filters";

type State = { phase: "idle" } | { phase: "running"; rows: number } | { phase: "done"; rows: number } | { phase: "failed"; error: Error };

/** Export what the filters select, every page of it, as CSV or JSON Lines. */
export function ExportControl({ filters }: { filters: DecisionFilters }) {
  const [state, setState] = useState<State>({ phase: "idle" });
  const start = (format: ExportFormat) => {
    setState({ phase: "running", rows: 0 });
    exportDecisions(filters, format, (rows) => setState({ phase: "running", rows }))
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
          ? `Exporting… ${formatCount(state.rows)} decisions so far`
          : state.phase === "done"
            ? `Exported ${formatCount(state.rows)} decisions, every page the filters select.`
            : ""}
      </p>
      {state.phase === "failed" ? <ErrorNotice error={state.error} /> : null}
    </div>
  );
}
