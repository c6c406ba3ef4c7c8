// How many rows a keyset-paged listing asks the gateway for at a time. The
// rows stay in the server's order (newest first): a listing that holds only
// one page cannot be sorted in the browser without misstating what is first.

export const PAGE_SIZES = [25, 50, 100, 200] as const;

/** The page size the URL asks for (`?limit=`), or the listing's own default when it asks for none we offer. */
export function pageSizeFromSearch(search: URLSearchParams, fallback: number): number {
  const asked = Number(search.get("limit"));
  return PAGE_SIZES.find((size) => size === asked) ?? fallback;
}

/** The page size as the URL keeps it; the default is left out, so a plain link stays plain. */
export function pageSizeToSearch(size: number, fallback: number): { limit: string } {
  return { limit: size === fallback ? "" : String(size) };
}

// A listing's first page holds the newest rows, which keep arriving: it is
// read again every half minute while shown, without a reload. A page further
// back is read as it was, so paging never shifts under the operator.
export const FIRST_PAGE_REFRESH_MS = 30_000;

/** How often a listing's page is read again: the first one every half minute, any other never. */
export function listRefresh(cursor: string): number | false {
  return cursor === "" ? FIRST_PAGE_REFRESH_MS : false;
}
