// How a table whose rows are all loaded sorts by one column. Kept apart from
// React so the order can be tested with plain values.

export type SortDirection = "ascending" | "descending";
/** What a cell sorts by: a number, a string, or nothing (sorted last either way). */
export type SortValue = number | string | null | undefined;
export type SortState<K extends string> = { key: K; direction: SortDirection } | null;

const collator = new Intl.Collator(undefined, { numeric: true, sensitivity: "base" });

function isMissing(value: SortValue): value is null | undefined {
  return value === null || value === undefined || (typeof value === "number" && Number.isNaN(value));
}

/** Ascending order of two values; numbers by size, strings by the reader's locale. */
function ascending(a: number | string, b: number | string): number {
  if (typeof a === "number" && typeof b === "number") return a - b;
  return collator.compare(String(a), String(b));
}

/**
 * The rows ordered by `value`, a new array. Rows with no value go last in
 * both directions (a missing figure is not the smallest one), and rows that
 * compare equal keep the order they came in, so a second sort refines a first.
 */
export function sortRows<T>(rows: readonly T[], value: (row: T) => SortValue, direction: SortDirection): T[] {
  const sign = direction === "ascending" ? 1 : -1;
  return rows
    .map((row, index) => ({ row, index, key: value(row) }))
    .sort((a, b) => {
      const aMissing = isMissing(a.key);
      const bMissing = isMissing(b.key);
      if (aMissing || bMissing) return aMissing === bMissing ? a.index - b.index : aMissing ? 1 : -1;
      return sign * ascending(a.key as number | string, b.key as number | string) || a.index - b.index;
    })
    .map((entry) => entry.row);
}

/** The sort a header click asks for: the same column turns around, another starts at its first direction. */
export function nextSort<K extends string>(current: SortState<K>, key: K, first: SortDirection): SortState<K> {
  if (current?.key === key) return { key, direction: current.direction === "ascending" ? "descending" : "ascending" };
  return { key, direction: first };
}

/** The sort as the URL keeps it (`sort=failures&order=desc`); an unknown column is no sort. */
export function sortFromSearch<K extends string>(search: URLSearchParams, keys: readonly K[]): SortState<K> {
  const key = keys.find((k) => k === search.get("sort"));
  if (key === undefined) return null;
  return { key, direction: search.get("order") === "desc" ? "descending" : "ascending" };
}

export function sortToSearch<K extends string>(sort: SortState<K>): { sort: string; order: string } {
  if (sort === null) return { sort: "", order: "" };
  return { sort: sort.key, order: sort.direction === "descending" ? "desc" : "asc" };
}
