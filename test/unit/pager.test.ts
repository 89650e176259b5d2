import assert from 'node:assert/strict';

import { Page, readPages } from '../../src/nodes/shared/pager';

/** An instrument holding `count` items (ids 0..count-1), serving at most `serves` per page, with or without a total. */
function instrument(count: number, options: { serves?: number; total?: boolean; ignoreOffset?: boolean } = {}) {
  const asked: { offset: number; limit: number }[] = [];
  const fetch = async (offset: number, limit: number): Promise<Page<{ id: number }>> => {
    asked.push({ offset, limit });
    const from = options.ignoreOffset ? 0 : offset;
    const n = Math.max(0, Math.min(limit, options.serves ?? limit, count - from));
    const items = Array.from({ length: n }, (_, i) => ({ id: from + i }));
    return { items, total: options.total ? count : undefined };
  };
  return { fetch, asked };
}

const repeated = (offset: number): Error => new Error(`repeated at ${offset}`);
const idOf = (item: { id: number }): number => item.id;

describe('pager', function () {
  it('reads until a short page when the instrument gives no total', async function () {
    const i = instrument(5);
    const read = await readPages(i.fetch, { offset: 0, pageSize: 2, maxItems: 100, idOf, repeated });
    assert.deepEqual(
      read.items.map((x) => x.id),
      [0, 1, 2, 3, 4],
    );
    assert.deepEqual(read, { items: read.items, total: 5, truncated: false, pages: 3 });
  });

  it('follows the total when the instrument serves fewer than asked per page', async function () {
    const i = instrument(5, { serves: 2, total: true });
    const read = await readPages(i.fetch, { offset: 1, pageSize: 10, maxItems: 100, idOf, repeated });
    assert.equal(read.items.length, 4);
    assert.deepEqual(
      i.asked.map((a) => a.offset),
      [1, 3],
      'the total says the end is reached: no third request',
    );
    assert.equal(read.total, 5);
  });

  it('stops at maxItems with truncated set, asking no more than it keeps', async function () {
    const i = instrument(50, { total: true });
    const read = await readPages(i.fetch, { offset: 0, pageSize: 10, maxItems: 25, idOf, repeated });
    assert.equal(read.items.length, 25);
    assert.equal(read.truncated, true);
    assert.equal(read.total, 50);
    assert.deepEqual(i.asked.at(-1), { offset: 20, limit: 5 });
  });

  it('fails when a page repeats (the instrument ignores offset)', async function () {
    const i = instrument(10, { ignoreOffset: true });
    await assert.rejects(readPages(i.fetch, { offset: 0, pageSize: 2, maxItems: 100, idOf, repeated }), /repeated at 2/);
  });

  it('an empty list is one request', async function () {
    const i = instrument(0);
    const read = await readPages(i.fetch, { offset: 0, pageSize: 2, maxItems: 100, idOf, repeated });
    assert.deepEqual(read, { items: [], total: 0, truncated: false, pages: 1 });
  });
});
