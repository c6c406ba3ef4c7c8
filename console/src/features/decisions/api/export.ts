import { ApiError, authHeaders, failure, queryString } from "../../../api/client";
import type { ExportFormat } from "../../../api/resources";
import { filtersToQuery, type DecisionFilters } from "../logic/filters";

/** The file name the gateway proposes, or a plain one. */
function fileName(response: Response, format: ExportFormat): string {
  const named = /filename="([^"]+)"/.exec(response.headers.get("Content-Disposition") ?? "");
  return named?.[1] ?? `decisions.${format}`;
}

/**
 * Every decision the filters select, streamed into a file the browser saves.
 * A link cannot carry the Bearer header, so the answer is read here and
 * handed over as a blob; `onRows` counts lines as they arrive, for progress.
 * A stream that stops short rejects: no partial file is offered.
 */
export async function exportDecisions(filters: DecisionFilters, format: ExportFormat, onRows: (rows: number) => void): Promise<number> {
  let response: Response;
  try {
    response = await fetch(`/admin/ai/decisions/export${queryString({ ...filtersToQuery(filters), format })}`, { headers: authHeaders() });
  } catch {
    throw new ApiError(0, "NETWORK", "the gateway could not be reached");
  }
  if (!response.ok || !response.body) throw await failure(response);
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let lines = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      for (const byte of value) if (byte === 10) lines += 1;
      onRows(format === "csv" ? Math.max(0, lines - 1) : lines);
    }
  } catch {
    throw new ApiError(0, "EXPORT_INTERRUPTED", "the export stopped before its end; nothing was saved, try again");
  }
  const rows = format === "csv" ? Math.max(0, lines - 1) : lines;
  const url = URL.createObjectURL(new Blob(chunks as BlobPart[], { type: response.headers.get("Content-Type") ?? "text/plain" }));
  const link = document.createElement("a");
  link.href = url;
  link.download = fileName(response, format);
  link.click();
  URL.revokeObjectURL(url);
  return rows;
}
