// Exports: every row a listing's filters select, streamed into a file the
// browser saves. A link cannot carry the Bearer header, so the answer is read
// here and handed over as a blob.
import { ApiError, authHeaders, failure, queryString } from "./client";
import type { ExportFormat } from "./resources";

/** The file name the gateway proposes, or a plain one. */
function fileName(response: Response, fallback: string): string {
  const named = /filename="([^"]+)"/.exec(response.headers.get("Content-Disposition") ?? "");
  return named?.[1] ?? fallback;
}

/**
 * Counts the rows of a CSV or JSON Lines stream as its bytes arrive. A CSV
 * row ends at a line break outside quotes: a quoted reason may hold line
 * breaks of its own, and counting every one would overstate the rows.
 */
export function rowCounter(format: ExportFormat): { add: (bytes: Uint8Array) => number } {
  const NEWLINE = 10;
  const QUOTE = 34;
  let lines = 0;
  let quoted = false;
  return {
    add(bytes) {
      for (const byte of bytes) {
        if (format === "csv" && byte === QUOTE) quoted = !quoted;
        else if (byte === NEWLINE && !quoted) lines += 1;
      }
      // The CSV's first line is its header.
      return format === "csv" ? Math.max(0, lines - 1) : lines;
    },
  };
}

/**
 * Every row of `path` the query selects, saved as a file; `onRows` hears how
 * many have arrived, for progress. A stream that stops short rejects: no
 * partial file is offered.
 */
export async function exportRows(
  path: string,
  query: Record<string, unknown>,
  format: ExportFormat,
  onRows: (rows: number) => void,
): Promise<number> {
  let response: Response;
  try {
    response = await fetch(`${path}${queryString({ ...query, format })}`, { headers: authHeaders() });
  } catch {
    throw new ApiError(0, "NETWORK", "the gateway could not be reached");
  }
  if (!response.ok || !response.body) throw await failure(response);
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  const counter = rowCounter(format);
  let rows = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      rows = counter.add(value);
      onRows(rows);
    }
  } catch {
    throw new ApiError(0, "EXPORT_INTERRUPTED", "the export stopped before its end; nothing was saved, try again");
  }
  const url = URL.createObjectURL(new Blob(chunks as BlobPart[], { type: response.headers.get("Content-Type") ?? "text/plain" }));
  const link = document.createElement("a");
  link.href = url;
  link.download = fileName(response, `export.${format}`);
  link.click();
  URL.revokeObjectURL(url);
  return rows;
}
