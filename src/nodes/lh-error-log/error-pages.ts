import { ErrorList, ErrorRecord, LiquidHandlerClient } from '../../client';

export const DEFAULT_PAGE_SIZE = 50;
export const DEFAULT_MAX_ITEMS = 1000;

export interface AllPages extends ErrorList {
  /** true when the cap stopped the reading before the last page */
  truncated: boolean;
  pages: number;
}

/** Reads the history page by page from `offset` until the last page or `maxItems` records. */
export async function readAllPages(client: LiquidHandlerClient, offset: number, pageSize: number, maxItems: number): Promise<AllPages> {
  const items: ErrorRecord[] = [];
  let total = 0;
  let pages = 0;
  let next = offset;
  for (;;) {
    const limit = Math.min(pageSize, maxItems - items.length);
    const page = await client.prep.listErrors({ offset: next, limit });
    pages++;
    const got = Array.isArray(page?.items) ? page.items : [];
    const knownTotal = typeof page?.totalItemCount === 'number';
    if (knownTotal) total = page.totalItemCount;
    items.push(...got);
    next += got.length;
    // The instrument may serve fewer than asked per page: the total says when the end is reached.
    if (got.length === 0 || (knownTotal ? next >= total : got.length < limit)) break;
    if (items.length >= maxItems) {
      return { totalItemCount: total, currentOffset: offset, items, truncated: true, pages };
    }
  }
  return { totalItemCount: Math.max(total, offset + items.length), currentOffset: offset, items, truncated: false, pages };
}
