import assert from 'node:assert/strict';

import { recordIdentity } from '../../src/nodes/lh-error-log/error-pages';
import { MAX_STALE_PAGES, Page, readPages } from '../../src/nodes/shared/pager';
import { Rng } from '../support/prng';

const SEED = process.env.LH_SEED ? Number(process.env.LH_SEED) : Date.now() % 2_147_483_647;
const CASES = process.env.LH_CASES ? Number(process.env.LH_CASES) : 200;

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

  it('fails when pages repeat (the instrument ignores offset), also before its total', async function () {
    for (const total of [false, true]) {
      const i = instrument(10, { ignoreOffset: true, total });
      await assert.rejects(
        readPages(i.fetch, { offset: 0, pageSize: 2, maxItems: 100, idOf, repeated }),
        // with a steady total the first page served again fails at once: nothing was added that could move it there
        new RegExp(`repeated at ${total ? 2 : 2 * MAX_STALE_PAGES}`),
      );
      const four = instrument(4, { ignoreOffset: true, total });
      await assert.rejects(readPages(four.fetch, { offset: 0, pageSize: 2, maxItems: 100, idOf, repeated }), /repeated/);
    }
  });

  it('never more than maxItems, also from an instrument serving more a page than asked', async function () {
    for (const total of [false, true]) {
      const asked: number[] = [];
      const fetch = async (offset: number, limit: number): Promise<Page<{ id: number }>> => {
        asked.push(limit);
        const items = Array.from({ length: Math.max(0, Math.min(limit * 3, 40 - offset)) }, (_, k) => ({ id: offset + k }));
        return { items, total: total ? 40 : undefined };
      };
      const read = await readPages(fetch, { offset: 2, pageSize: 4, maxItems: 10, idOf, repeated });
      assert.deepEqual(
        read.items.map((x) => x.id),
        [2, 3, 4, 5, 6, 7, 8, 9, 10, 11],
      );
      assert.equal(read.truncated, true);
    }
  });

  it('a list gaining items at its start while it is read: each item once, none left out', async function () {
    // newest first: before each later page one new item goes in front, moving every item one place on
    let list = Array.from({ length: 9 }, (_, k) => ({ id: k }));
    let calls = 0;
    const fetch = async (offset: number, limit: number): Promise<Page<{ id: number }>> => {
      if (calls++ > 0) list = [{ id: 100 + calls }, ...list];
      return { items: list.slice(offset, offset + limit), total: list.length };
    };
    const read = await readPages(fetch, { offset: 0, pageSize: 2, maxItems: 100, idOf, repeated });
    const ids = read.items.map((x) => x.id);
    assert.equal(new Set(ids).size, ids.length, `each once: ${ids.join(' ')}`);
    for (let k = 0; k < 9; k++) assert.ok(ids.includes(k), `item ${k} read: ${ids.join(' ')}`);
  });

  it('records alike beyond a page (an identity it cannot tell apart): fails, never a list cut short in silence', async function () {
    // an instrument paging as asked, its total steady: 5 records alike (one id, the same second, code, text, group: a
    // burst) after 1 other; read 2 a page, the 2nd and 3rd page bring only records alike those read
    const list = [{ id: 0 }, ...Array.from({ length: 5 }, () => ({ id: 7 }))];
    for (const pageSize of [2, 3]) {
      const fetch = async (offset: number, limit: number): Promise<Page<{ id: number }>> => ({
        items: list.slice(offset, offset + limit),
        total: list.length,
      });
      await assert.rejects(
        readPages(fetch, { offset: 0, pageSize, maxItems: 100, idOf, repeated }),
        new RegExp(`repeated at ${pageSize}`),
        `page size ${pageSize}`,
      );
    }
  });

  it(`a list growing at its start at any pace never fails but as read too fast (seed ${SEED}, ${CASES} cases)`, async function () {
    // the rule above must not fail an honest list: read items land on a later page only as far as items were added
    const rng = new Rng(SEED);
    for (let c = 0; c < CASES; c++) {
      const pageSize = rng.int(1, 6);
      const grow = rng.int(0, 2 * pageSize);
      let list = Array.from({ length: rng.int(0, 30) }, (_, k) => ({ id: k }));
      const original = list.map((x) => x.id);
      let next = 1000;
      let calls = 0;
      const fetch = async (offset: number, limit: number): Promise<Page<{ id: number }>> => {
        if (calls++ > 0) for (let k = rng.int(0, grow); k > 0; k--) list = [{ id: next++ }, ...list];
        return { items: list.slice(offset, offset + limit), total: list.length };
      };
      const label = `seed ${SEED} case ${c}: page size ${pageSize}, up to ${grow} added a page`;
      let read;
      try {
        read = await readPages(fetch, { offset: 0, pageSize, maxItems: 10_000, idOf, repeated });
      } catch (err) {
        // only a list growing by a page or more per page, MAX_STALE_PAGES times in a row, may fail
        assert.ok(grow >= pageSize, `${label}: failed: ${(err as Error).message}`);
        continue;
      }
      const ids = read.items.map((x) => x.id);
      assert.equal(new Set(ids).size, ids.length, `${label}: each once`);
      for (const id of original) assert.ok(ids.includes(id), `${label}: ${id} left out`);
    }
  });

  it('items without an identity are all kept, never taken for one another', async function () {
    const fetch = async (offset: number, limit: number): Promise<Page<{ id?: number; n: number }>> => {
      const items = Array.from({ length: Math.max(0, Math.min(limit, 5 - offset)) }, (_, k) => ({ n: offset + k }));
      return { items };
    };
    const read = await readPages(fetch, { offset: 0, pageSize: 2, maxItems: 100, idOf: (x) => x.id, repeated });
    assert.deepEqual(
      read.items.map((x) => x.n),
      [0, 1, 2, 3, 4],
    );
  });

  it("the error history's records: two errors under one id are two, a record read again is one", function () {
    const a = { id: '7', date: '2026-11-30T10:00:00Z', code: 3, message: 'Clot', severity: 'Error' };
    const reused = { ...a, date: '2026-11-30T11:00:00Z' };
    assert.notEqual(recordIdentity(a), recordIdentity(reused));
    assert.equal(recordIdentity(a), recordIdentity({ ...a, handled: true, handledDateTime: '2026-11-30T10:01:00Z' }));
  });

  it('an empty list is one request', async function () {
    const i = instrument(0);
    const read = await readPages(i.fetch, { offset: 0, pageSize: 2, maxItems: 100, idOf, repeated });
    assert.deepEqual(read, { items: [], total: 0, truncated: false, pages: 1 });
  });
});
