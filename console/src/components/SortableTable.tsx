import type { ReactNode } from "react";
import { useSearch } from "../lib/router";
import { nextSort, sortFromSearch, sortRows, sortToSearch, type SortDirection, type SortState, type SortValue } from "./sortRows";

/** A sortable column: what its cells sort by, and which way a first click sorts (numbers: largest first). */
export type SortColumn<T> = { value: (row: T) => SortValue; first?: SortDirection };

export type SortedTable<T, K extends string> = {
  rows: T[];
  sort: SortState<K>;
  toggle: (key: K) => void;
};

/**
 * The rows of a fully loaded table in the order its headers ask for; the
 * sort lives in the URL beside the page's filters (`?sort=&order=`), so a
 * sorted view can be linked. With no sort the rows keep the server's order.
 */
export function useSortedRows<T, K extends string>(rows: readonly T[], columns: Record<K, SortColumn<T>>): SortedTable<T, K> {
  const [search, setSearch] = useSearch();
  const keys = Object.keys(columns) as K[];
  const sort = sortFromSearch(search, keys);
  const column = sort ? columns[sort.key] : undefined;
  return {
    rows: sort && column ? sortRows(rows, column.value, sort.direction) : [...rows],
    sort,
    toggle: (key) => {
      const next = nextSort(sort, key, columns[key].first ?? "ascending");
      setSearch({ ...Object.fromEntries(search), ...sortToSearch(next) });
    },
  };
}

/**
 * A column header that sorts its table: a button inside the header, so the
 * keyboard reaches it, and `aria-sort` on the header, so a screen reader
 * says which column orders the rows and which way.
 */
export function SortHeader<T, K extends string>({
  table,
  column,
  numeric = false,
  children,
}: {
  table: SortedTable<T, K>;
  column: K;
  numeric?: boolean;
  children: ReactNode;
}) {
  const direction = table.sort?.key === column ? table.sort.direction : undefined;
  return (
    <th scope="col" className={numeric ? "num" : undefined} aria-sort={direction}>
      <button type="button" className="sort-button" onClick={() => table.toggle(column)}>
        {children}
        <span className="sort-mark" aria-hidden="true">
          {direction === "ascending" ? "▲" : direction === "descending" ? "▼" : "↕"}
        </span>
      </button>
    </th>
  );
}
