import { LhError, type ListStepsQuery, type PrepApi, type Step } from '../../client';
import { readPages } from '../shared/pager';

/** Page size of "fetch all pages" when no limit is set. */
export const DEFAULT_PAGE_SIZE = 100;
/** "fetch all pages" stops with an error beyond this many steps rather than loop for ever. */
export const MAX_STEPS = 10000;

const OP = 'list-steps';

/**
 * Every step from `query.offset` on, page by page (`query.limit` per page), until a page comes back short.
 * Fails when the protocol has more than `cap` steps or when the instrument ignores `offset` (a page repeats).
 */
export async function listAllSteps(prep: PrepApi, protocolId: unknown, query: ListStepsQuery, cap = MAX_STEPS): Promise<Step[]> {
  const read = await readPages<Step>(
    async (offset, limit) => {
      const page = await prep.listSteps(protocolId, { ...query, offset, limit });
      if (!Array.isArray(page)) {
        throw new LhError(`${OP}: expected an array of steps from the instrument`, {
          kind: 'response',
          operation: OP,
          body: page,
        });
      }
      return { items: page };
    },
    {
      offset: query.offset ?? 0,
      pageSize: query.limit ?? DEFAULT_PAGE_SIZE,
      maxItems: cap + 1,
      idOf: (step) => step?.id,
      repeated: (offset) =>
        new LhError(`${OP}: the instrument returned the same steps again for offset ${offset}; it seems to ignore offset`, {
          kind: 'response',
          operation: OP,
        }),
    },
  );
  if (read.items.length > cap) {
    throw new LhError(
      `${OP}: the protocol has more than ${cap} steps, the limit of "fetch all pages"; read it page by page with offset and limit`,
      {
        kind: 'response',
        operation: OP,
      },
    );
  }
  return read.items;
}
