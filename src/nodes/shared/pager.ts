/**
 * The one way a node reads a list page by page ("fetch all pages"): from `offset`, `pageSize` items a page, until a
 * page comes back empty or short, the instrument's total is reached, or `maxItems` were read. Never more than
 * `maxItems` items, also from an instrument that serves more a page than it was asked for. An item already read (a list
 * that gains items at its start while it is read, newest first, moves them to the next page) is not taken again; a page
 * made only of items already read, `MAX_STALE_PAGES` times in a row, means the instrument ignores `offset` (or its
 * list grows as fast as it is read): that fails rather than loop for ever. With a total on both pages, one such page
 * fails at once unless the total grew by as many items (only items added meanwhile move read ones onto the next page).
 */
/** Pages in a row that bring nothing new before the reading fails. */
export const MAX_STALE_PAGES = 3;

export interface Page<T> {
  items: T[];
  /** The instrument's total count, when it says. */
  total?: number;
}

export interface PagerOptions<T> {
  offset: number;
  pageSize: number;
  maxItems: number;
  /**
   * The identity of an item: an item whose identity was read already is not taken again, and a page of such items
   * only is a repeated page; without it, neither is checked.
   */
  idOf?: (item: T) => unknown;
  /** The error for an instrument that serves the same page again. */
  repeated: (offset: number) => Error;
}

export interface Pages<T> {
  items: T[];
  /** The instrument's total when it said one, else what was read from `offset` on (plus `offset`). */
  total: number;
  /** True when `maxItems` stopped the reading before the last page. */
  truncated: boolean;
  pages: number;
}

export async function readPages<T>(
  fetchPage: (offset: number, limit: number) => Promise<Page<T>>,
  options: PagerOptions<T>,
): Promise<Pages<T>> {
  const { offset, pageSize, maxItems, idOf } = options;
  const items: T[] = [];
  const seen = new Set<unknown>();
  let total: number | undefined;
  let pages = 0;
  let next = offset;
  let stale = 0;
  for (;;) {
    const limit = Math.min(pageSize, maxItems - items.length);
    const page = await fetchPage(next, limit);
    pages++;
    const before = total;
    if (page.total !== undefined) total = page.total;
    // an item without an identity (an instrument leaving it out) is never taken for another: always kept; each
    // item's identity worked out once (a record's is a JSON text)
    const keyed = page.items.map((item) => ({ item, key: idOf ? (idOf(item) ?? undefined) : undefined }));
    const fresh = keyed.filter(({ key }) => key === undefined || !seen.has(key));
    stale = page.items.length > 0 && fresh.length === 0 ? stale + 1 : 0;
    if (stale >= MAX_STALE_PAGES) throw options.repeated(next);
    // A page of items read already moved here only if as many were added meanwhile (the total grew by as many): with
    // fewer added, they are items served again (offset ignored) or records alike that the identity cannot tell apart;
    // either way skipping them would end the reading short without a word, so it fails.
    if (stale > 0 && before !== undefined && page.total !== undefined && page.total - before < page.items.length)
      throw options.repeated(next);
    const taken = fresh.slice(0, maxItems - items.length);
    for (const { key } of taken) if (key !== undefined) seen.add(key);
    items.push(...taken.map(({ item }) => item));
    next += page.items.length;
    if (taken.length < fresh.length) return { items, total: total ?? offset + items.length, truncated: true, pages };
    // The instrument may serve fewer than asked per page: a known total says when the end is reached (not on a page of
    // items read already: the list gained items meanwhile, or the instrument repeats its page)
    const end = page.items.length === 0 || (total !== undefined ? next >= total && stale === 0 : page.items.length < limit);
    if (end) return { items, total: Math.max(total ?? 0, offset + items.length), truncated: false, pages };
    if (items.length >= maxItems) return { items, total: total ?? offset + items.length, truncated: true, pages };
  }
}
