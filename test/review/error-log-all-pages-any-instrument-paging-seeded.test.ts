/**
 * Review (review87): lh-error-log's *All pages* against the ways an instrument may page its error history, as a seeded
 * property in a real Node-RED, the simulator behind a proxy that pages as a drawn instrument does: as asked; more
 * records a page than asked (a server that ignores `limit` or has a page size of its own above it); fewer (a page size
 * of its own below it); and errors raised while the pages are read (the history lists newest first, so a record read
 * on one page moves to the next).
 *
 * README: "error log: a page, all pages (capped)"; the help: *At most* the records read, `truncated` when it stopped
 * the reading. Property: the node sends at most *At most* records, each record of the history once, in the history's
 * order, none of those it asked for left out, and `truncated` says whether it stopped before the end.
 *
 * Seeded PRNG, the seed printed; LH_SEED=<n> replays it, LH_CASES=<n> draws more cases.
 */
import assert from 'node:assert/strict';
import http from 'http';

import { closeLocal, listenLocal } from '../support/local-server';
import { loadNode, useInstrument } from '../support/node-suite';
import { Rng } from '../support/prng';
import { helper, nextMessage } from '../support/runtime';

type Msg = Record<string, unknown>;
type Paging = 'as-asked' | 'more' | 'fewer' | 'raised-meanwhile';

const SEED = process.env.LH_SEED ? Number(process.env.LH_SEED) : Date.now() % 2_147_483_647;
const CASES = process.env.LH_CASES ? Number(process.env.LH_CASES) : 6;

describe('lh-error-log all pages: any paging of the instrument, At most held, each record once (seeded)', function () {
  this.timeout(60000);
  const sim = useInstrument();
  let proxy: http.Server | undefined;
  let proxyUrl = '';
  /** how the drawn instrument pages, and the errors it raises while pages are read */
  let paging: Paging = 'as-asked';
  let pageSize = 0;
  let raiseEvery = 0;
  let listCalls = 0;

  before(async function () {
    proxy = http.createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      if (req.method === 'GET' && url.pathname === '/api/v1/errors') {
        listCalls++;
        const asked = Number(url.searchParams.get('limit') ?? '50');
        if (paging === 'more') url.searchParams.set('limit', String(asked + pageSize));
        if (paging === 'fewer') url.searchParams.set('limit', String(Math.max(1, Math.min(asked, pageSize))));
        if (paging === 'raised-meanwhile' && listCalls > 1 && (listCalls - 1) % raiseEvery === 0)
          sim.injectPendingError({ title: `raised while paging ${listCalls}` });
      }
      const upstream = http.request(
        `${sim.baseUrl}${url.pathname}${url.search}`,
        { method: req.method, headers: req.headers },
        (up) => {
          res.writeHead(up.statusCode ?? 502, up.headers);
          up.pipe(res);
        },
      );
      upstream.on('error', () => res.destroy());
      req.pipe(upstream);
    });
    proxyUrl = await listenLocal(proxy);
  });
  after(async function () {
    if (proxy) await closeLocal(proxy);
  });

  it(`holds over drawn instruments (seed ${SEED}, ${CASES} cases)`, async function () {
    console.log(`      seed ${SEED} (LH_SEED=${SEED} replays it)`);
    const rng = new Rng(SEED);
    const kinds: Paging[] = ['as-asked', 'more', 'fewer', 'raised-meanwhile'];
    for (let c = 0; c < CASES; c++) {
      paging = kinds[c % kinds.length];
      pageSize = rng.int(1, 12);
      raiseEvery = rng.int(2, 3); // one error raised every 2 or 3 pages: a list that grows slower than it is read
      listCalls = 0;
      const n = rng.int(0, 40);
      for (let i = 0; i < n; i++) sim.injectPendingError({ title: `e${i}` });
      const offset = rng.int(0, 5);
      const limit = rng.int(1, 9);
      const maxItems = rng.int(1, 45);
      const before = sim.state.history.map((r) => r.id).reverse(); // newest first, as listed
      const label = `case ${c}: ${paging} (page size ${pageSize}), ${n} errors, offset ${offset}, limit ${limit}, At most ${maxItems}`;

      const node = await loadNode(
        sim,
        {
          id: 'history',
          type: 'lh-error-log',
          operation: 'list',
          allPages: true,
          offset: String(offset),
          offsetType: 'num',
          limit: String(limit),
          limitType: 'num',
          maxItems,
        },
        { server: { config: { baseUrl: proxyUrl } } },
      );
      const answered = Promise.race([
        nextMessage(node.out).then((msg) => ({ msg, failed: false })),
        nextMessage(node.caught).then((msg) => ({ msg, failed: true })),
      ]);
      node.node.receive({ topic: 'keep' });
      const { msg: out, failed } = await answered;
      assert.ok(!failed, `${label}: failed: ${String((out._error as Msg | undefined)?.message)}`);
      const items = ((out.payload as Msg).items as Msg[]).map((r) => String(r.id));

      assert.ok(items.length <= maxItems, `${label}: ${items.length} records sent, At most ${maxItems}`);
      assert.equal(new Set(items).size, items.length, `${label}: a record sent twice: ${items.join(' ')}`);
      if (paging !== 'raised-meanwhile') {
        const expected = before.slice(offset, offset + maxItems);
        assert.deepEqual(items, expected, `${label}: not the history's records from the offset`);
        assert.equal(out.truncated, before.length - offset > maxItems, `${label}: truncated`);
      } else {
        // the records read are in the history's order (newest first), whatever was raised meanwhile
        const now = sim.state.history.map((r) => r.id).reverse();
        const positions = items.map((id) => now.indexOf(id));
        assert.ok(
          positions.every((p, i) => p >= 0 && (i === 0 || p > positions[i - 1])),
          `${label}: out of order`,
        );
        // none left out: every record listed at the start, from the offset up to the last one sent, was sent
        const last = Math.max(-1, ...items.map((id) => before.indexOf(id)));
        const missing = before.slice(offset, last + 1).filter((id) => !items.includes(id));
        assert.deepEqual(missing, [], `${label}: records left out`);
      }
      assert.equal(out.topic, 'keep');
      await helper.unload();
      sim.reset();
    }
  });
});
