/**
 * Issue 17.5: the answer page holds under load and next to the user's routes. Page views of one link can neither
 * evict the form another person has open nor turn into reads of the instrument's error list; a page on the path of
 * another route stands back and says so. With properties over generated token uses and route paths.
 */
import assert from 'node:assert/strict';
import http from 'http';
import path from 'path';

import express from 'express';
import fc from 'fast-check';
import type { AddressInfo } from 'net';

import { identityOf } from '../../src/client/error-identity';
import {
  FORM_TOKEN_LIFETIME_MS,
  FormTokens,
  MAX_USED_PER_ERROR,
  MAX_USED_TOKENS,
} from '../../src/nodes/lh-answer-page/form-tokens';
import { routeClash } from '../../src/nodes/lh-answer-page/http-routes';
import { RecentLists } from '../../src/nodes/lh-answer-page/recent-lists';
import type { Red } from '../../src/nodes/shared/node-red';
import { helper, nextMessage, NODE_RED_PACKAGE } from '../support/runtime';
import { answerOnPage, fetchText, formOf, loadWithPage, usePageSuite } from './lh-answer-page.support';
import { bServerFlow, statusWhere } from './lh-error-poll.support';

type Msg = Record<string, unknown>;

const nodeRedDir = path.dirname(require.resolve(`${NODE_RED_PACKAGE}/package.json`));
const coreHttpIn = require(
  path.join(
    path.dirname(require.resolve('@node-red/nodes/package.json', { paths: [nodeRedDir] })),
    'core',
    'network',
    '21-httpin.js',
  ),
) as (RED: unknown) => unknown;

describe('lh-answer-page under load and next to other routes', function () {
  this.timeout(60000);
  const { sim, web, pageNode } = usePageSuite();

  const page = (extra: Msg = {}): Msg => pageNode({ path: '/lh-answer', wires: [['out'], ['audit']], ...extra });

  async function load(before: Msg[] = [], after: Msg[] = []): Promise<void> {
    const server = bServerFlow(sim, { withB: false });
    await loadWithPage(
      [...before, ...server.nodes, page(), { id: 'out', type: 'helper' }, { id: 'audit', type: 'helper' }, ...after],
      { ...server.credentials, page: { secret: 'load-test-secret' } },
      [coreHttpIn],
    );
  }

  async function linkFor(record: unknown): Promise<string> {
    const out = nextMessage(helper.getNode('out'));
    helper.getNode('page').receive({ payload: record, source: 'A', event: 'raised', notification: 'x' });
    return String((await out).answerUrl);
  }

  it("2,000 views of another error's link keep an operator's open form valid, and read the error list a few times only", async function () {
    await load();
    const mine = sim.injectPendingError({ title: 'Tip pickup failed', responses: ['Retry', 'Abort'] });
    const other = sim.injectPendingError({ title: 'Door open', responses: ['Retry'] });
    const myLink = await linkFor(mine);
    const otherLink = await linkFor(other);
    const open = formOf((await fetchText(myLink)).text); // the operator's form, open on a phone
    assert.ok(open.form !== '');

    sim.clearRequests();
    const started = Date.now();
    for (let batch = 0; batch < 100; batch++) {
      const views = await Promise.all(Array.from({ length: 20 }, () => fetchText(otherLink)));
      assert.ok(views.every((v) => v.status === 200));
    }
    // at most one read per 2 s of the time measured in this run (a busy machine takes longer and may read more): a
    // bound relative to this run, not to a quiet machine's speed
    const elapsed = Date.now() - started;
    const reads = sim.requests.filter((r) => r.method === 'GET' && r.path === '/api/v1/errors').length;
    assert.ok(
      reads <= Math.ceil(elapsed / 2000) + 1,
      `${reads} reads of the error list for 2,000 views in ${elapsed} ms (≈2,034 before)`,
    );

    const answered = await fetchText(myLink.split('?')[0], { form: { t: open.t, form: open.form, response: 'Abort' } });
    assert.equal(answered.status, 200, answered.text.slice(0, 300));
    assert.match(answered.text, /Answered with <b>Abort<\/b>/);
  });

  it('a view right after an answer given elsewhere never offers the form from the shared read', async function () {
    await load();
    const error = sim.injectPendingError({ title: 'Clot', responses: ['Retry', 'Abort'] }) as unknown as Msg;
    const link = await linkFor(error);
    assert.equal(formOf((await fetchText(link)).text).buttons.length, 2, 'the first view reads and shows the form');
    type Client = {
      prep: {
        answerRuntimeError(a: Msg, o: Msg): Promise<unknown>;
        pendingErrors(): Promise<unknown[]>;
      };
    };
    const client = (helper.getNode('server') as unknown as { client: Client }).client;
    // as the answering nodes give it: with the identity of the error answered (an answer by id alone, to an error
    // nobody saw, is never shown as the answer of the error a link was made for)
    const identity = identityOf(error);
    await client.prep.answerRuntimeError(
      { id: error.id, groupId: error.groupId, selectedResponse: 'Abort' },
      { by: 'Kim', identity },
    );
    await client.prep.pendingErrors(); // a poll no longer lists it: the answer is now a past one
    const again = await fetchText(link); // within the 2 s of the shared read
    assert.match(again.text, /Already answered with <b>Abort<\/b> by Kim/);
    assert.equal(formOf(again.text).buttons.length, 0);
  });

  it('refuses a form over 16 KiB (413, nothing sent, the form token kept)', async function () {
    await load();
    const error = sim.injectPendingError({ title: 'Clot', responses: ['Retry'] });
    const link = await linkFor(error);
    const form = formOf((await fetchText(link)).text);
    sim.clearRequests();
    const big = await fetchText(link.split('?')[0], {
      form: { t: form.t, form: form.form, by: 'x'.repeat(20 * 1024), response: 'Retry' },
    });
    assert.equal(big.status, 413);
    assert.match(big.text, /larger than 16 KiB/);
    assert.equal(sim.requests.filter((r) => r.method === 'PUT').length, 0);
    const ok = await answerOnPage(link, 'Retry');
    assert.equal(ok.status, 200, 'the form token was not used up by the refused post');
  });

  it("a user's http in node on the page's path, before or after it in the flow: the page stands back and says so", async function () {
    for (const where of ['before', 'after'] as const) {
      const user: Msg[] = [
        { id: 'in', type: 'http in', url: '/lh-answer', method: 'get', wires: [['res']] },
        { id: 'res', type: 'http response', statusCode: '200' },
      ];
      await load(where === 'before' ? user : [], where === 'after' ? user : []);
      const answered = await fetchText(`${web.url}/lh-answer?hello=1`);
      assert.equal(answered.status, 200, `${where}: the user's route answers`);
      assert.match(answered.text, /hello/);
      const post = await fetchText(`${web.url}/lh-answer`, { form: { t: 'x' } });
      assert.equal(post.status, 404, `${where}: the page took nothing over`);
      await helper.unload();
    }
  });

  it('a route added by a later deploy (page not restarted): status and log say so once; freed, the page serves again', async function () {
    const server = bServerFlow(sim, { withB: false });
    const credentials = { ...server.credentials, page: { secret: 'load-test-secret' } };
    const base = [...server.nodes, page(), { id: 'out', type: 'helper' }, { id: 'audit', type: 'helper' }];
    await loadWithPage(base, credentials, [coreHttpIn]);
    assert.equal((await fetchText(`${web.url}/lh-answer`, { form: { t: 'x' } })).status, 403, 'the page serves its path');

    const clashStatus = statusWhere(
      'page',
      (s) => s.fill === 'red' && /lh-answer-page\.errors\.clash|another route/.test(String(s.text)),
    );
    const user: Msg[] = [
      { id: 'in', type: 'http in', url: '/:anything', method: 'post', wires: [['res']] },
      { id: 'res', type: 'http response', statusCode: '204' },
    ];
    await helper.setFlows([...base, ...user] as never, 'nodes', credentials as never); // only the new nodes start
    await clashStatus;
    assert.equal(
      (await fetchText(`${web.url}/lh-answer`, { form: { t: 'x' } })).status,
      204,
      "the user's route keeps its requests",
    );
    const logged = (helper as unknown as { log(): { args: { level: number; msg: unknown }[][] } })
      .log()
      .args.map((a) => a[0])
      .filter((c) => String(c.msg).startsWith('lh-answer-page.errors.clash'));
    assert.equal(logged.length, 1, 'said once');
    // while the page stands back, it hands out no link to a path that leads to the user's route
    const error = sim.injectPendingError({ id: '21', title: 'Clot detected' });
    const passed = nextMessage(helper.getNode('out'));
    helper.getNode('page').receive({ payload: error, source: 'A', event: 'raised', notification: 'Clot detected' });
    const msg = await passed;
    assert.equal(msg.answerUrl, undefined, 'no link while the path is taken');
    assert.equal(msg.notification, 'Clot detected', 'the notification still goes out, without a link');

    const ready = statusWhere('page', (s) => String(s.text).includes('ready'));
    await helper.setFlows(base as never, 'nodes', credentials as never);
    await ready;
    assert.equal((await fetchText(`${web.url}/lh-answer`, { form: { t: 'x' } })).status, 403, 'the page serves its path again');
  });
});

describe('answer page pieces (properties)', function () {
  it('form tokens: any number of issued tokens for other errors never stops a token from being used once', function () {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 5000 }),
        fc.array(fc.string({ maxLength: 8 }), { maxLength: 20 }),
        (views, others) => {
          let now = 1_700_000_000_000;
          const forms = new FormTokens(() => now);
          const mine = forms.issue('7');
          for (let i = 0; i < views; i++) forms.issue(others[i % Math.max(1, others.length)] ?? 'other');
          now += 60_000;
          assert.equal(forms.size, 0, 'issuing stores nothing');
          assert.equal(forms.use(mine, '8'), false, 'bound to its error');
          assert.equal(forms.use(mine, '7'), true);
          assert.equal(forms.use(mine, '7'), false, 'once');
        },
      ),
      { numRuns: 30 },
    );
  });

  it('form tokens: altered, foreign, expired and junk tokens are refused; the used-set stays bounded', function () {
    let now = 1_700_000_000_000;
    const forms = new FormTokens(() => now);
    const other = new FormTokens(() => now);
    fc.assert(
      fc.property(fc.string({ maxLength: 120 }), fc.integer({ min: 0, max: 60 }), (junk, pos) => {
        const token = forms.issue('e');
        assert.equal(forms.use(junk, 'e'), false);
        const flipped = token.slice(0, pos) + (token[pos] === 'a' ? 'b' : 'a') + token.slice(pos + 1);
        if (flipped !== token) assert.equal(forms.use(flipped, 'e'), false, 'altered');
        assert.equal(other.use(token, 'e'), false, 'another node instance');
      }),
    );
    const old = forms.issue('e');
    now += FORM_TOKEN_LIFETIME_MS;
    assert.equal(forms.use(old, 'e'), false, 'expired');
    for (let i = 0; i < MAX_USED_PER_ERROR; i++) assert.equal(forms.use(forms.issue('busy'), 'busy'), true);
    assert.equal(forms.use(forms.issue('busy'), 'busy'), false, "one error's share full: its next form is refused");
    assert.equal(forms.use(forms.issue('calm'), 'calm'), true, "another error's form still works");
    for (let i = forms.size; i < MAX_USED_TOKENS; i++) assert.equal(forms.use(forms.issue(String(i)), String(i)), true);
    assert.equal(forms.use(forms.issue('x'), 'x'), false, 'full of live used tokens: refused, never forgetting one');
    now += FORM_TOKEN_LIFETIME_MS;
    assert.equal(forms.use(forms.issue('y'), 'y'), true, 'expired entries make room');
    assert.ok(forms.size <= MAX_USED_TOKENS);
  });

  it('form tokens, property: under any clock steps, uses and replays, the used-set answers as a set pruned on every use would (it walks only once an entry expired)', function () {
    const step = fc.oneof(
      fc.record({ advance: fc.integer({ min: 0, max: FORM_TOKEN_LIFETIME_MS / 2 }) }),
      fc.record({ use: fc.constantFrom('a', 'b', 'c'), replay: fc.boolean() }),
    );
    fc.assert(
      fc.property(fc.array(step, { maxLength: 120 }), (steps) => {
        let now = 1_700_000_000_000;
        const forms = new FormTokens(() => now);
        // the model: every used token with its expiry, pruned at each use of a fresh token
        const model = new Map<string, { error: string; expires: number }>();
        const issued: { token: string; error: string }[] = [];
        for (const s of steps) {
          if ('advance' in s) {
            now += s.advance;
            continue;
          }
          const pick = s.replay && issued.length > 0 ? issued[issued.length - 1] : undefined;
          const { token, error } = pick ?? { token: forms.issue(s.use), error: s.use };
          issued.push({ token, error });
          const at = parseInt(token.split('.')[0], 36);
          const live = at + FORM_TOKEN_LIFETIME_MS > now;
          // an expired or already used token is refused before the set is pruned: only a fresh one's use prunes it
          const fresh = live && !model.has(token);
          if (fresh) for (const [mac, e] of model) if (e.expires <= now) model.delete(mac);
          assert.equal(forms.use(token, error), fresh, `use of ${pick ? 'a replayed' : 'a new'} token at +${now - at} ms`);
          if (fresh) model.set(token, { error, expires: at + FORM_TOKEN_LIFETIME_MS });
          assert.equal(forms.size, model.size);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('recent lists: any burst of views within the interval is one read; failures are shared too', async function () {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.integer({ min: 0, max: 5000 }), { minLength: 1, maxLength: 300 }), async (gaps) => {
        let now = 0;
        let reads = 0;
        const lists = new RecentLists<string, number[]>(2000, () => now);
        for (const gap of gaps) {
          now += gap;
          await lists
            .get('A', async () => {
              reads++;
              if (reads % 3 === 0) throw new Error('down');
              return [reads];
            })
            .catch(() => undefined);
        }
        assert.ok(reads <= Math.floor(now / 2000) + 1, `${reads} reads over ${now} ms`);
      }),
    );
  });

  it('recent lists: a list read before a link was made is never used for it (no false "no longer pending")', async function () {
    let now = 10_000;
    let reads = 0;
    const lists = new RecentLists<string, number[]>(2000, () => now);
    const read = async (): Promise<number[]> => [++reads];
    assert.deepEqual(await lists.get('A', read), [1]);
    now += 100;
    assert.deepEqual(await lists.get('A', read, now - 500), [1], 'read after the link: shared');
    assert.deepEqual(await lists.get('A', read, now), [2], 'the link is newer than the list: read afresh');
    assert.deepEqual(await lists.get('A', read, now), [2], 'and that read is shared from then on');
  });

  it('route clash: reported exactly when Express would route the page path to the other route', async function () {
    const segment = fc.constantFrom(
      'lh-answer',
      'LH-Answer',
      ':x',
      ':x?',
      'lh-answer/',
      'lh-*',
      'other',
      'lh-answer/:id',
      '*',
      'lh-answe(r)?',
    );
    await fc.assert(
      fc.asyncProperty(segment, fc.constantFrom('get', 'post', 'put'), async (userPath, method) => {
        const app = express();
        let reached = false;
        (app as unknown as Record<string, (p: string, h: express.RequestHandler) => void>)[method](
          `/${userPath}`,
          (_req, res) => {
            reached = true;
            res.end();
          },
        );
        const server = http.createServer(app);
        await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
        const port = (server.address() as AddressInfo).port;
        const status = async (m: string): Promise<void> =>
          new Promise((resolve) => {
            http
              .request({ host: '127.0.0.1', port, path: '/lh-answer', method: m, agent: false }, (res) => {
                res.resume();
                res.on('end', () => resolve());
              })
              .end();
          });
        await status('GET');
        await status('POST');
        server.close();
        const clash = routeClash({ httpNode: app, settings: {} } as unknown as Red, '/lh-answer');
        assert.equal(clash !== undefined, reached, `/${userPath} ${method}: clash ${clash}, Express routed: ${reached}`);
      }),
      { numRuns: 60 },
    );
  });
});
