/**
 * The one way a node reads a list page by page ("fetch all pages"): from `offset`, `pageSize` items a page, until a
 * page comes back empty or short, the instrument's total is reached, or `maxItems` were read. A page made only of
 * items already read means the instrument ignores `offset`: that fails rather than loop for ever.
 */
export interface Page<T> {
  items: T[];
  /** The instrument's total count, when it says. */
  total?: number;
}

export interface PagerOptions<T> {
  offset: number;
  pageSize: number;
  maxItems: number;
  /** The identity of an item, to notice a repeated page; without it, repeats are not checked. */
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
  for (;;) {
    const limit = Math.min(pageSize, maxItems - items.length);
    const page = await fetchPage(next, limit);
    pages++;
    if (page.total !== undefined) total = page.total;
    if (idOf && page.items.length > 0 && page.items.every((item) => seen.has(idOf(item)))) throw options.repeated(next);
    if (idOf) for (const item of page.items) seen.add(idOf(item));
    items.push(...page.items);
    next += page.items.length;
    // The instrument may serve fewer than asked per page: a known total says when the end is reached.
    const end = page.items.length === 0 || (total !== undefined ? next >= total : page.items.length < limit);
    if (end) return { items, total: Math.max(total ?? 0, offset + items.length), truncated: false, pages };
    if (items.length >= maxItems) return { items, total: total ?? offset + items.length, truncated: true, pages };
  }
}
