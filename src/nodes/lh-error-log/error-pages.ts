import { type ErrorList, type ErrorRecord, LhError, type LiquidHandlerClient } from '../../client';
import { readPages } from '../shared/pager';

export const DEFAULT_PAGE_SIZE = 50;
export const DEFAULT_MAX_ITEMS = 1000;

/**
 * One record of the history, however often it is listed: its id with what the instrument says of the error (ids are
 * reused: two errors under one id are two records), not what changes while it is read (handled, when).
 */
export function recordIdentity(record: ErrorRecord | undefined): string {
  const r = record ?? ({} as Partial<ErrorRecord>);
  return JSON.stringify([r.id, r.date, r.code, r.message, r.severity, r.type, r.groupId]);
}

export interface AllPages extends ErrorList {
  /** true when the cap stopped the reading before the last page */
  truncated: boolean;
  pages: number;
}

/** Reads the history page by page from `offset` until the last page or `maxItems` records. */
export async function readAllPages(
  client: LiquidHandlerClient,
  offset: number,
  pageSize: number,
  maxItems: number,
): Promise<AllPages> {
  const read = await readPages<ErrorRecord>(
    async (from, limit) => {
      const page = await client.prep.listErrors({ offset: from, limit });
      return {
        items: Array.isArray(page?.items) ? page.items : [],
        total: typeof page?.totalItemCount === 'number' ? page.totalItemCount : undefined,
      };
    },
    {
      offset,
      pageSize,
      maxItems,
      idOf: recordIdentity,
      repeated: (from) =>
        new LhError(
          `list-errors: the instrument returned the same errors again for offset ${from}; it seems to ignore offset, list records alike beyond a page, or raise errors as fast as they are read`,
          {
            kind: 'response',
            operation: 'list-errors',
          },
        ),
    },
  );
  return { totalItemCount: read.total, currentOffset: offset, items: read.items, truncated: read.truncated, pages: read.pages };
}
