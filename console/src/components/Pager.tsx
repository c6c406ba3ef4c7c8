import { useState, type ReactNode } from "react";
import { useSearch } from "../lib/router";
import { PAGE_SIZES } from "./pageSize";

/**
 * Where a keyset-paged listing is: the page's cursor lives in the URL beside
 * its filters (`?cursor=`), so a page can be linked; the cursors of the pages
 * before it are kept here, since a keyset cursor only leads forward.
 */
export type KeysetPages = {
  cursor: string;
  /** 1 for the first page. */
  number: number;
  hasPrevious: boolean;
  previous: () => void;
  next: (cursor: string) => void;
  /** New filters (the URL query without a cursor) start again from the first page. */
  restart: (search: Record<string, string>) => void;
};

/** `searchAt` is the listing's URL query for a cursor: its filters and that cursor. */
export function useKeysetPages(searchAt: (cursor: string) => Record<string, string>): KeysetPages {
  const [search, setSearch] = useSearch();
  const cursor = search.get("cursor") ?? "";
  const [trail, setTrail] = useState<string[]>([]);
  return {
    cursor,
    number: trail.length + 1,
    hasPrevious: trail.length > 0,
    previous: () => {
      setTrail(trail.slice(0, -1));
      setSearch(searchAt(trail[trail.length - 1] ?? ""));
    },
    next: (next) => {
      setTrail([...trail, cursor]);
      setSearch(searchAt(next));
    },
    restart: (next) => {
      setTrail([]);
      setSearch(next);
    },
  };
}

/** A listing's "previous" and "next" buttons; `children` says where the reader is. */
export function Pager({
  pages,
  nextCursor,
  label,
  previousLabel,
  nextLabel,
  children,
}: {
  pages: KeysetPages;
  nextCursor: string | null;
  label: string;
  previousLabel: string;
  nextLabel: string;
  children?: ReactNode;
}) {
  return (
    <nav className="pager" aria-label={label}>
      <button type="button" className="button" disabled={!pages.hasPrevious} onClick={pages.previous}>
        {previousLabel}
      </button>
      {children}
      <button
        type="button"
        className="button"
        disabled={!nextCursor}
        onClick={() => {
          pages.next(nextCursor ?? "");
        }}
      >
        {nextLabel}
      </button>
    </nav>
  );
}

/** The choice of how many rows a page holds; a new size starts again from the first page. */
export function PageSizeSelect({ id, value, onChange }: { id: string; value: number; onChange: (size: number) => void }) {
  return (
    <span className="page-size">
      <label htmlFor={id}>Rows per page</label>
      <select id={id} value={value} onChange={(event) => onChange(Number(event.target.value))}>
        {PAGE_SIZES.map((size) => (
          <option key={size} value={size}>
            {size}
          </option>
        ))}
      </select>
    </span>
  );
}
