import { LhError, ListStepsQuery, PrepApi, Step } from '../../client';

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
  const limit = query.limit ?? DEFAULT_PAGE_SIZE;
  let offset = query.offset ?? 0;
  const all: Step[] = [];
  const seen = new Set<unknown>();
  for (;;) {
    const page = await prep.listSteps(protocolId, { ...query, offset, limit });
    if (!Array.isArray(page)) {
      throw new LhError(`${OP}: expected an array of steps from the instrument`, { kind: 'response', operation: OP, body: page });
    }
    if (page.length > 0 && page.every((s) => seen.has(s?.id))) {
      throw new LhError(`${OP}: the instrument returned the same steps again for offset ${offset}; it seems to ignore offset`, {
        kind: 'response',
        operation: OP,
      });
    }
    for (const s of page) seen.add(s?.id);
    all.push(...page);
    if (all.length > cap) {
      throw new LhError(`${OP}: the protocol has more than ${cap} steps, the limit of "fetch all pages"; read it page by page with offset and limit`, {
        kind: 'response',
        operation: OP,
      });
    }
    if (page.length < limit) return all;
    offset += limit;
  }
}
